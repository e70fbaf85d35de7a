package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/audit/evidence"
)

type rewrapReport struct {
	Rewrapped, Current, Remaining, Unreadable struct{ Blobs, Sessions int }
	Rounds                                    int
}

// The master key replaced while serving (docs/OPERATIONS.md, Rotating
// keys): `oml-server rotate-master-key` writes the new key and keeps the
// address key; replicas rolled onto it read content wrapped before;
// `oml-server rewrap` moves every stored data key, blob and open upload,
// journalled; the old key is retired and everything still reads, the
// half-done upload finishes, and equal content keeps its address.
func TestMasterKeyRotation(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)

	// Before: content bound to a claim, and an upload one part of two in.
	_, data, digest := randomFile(t, 1<<20)
	ses := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	if done := decode[uploadSession](t, s.putPart(t, tm.writer.Token, ses.UploadSession, 1, data), 200); done.State != "complete" {
		t.Fatalf("upload: %+v", done)
	}
	rem := toolJSON[remembered](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_remember", map[string]any{
		"workarea": tm.crew.ID, "claim_key": "quote-am-7741", "text": "Accra Metals quote AM-7741, scanned original attached.",
		"attachments": []map[string]string{{"upload_session": ses.UploadSession}},
	})
	download := "/v1/artifacts/" + rem.ArtifactID + "/attachments/" + digest
	readBack := func(when string) {
		t.Helper()
		if r := s.do(t, "GET", download, tm.writer.Token, nil); r.Status != 200 || !bytes.Equal(r.Body, data) {
			t.Fatalf("%s: download %d, %d bytes", when, r.Status, len(r.Body))
		}
	}
	readBack("before the rotation")
	_, half, halfDigest := randomFile(t, 6<<20)
	open := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(half), halfDigest), 201)
	decode[uploadSession](t, s.putPart(t, tm.writer.Token, open.UploadSession, 1, half[:5<<20]), 200)
	var address string
	s.scan(t, `SELECT address FROM attachments.blobs`, &address)

	// Rotate and roll: the new key wraps, the old one still unwraps.
	lines := strings.Split(strings.TrimSpace(s.run(t, "rotate-master-key", "--dir", filepath.Join(t.TempDir(), "keys-2"))), "\n")
	if len(lines) != 3 {
		t.Fatalf("rotate-master-key printed %q", lines)
	}
	s.stop(t)
	for _, kv := range lines {
		name, value, _ := strings.Cut(kv, "=")
		s.setEnv(name, value)
	}
	s.launch(t)
	readBack("rolled onto the new key")

	var rep rewrapReport
	if err := json.Unmarshal([]byte(s.run(t, "rewrap", "--batch", "1")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Rewrapped.Blobs != 1 || rep.Rewrapped.Sessions != 1 || rep.Remaining.Blobs+rep.Remaining.Sessions != 0 ||
		rep.Unreadable.Blobs+rep.Unreadable.Sessions != 0 || rep.Current.Blobs != 1 || rep.Current.Sessions != 1 {
		t.Fatalf("rewrap: %+v", rep)
	}
	if n := s.count(t, `SELECT count(*) FROM platform.journal_events WHERE event_type = 'attachment.rewrap'`); n != 2 {
		t.Fatalf("rewrap journalled %d events, want one per transaction that moved keys", n)
	}
	if err := json.Unmarshal([]byte(s.run(t, "rewrap", "--check")), &rep); err != nil || rep.Rewrapped.Blobs+rep.Rewrapped.Sessions != 0 {
		t.Fatalf("check after rewrap: %+v %v", rep, err)
	}

	// Retire the old key: everything reads, the upload finishes, and the
	// same content uploaded again lands on the same address.
	s.stop(t)
	s.setEnv("OML_PREVIOUS_MASTER_KEY_FILES", "")
	s.launch(t)
	readBack("after the old key is retired")
	if done := decode[uploadSession](t, s.putPart(t, tm.writer.Token, open.UploadSession, 2, half[5<<20:]), 200); done.State != "complete" {
		t.Fatalf("the upload begun under the old key: %+v", done)
	}
	again := decode[uploadSession](t, s.openUpload(t, tm.writer.Token, len(data), digest), 201)
	var againAddress string
	s.scan(t, `SELECT address FROM attachments.sessions WHERE id = '`+again.UploadSession+`'`, &againAddress)
	if againAddress != address {
		t.Fatal("equal content changed address with the master key")
	}
	if out := s.mustOML(t, s.AdminKey, "admin", "journal", "verify"); !strings.Contains(out, "ok") {
		t.Errorf("journal verify: %s", out)
	}

	// A key missing from the configuration is named, not skipped: with
	// another master key and no previous one nothing opens.
	other := filepath.Join(t.TempDir(), "keys-3")
	s.run(t, "keygen", "--dir", other)
	cmd := exec.Command(bins.server, "rewrap", "--check")
	cmd.Env = append(append([]string{}, s.env...), "OML_MASTER_KEY_FILE="+filepath.Join(other, "master.key"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err == nil || !strings.Contains(stderr.String(), "open under no configured master key") {
		t.Fatalf("rewrap --check under a foreign key: %v %s %s", err, out, stderr.String())
	}
	// A replica whose address key is not the data's refuses to start:
	// the new master alone would put equal content on another address,
	// and an address file that holds a master key is named as such.
	for name, env := range map[string][]string{
		"without the address key": {"OML_ADDRESS_KEY_FILE="},
		"a master key as address": {"OML_ADDRESS_KEY_FILE=" + strings.TrimPrefix(lines[0], "OML_MASTER_KEY_FILE=")},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bins.server, "serve")
		cmd.Env = append(append(append([]string{}, s.env...), "OML_LISTEN="+freePort(t)), env...)
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || timedOut || !strings.Contains(string(out), "OML_ADDRESS_KEY_FILE") && !strings.Contains(string(out), "holds a master key") {
			t.Fatalf("serve %s: %v\n%s", name, err, out)
		}
	}
	// Previous keys without the address key would move content: refused.
	cmd = exec.Command(bins.server, "rewrap", "--check")
	cmd.Env = append(append([]string{}, s.env...), "OML_PREVIOUS_MASTER_KEY_FILES="+filepath.Join(other, "master.key"), "OML_ADDRESS_KEY_FILE=")
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "OML_ADDRESS_KEY_FILE") {
		t.Fatalf("previous keys without the address key: %v %s", err, stderr.String())
	}
}

// The signing key replaced: envelopes signed before stay verifiable with
// the old public key beside the new one, and only with it.
func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	tm := newTeam(t, s)
	publicKey := func() string {
		return decode[struct {
			PublicKey string `json:"public_key"`
		}](t, s.do(t, "GET", "/v1/signing-key", tm.reader.Token, nil), 200).PublicKey
	}
	remember := func(key, text string) {
		toolJSON[remembered](t, s.mcpSession(t, tm.writer.Token, "2025-11-25"), "oml_remember",
			map[string]any{"workarea": tm.crew.ID, "claim_key": key, "text": text})
	}
	remember("before", "Accra quoted 412 USD/t.")
	old := publicKey()
	dir := filepath.Join(t.TempDir(), "keys-2")
	s.run(t, "keygen", "--dir", dir)
	s.stop(t)
	s.setEnv("OML_SIGNING_KEY_FILE", filepath.Join(dir, "signing.key"))
	s.launch(t)
	remember("after", "Tema quoted 398 USD/t.")
	current := publicKey()
	if current == old {
		t.Fatal("the signing key did not change")
	}
	file := filepath.Join(t.TempDir(), "evidence.json")
	s.mustOML(t, s.AdminKey, "evidence", "export", "--workarea", "universe.procurement", "--out", file)
	if stdout, _, err := s.oml(t, s.AdminKey, "evidence", "verify", file, "--signing-key", current); err == nil ||
		!strings.Contains(stdout, "FAIL submission:") {
		t.Fatalf("verify without the old key: %v %s", err, stdout)
	}
	if out := s.mustOML(t, s.AdminKey, "evidence", "verify", file, "--signing-key", current, "--previous-signing-key", old); !strings.Contains(out, "OK") {
		t.Fatalf("verify with the old key beside the new: %s", out)
	}
	// A key of the wrong length is a problem reported, not a panic.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f evidence.File
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	currentKey, _ := base64.StdEncoding.DecodeString(current)
	for _, keys := range [][]ed25519.PublicKey{{ed25519.PublicKey("short")}, {currentKey, ed25519.PublicKey("short")}} {
		if rep := evidence.Verify(&f, keys[0], keys[1:]...); rep.OK || len(rep.Problems) == 0 {
			t.Fatalf("verify with a malformed key: %+v", rep)
		}
	}
	// The old key alone signs no export made after the rotation.
	if _, _, err := s.oml(t, s.AdminKey, "evidence", "verify", file, "--signing-key", old); err == nil {
		t.Fatal("the export verified with the retired key")
	}
	if _, stderr, err := s.oml(t, s.AdminKey, "evidence", "verify", file, "--signing-key", current, "--previous-signing-key", "AAAA"); err == nil ||
		!strings.Contains(stderr, "not a base64 Ed25519 public key") {
		t.Fatalf("a malformed previous key: %v %s", err, stderr)
	}
}
