package canonjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCanonicalize: Canonicalize answers as decoded (the decoding into Go values) does
// (the same bytes or a refusal); any document it accepts comes out valid
// JSON, canonical (a second pass changes nothing) and meaning the same;
// nothing panics. The journal's hashes and the signed envelopes rest on
// this.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `null`, `{"b":1,"a":[true,false,null]}`, `{"n":1e400}`, `{"n":-0.0}`,
		`{"s":"\u00e9\ud83d\ude00\u2028"}`, `{"n":123456789012345678901234567890}`, `"\ud800"`, `{"a":{"a":{"a":[1,2.5,-3e-7]}}}`,
		`{"x":"<>&\u0000"}`, `1.0000000000000000001`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		agree(t, raw) // the one-pass parser answers as the decoding it replaced
		out, err := Canonicalize(raw)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form of %q is not JSON: %q", raw, out)
		}
		again, err := Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", raw, out, again, err)
		}
	})
}
