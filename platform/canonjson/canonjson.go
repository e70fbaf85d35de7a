// Package canonjson encodes values as canonical JSON in the manner of
// RFC 8785 (JCS): object members sorted by UTF-16 code units, no
// insignificant whitespace, numbers in their shortest ECMAScript form and
// minimal string escaping. Two encodings of equal values are equal bytes,
// whatever produced the input (Go structs, or jsonb read back from Postgres),
// which is what the journal hash and request hashes need.
package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal returns the canonical encoding of v. v is first encoded with
// encoding/json, so struct tags apply.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonjson: encode: %w", err)
	}
	return Canonicalize(raw)
}

// Canonicalize re-encodes one JSON document canonically. It reads the
// first value as encoding/json's Decoder does (what follows it is left
// unread) in one pass (parser).
func Canonicalize(raw []byte) ([]byte, error) {
	p := parser{in: raw, out: make([]byte, 0, len(raw))}
	err := p.value()
	switch {
	case errors.Is(err, errDeep):
		return decoded(raw)
	case err != nil:
		return nil, err
	case p.bad > 0:
		return nil, p.badErr
	}
	return p.out, nil
}

// decoded is Canonicalize by way of Go values: encoding/json's Decoder
// (which refuses nesting past 10,000), then the values written out. The
// one-pass parser is held to it (TestCanonicalizeMatchesDecoded) and
// leaves it the deep documents.
func decoded(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonjson: decode: %w", err)
	}
	var b bytes.Buffer
	if err := writeValue(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return fmt.Errorf("canonjson: number %s: %w", x, err)
		}
		s, err := formatNumber(f)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case string:
		b.Write(AppendString(b.AvailableBuffer(), x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(AppendString(b.AvailableBuffer(), k))
			b.WriteByte(':')
			if err := writeValue(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("canonjson: unexpected %T", v)
	}
	return nil
}

// formatNumber renders f as ECMAScript's Number.prototype.toString does.
func formatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("canonjson: %v is not representable in JSON", f)
	}
	if f == 0 {
		return "0", nil
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits and the decimal exponent n such that
	// f = 0.digits × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	n, k := exp+1, len(digits)
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		m := digits[:1]
		if k > 1 {
			m += "." + digits[1:]
		}
		es := strconv.Itoa(n - 1)
		if n-1 >= 0 {
			es = "+" + es
		}
		s = m + "e" + es
	}
	return sign + s, nil
}

// AppendString appends s to dst as a canonical JSON string: quoted, with
// only '"', '\\' and the control characters escaped (the short forms
// where JSON has them).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// sorts object members, without encoding them: the two orders differ from
// UTF-8's byte order only where a rune past U+FFFF (a surrogate pair,
// D800–DBFF first) meets one in E000–FFFF.
func compareUTF16(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		if a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] != b[0] {
				return int(a[0]) - int(b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if ua, ub := firstUnit(ra), firstUnit(rb); ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb) // both past U+FFFF: the second units decide
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// firstUnit is r's first UTF-16 code unit. Two different runes with the
// same first unit are both past U+FFFF, where the order of their second
// units is theirs.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xd800 + (r-0x10000)>>10
	}
	return r
}
