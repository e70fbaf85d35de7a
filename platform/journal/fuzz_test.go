package journal

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzRecordHash: an event's subject and payload hash the same however
// the stored JSON is re-rendered (jsonb reorders keys and re-escapes), so
// `oml admin journal verify` recomputes what Append wrote; never a panic.
func FuzzRecordHash(f *testing.F) {
	for _, s := range []string{`{}`, `{"artifact_id":"art_1","claim_key":"c","version":2}`, `{"b":[1,2.50,{"z":null,"a":"\u00e9"}],"a":"<&>"}`,
		`{"n":1e21,"m":1e-7,"k":-0}`, `{"s":"\ud83d\ude00\u2028"}`, `[]`, `null`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		sub, err := object(v)
		if err != nil {
			return
		}
		rec := record{TenantID: "tn_1", Seq: 7, EventID: "evt_1", Type: "x.y", At: time.Unix(1, 0).UTC(), Subject: sub, Payload: sub}
		h1, err := rec.hash(genesis)
		if err != nil {
			t.Fatal(err)
		}
		// Read back as jsonb would give it: re-rendered, keys reordered.
		var back any
		if err := json.Unmarshal(sub, &back); err != nil {
			t.Fatalf("stored form %q does not parse: %v", sub, err)
		}
		rendered, _ := json.MarshalIndent(back, "", "  ")
		var again any
		_ = json.Unmarshal(rendered, &again)
		sub2, err := object(again)
		if err != nil || !bytes.Equal(sub, sub2) {
			t.Fatalf("%q → %q → %q (%v)", raw, sub, sub2, err)
		}
		rec.Subject, rec.Payload = sub2, sub2
		if h2, _ := rec.hash(genesis); !bytes.Equal(h1, h2) {
			t.Fatalf("hash changed on re-rendering %q", raw)
		}
	})
}
