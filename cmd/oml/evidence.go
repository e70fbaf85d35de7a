package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/omlhub/oml/contexts/audit/evidence"
)

// evidenceCmd runs `oml evidence export` and `oml evidence verify`.
func (c *cli) evidenceCmd(ctx context.Context, args []string) error {
	verb, rest, err := c.subcommand("evidence", args, "export or verify")
	if err != nil {
		return err
	}
	switch verb {
	case "export":
		fs := c.flags("evidence export", "--workarea ID|PATH [--from T] [--to T] [--out FILE]")
		workarea := fs.String("workarea", "", "the subtree's root (admin on it)")
		from := fs.String("from", "", "start of the range, RFC 3339 (default: the beginning)")
		to := fs.String("to", "", "end of the range, RFC 3339 (default: now)")
		out := fs.String("out", "", "write the file here (default: standard output)")
		if _, err := parse(fs, rest, 0); err != nil {
			return err
		}
		if *workarea == "" {
			return errors.New("evidence export: --workarea is required")
		}
		q := url.Values{"workarea": {*workarea}}
		if *from != "" {
			q.Set("from", *from)
		}
		if *to != "" {
			q.Set("to", *to)
		}
		api, err := c.api()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := api.do(ctx, http.MethodGet, "/v1/evidence?"+q.Encode(), nil, &raw); err != nil {
			return err
		}
		if *out == "" {
			_, err := c.stdout.Write(append(raw, '\n'))
			return err
		}
		if err := os.WriteFile(*out, raw, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "wrote %s (%d bytes)\n", *out, len(raw))
		return nil
	case "verify":
		fs := c.flags("evidence verify", "FILE --signing-key BASE64 [--previous-signing-key BASE64]...")
		key := fs.String("signing-key", "", "the deployment's public key, obtained from a trusted channel (GET /v1/signing-key); required")
		var previous []ed25519.PublicKey
		fs.Func("previous-signing-key", "a public key the deployment signed with before a rotation (repeatable): envelopes may verify with it", func(v string) error {
			pub, err := base64.StdEncoding.DecodeString(v)
			if err != nil || len(pub) != ed25519.PublicKeySize {
				return errors.New("not a base64 Ed25519 public key")
			}
			previous = append(previous, ed25519.PublicKey(pub))
			return nil
		})
		pos, err := parse(fs, rest, 1)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		var f evidence.File
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("evidence verify: %s is not an evidence file: %w", pos[0], err)
		}
		if *key == "" {
			return errors.New("evidence verify: --signing-key is required: a file's own key proves nothing (get the deployment's from GET /v1/signing-key)")
		}
		pub, err := base64.StdEncoding.DecodeString(*key)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return errors.New("evidence verify: the signing key is not a base64 Ed25519 public key")
		}
		rep := evidence.Verify(&f, ed25519.PublicKey(pub), previous...)
		if c.json {
			if err := printValue(c.stdout, rep); err != nil {
				return err
			}
		} else {
			for _, p := range rep.Problems {
				fmt.Fprintf(c.stdout, "FAIL %s: %s\n", p.Record, p.Reason)
			}
			fmt.Fprintf(c.stdout, "%d submissions, %d serves, %d journal events (%d redacted), %d flagged reciprocal pairs\n",
				rep.Submissions, rep.Serves, rep.Events, rep.Redacted, rep.Flagged)
			if rep.OK {
				fmt.Fprintln(c.stdout, "OK: every signature, record and link verifies")
			}
		}
		if !rep.OK {
			return fmt.Errorf("evidence verify: %d problems", len(rep.Problems))
		}
		return nil
	}
	return c.unknownSubcommand("evidence", verb, "export or verify")
}
