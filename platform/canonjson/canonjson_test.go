package canonjson

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestCanonicalize(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"sorted keys", `{"b":1,"a":{"d":[1,2],"c":null}}`, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{"whitespace", "{ \"a\" :\n true }", `{"a":true}`},
		{"numbers", `[1.0, 1e2, 0.000001, 1e-7, 1e21, 123456789012, -0.5, 0]`, `[1,100,0.000001,1e-7,1e+21,123456789012,-0.5,0]`},
		{"strings", `"a\u0041\u00e9\n\u0001<>&"`, `"aAé\n\u0001<>&"`},
		{"utf16 order", `{"\ud83d\ude00":1,"\ufb01":2}`, `{"😀":1,"ﬁ":2}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonicalize([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestMarshalStruct(t *testing.T) {
	t.Parallel()
	type s struct {
		Z string `json:"z"`
		A int    `json:"a"`
	}
	got, err := Marshal(s{Z: "x", A: 3})
	if err != nil || string(got) != `{"a":3,"z":"x"}` {
		t.Fatalf("got %s, %v", got, err)
	}
}

// The reference forms the faster ones replaced: UTF-16 order by encoding
// both strings, and a string written rune by rune.
func compareUTF16Encoded(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func writeStringByRune(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// Strings from an alphabet that meets every edge of the two orders
// (ASCII, the surrogate pairs' neighbours, U+FFFD, invalid bytes) sort
// and encode as the reference forms do.
func TestCompareAndStringsMatchTheReference(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", "b", "\x00", "\x1f", "\b", "\f", "\r", "\t", "\"", "\\", "\n", "\x7f", "é", "\u07ff", "\u0800", "\ud7ff", "\ue000",
		"\ufb01", "\ufffd", "\uffff", "\U00010000", "\U0001f600", "\U0001f601", "\U0010ffff", "\xff", "\xc3", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var sb strings.Builder
		for range rng.IntN(5) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return sb.String()
	}
	sign := func(n int) int { return max(-1, min(1, n)) }
	for range 200_000 {
		a, b := word(), word()
		if got, want := sign(compareUTF16(a, b)), sign(compareUTF16Encoded(a, b)); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
		var ref bytes.Buffer
		writeStringByRune(&ref, a)
		if got := AppendString(nil, a); !bytes.Equal(got, ref.Bytes()) {
			t.Fatalf("AppendString(%q) = %q, want %q", a, got, ref.Bytes())
		}
	}
}

// agree checks Canonicalize against decoded, the decoding into Go values
// it replaced (whose sort and strings TestCompareAndStringsMatchTheReference
// holds to the forms before), on one input: the same refusal or the same
// bytes.
func agree(t *testing.T, in []byte) {
	t.Helper()
	got, gerr := Canonicalize(in)
	want, werr := decoded(in)
	if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Canonicalize(%q) = %q (%v), decoded %q (%v)", in, got, gerr, want, werr)
	}
}

// Random documents, written with every freedom JSON allows (whitespace,
// escapes, surrogates lone and paired, bytes that are not UTF-8, repeated
// keys, every number form), and the same cut short or with a byte
// changed, come out as decoded writes them, or are refused as it refuses them.
func TestCanonicalizeMatchesDecoded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	ws := func() string { return pick("", "", " ", "\n\t ", "\r") }
	str := func() string {
		var sb strings.Builder
		sb.WriteByte('"')
		for range rng.IntN(5) {
			sb.WriteString(pick("a", "k", "é", "\U0001f600", "\ufb01", `\"`, `\\`, `\/`, `\b`, `\n`, `\u0041`, `\u00e9`, `\u0000`,
				`\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, `\uDBFF\uDFFF`, "\xff", "\xc3", "\x7f", "<&>", "\u2028"))
		}
		sb.WriteByte('"')
		return sb.String()
	}
	num := func() string {
		return pick("0", "-0", "1", "-1", "10", "1.5", "-0.25", "1e2", "1E+2", "1e-7", "2.50e-3", "1e21", "123456789012345678901234567890",
			"0.000001", "1e400", "-1e400", "1e-400", "9007199254740993", "5e-324")
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch k := rng.IntN(8); {
		case depth > 3 || k < 2:
			return str()
		case k == 2:
			return num()
		case k == 3:
			return pick("true", "false", "null")
		case k == 4:
			var parts []string
			for range rng.IntN(4) {
				parts = append(parts, ws()+value(depth+1)+ws())
			}
			return "[" + strings.Join(parts, ",") + ws() + "]"
		default:
			var parts []string
			keys := []string{str(), str(), `"a"`, `"a"`}
			for range rng.IntN(5) {
				parts = append(parts, ws()+keys[rng.IntN(len(keys))]+ws()+":"+ws()+value(depth+1)+ws())
			}
			return "{" + strings.Join(parts, ",") + ws() + "}"
		}
	}
	for range 30_000 {
		doc := []byte(ws() + value(0) + ws() + pick("", "", "x", " 1", "}", "tail"))
		agree(t, doc)
		if len(doc) > 0 {
			agree(t, doc[:rng.IntN(len(doc))])
			bad := bytes.Clone(doc)
			bad[rng.IntN(len(bad))] = pick(`"`, `\`, "{", "]", ",", ":", "\x01", "e", "-", " ")[0]
			agree(t, bad)
		}
	}
	for _, doc := range []string{"", " ", "01", "[01]", "1.", "-", "1e", "1e+", "0.5.3", "truex", "nul", "[1,]", "{,}", `{"a"}`,
		`{"a":}`, `{"a":1,}`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01\"", strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
		// Past the one pass's depth, where decoded takes over, and at it.
		strings.Repeat(`{"a":`, 9990) + `"` + strings.Repeat("x", 900_000) + `"` + strings.Repeat("}", 9990),
		strings.Repeat(`{"b":1,"a":`, 40) + "1e400" + strings.Repeat("}", 40), strings.Repeat(`{"b":1,"a":`, 32) + `"\ud800"` + strings.Repeat("}", 32),
		strings.Repeat(`[{"b":1,"a":`, 16) + "2" + strings.Repeat("}]", 16), strings.Repeat(`[{"b":1,"a":`, 17) + "2" + strings.Repeat("}]", 17)} {
		agree(t, []byte(doc))
	}
}

// BenchmarkCanonicalize: a journal event's subject and payload as jsonb
// renders them, by the one-pass parser and by the decoding into Go values.
//
//	go test -run '^$' -bench Canonicalize ./platform/canonjson
func BenchmarkCanonicalize(b *testing.B) {
	doc := []byte(`{"kind": "memory", "verb": "remember", "version": 1, "claim_key": "mem_01jf8k2v9q", "artifact_id": "art_01jf8k2v9q7r3m", ` +
		`"workarea_id": "wa_01jf8k2v9q7r3m4n", "findings": [], "attachments": [{"sha256": "9f86d081884c7d659a2feaa0c55ad015", "size_bytes": 5}], ` +
		`"expires_at": "2026-12-07T12:00:00.123456Z", "self_signed": false, "required_approvals": 1}`)
	for _, c := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{{"one-pass", Canonicalize}, {"decoded", decoded}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
