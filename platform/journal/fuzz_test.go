package journal

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/omlhub/oml/platform/canonjson"
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

// An event's canonical form, written field by field, is canonjson.Marshal's
// byte for byte: over strings that need escaping or are not UTF-8, times
// in any precision, seqs up to JSON's exact integers, and canonical
// subjects and payloads of every shape. The chain's hashes rest on it.
func TestRecordCanonicalIsMarshal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 17))
	alphabet := []string{"a", "Z", "_", "0", "\x00", "\x1f", "\b", "\t", "\n", "\"", "\\", "<", "&", "\x7f", "é", "\u2028",
		"\ufffd", "\U0001f600", "\xff", "\xc3", "\xed\xa0\x80"}
	word := func() string {
		var sb strings.Builder
		for range rng.IntN(6) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return sb.String()
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(7); {
		case depth > 2 || k == 0:
			return word()
		case k == 1:
			return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		case k == 2:
			return rng.IntN(2) == 0
		case k == 3:
			return nil
		case k == 4:
			var a []any
			for range rng.IntN(3) {
				a = append(a, value(depth+1))
			}
			return a
		default:
			m := map[string]any{}
			for range rng.IntN(4) {
				m[word()] = value(depth + 1)
			}
			return m
		}
	}
	object := func() json.RawMessage {
		m := map[string]any{}
		for range rng.IntN(4) {
			m[word()] = value(0)
		}
		b, err := canonjson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := range 20_000 {
		r := record{
			TenantID: word(), Seq: rng.Int64N(1<<53 + 1), EventID: word(), Type: word(), Actor: word(), Workarea: word(),
			At:      time.Unix(rng.Int64N(1<<35), rng.Int64N(1e9)).UTC().Truncate(time.Duration(1) << rng.IntN(31)),
			Subject: object(), Payload: object(),
		}
		if i%100 == 0 {
			r.Subject, r.Payload = nil, nil // written as null by both
		}
		if i < 6 { // seqs at and past JSON's exact integers, as Marshal rounds them
			r.Seq = []int64{-1, 1 << 53, 1<<53 + 1, -(1 << 53) - 1, math.MaxInt64, math.MinInt64}[i]
		}
		want, werr := canonjson.Marshal(r)
		got, gerr := r.canonical()
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("record %+v:\n got %s (%v)\nwant %s (%v)", r, got, gerr, want, werr)
		}
	}
}

// One event's hash, pinned to the bytes the code before the one-pass
// canonical JSON (68a2574) computed: subject and payload read back from
// jsonb, and escapes, non-BMP keys, numbers and a DEL in a string. A
// change of the hashed form would break every stored chain.
func TestRecordHashIsPinned(t *testing.T) {
	t.Parallel()
	subject, err := canonjson.Canonicalize([]byte(`{"claim_key": "mem_1", "artifact_id": "art_01", "version": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := canonjson.Canonicalize([]byte(`{"text": "caf\u00e9 \"q\" \ud83d\ude00 <&>", "n": 1e21, "m": 0.000001, "z": [true, null, -0], "\ufb01": 1, "\ud83d\ude00": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	r := record{TenantID: "ten_01", Seq: 42, EventID: "evt_01jf8k", Type: "lifecycle.promote",
		At: time.Date(2026, 12, 7, 12, 0, 0, 123456000, time.UTC), Actor: "key_01\x7f", Workarea: "wa_01", Subject: subject, Payload: payload}
	prev := make([]byte, 32)
	prev[0] = 7
	h, err := r.hash(prev)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h); got != "c0e6adcd95d85c16b81b96b73defddfe42eea22d1651d52b67ea2e7f25a0af03" {
		t.Fatalf("the event hashes to %s, not what 68a2574 computed", got)
	}
}
