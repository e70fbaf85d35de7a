package app_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/omlhub/oml/contexts/attachments/internal/app"
	"github.com/omlhub/oml/contexts/attachments/internal/domain"
	"github.com/omlhub/oml/platform/errs"
)

// FuzzPutPart: the part handler takes any body, declared length, part
// number and integrity headers. It answers typed (never internal); a
// session completes only with exactly the expected bytes; a refused part
// records nothing (the session stays open with no part, or is aborted for
// a digest mismatch); and sending the same part again answers the same.
func FuzzPutPart(f *testing.F) {
	ref := bytes.Repeat([]byte("oml part "), 111)
	sum := md5.Sum(ref)
	sha := sha256.Sum256(ref)
	f.Add(ref, 1, int64(len(ref)), "", "")
	f.Add(ref, 1, int64(len(ref)), base64.StdEncoding.EncodeToString(sum[:]), "sha-256=:"+base64.StdEncoding.EncodeToString(sha[:])+":")
	f.Add(ref[:500], 1, int64(500), "", "")
	f.Add(ref, 2, int64(len(ref)), "", "")
	f.Add(append(bytes.Clone(ref[:len(ref)-1]), 'x'), 1, int64(len(ref)), "", "")
	f.Add(ref, 1, int64(-1), "AAAA", "sha-256=:!!:")
	f.Add(ref, 0, int64(1<<40), "", "md5=:x:")
	b := setup(f)
	i := 0
	f.Fuzz(func(t *testing.T, body []byte, n int, length int64, contentMD5, digest string) {
		i++
		ctx := as(fmt.Sprintf("fuzz%d", i))
		ses, err := b.svc.Open(ctx, domain.OpenRequest{MediaType: "text/plain", Size: int64(len(ref)), ExpectedDigest: digestOf(ref)})
		if err != nil {
			t.Fatal(err)
		}
		put := func() (domain.Session, error) {
			return b.svc.PutPart(ctx, app.Part{Session: ses.ID, N: n, Body: bytes.NewReader(body), Length: length,
				ContentMD5: contentMD5, ContentDigest: digest})
		}
		got, err := put()
		stored, serr := b.svc.Status(ctx, ses.ID)
		if serr != nil {
			t.Fatal(serr)
		}
		if err != nil {
			if e := errs.From(err); e.Code == errs.Internal {
				t.Fatalf("internal: %v", err)
			}
			switch {
			case stored.PartsReceived != 0:
				t.Fatalf("refused (%v) but recorded: %s", err, stored)
			case stored.State == domain.Aborted && bytes.Equal(body, ref):
				t.Fatalf("the expected bytes aborted the session: %v", err)
			case stored.State != domain.Open && stored.State != domain.Aborted:
				t.Fatalf("refused (%v), session %s", err, stored)
			}
			return
		}
		if got.State != domain.Complete || stored.State != domain.Complete || !bytes.Equal(body, ref) {
			t.Fatalf("accepted %d bytes (expected equal: %v): answered %s, stored %s", len(body), bytes.Equal(body, ref), got, stored)
		}
		if again, err := put(); err != nil || again.State != domain.Complete {
			t.Fatalf("the same part again: %s, %v", again, err)
		}
	})
}

func digestOf(b []byte) string { return digest(b) }
