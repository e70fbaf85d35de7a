package canonjson

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// onePassDepth bounds the nesting the parser takes on. Sorting an
// object's members moves the bytes of everything nested in it, so each
// level of nesting costs another copy of what lies inside: a document
// deeper than this goes to decoded instead, whose cost does not grow with
// its depth (a 1 MB document 10,000 objects deep took seconds here).
const onePassDepth = 32

// errDeep sends a document to decoded.
var errDeep = errors.New("canonjson: deeper than one pass takes")

// parser reads one JSON document and writes its canonical form as it
// goes, without building a tree of Go values: a string is copied, or
// unescaped only when it has escapes or bytes that are not UTF-8; an
// object's members are written in the order they come and then sorted in
// place. It accepts what encoding/json's Decoder accepts (one value, what
// follows it unread) and gives the same meaning: invalid UTF-8 and lone
// surrogates become U+FFFD, and of repeated keys the last one counts. A
// document nested deeper than onePassDepth is left to decoded.
type parser struct {
	in    []byte
	pos   int
	depth int
	out   []byte
	keys  []member // every open object's members, innermost last
	// scratch holds an object's members while they are written again
	// in order (one object at a time: its inner ones are done by then).
	scratch []byte
	// Numbers out of float64's range in what is written so far, and the
	// first one's error: one in a member a later key replaces is never
	// written, so it fails nothing (as with encoding/json's values).
	bad    int
	badErr error
}

// member is one object member written to out[start:end] as "key":value.
type member struct {
	key        string
	start, end int
	seq        int
	bad        int // numbers out of range in its value
}

var errEnd = errors.New("unexpected end of JSON input")

func (p *parser) fail(what string) error {
	if p.pos >= len(p.in) {
		return fmt.Errorf("canonjson: decode: %w", errEnd)
	}
	return fmt.Errorf("canonjson: decode: %s at offset %d", what, p.pos)
}

func (p *parser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() error {
	p.space()
	if p.pos >= len(p.in) {
		return p.fail("")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		if err != nil {
			return err
		}
		p.out = AppendString(p.out, s)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return p.fail("invalid character " + strconv.QuoteRune(rune(p.in[p.pos])) + " looking for beginning of value")
}

func (p *parser) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.in) || p.in[p.pos] != word[i] {
			return p.fail("invalid literal")
		}
		p.pos++
	}
	p.out = append(p.out, word...)
	return nil
}

func (p *parser) nest() error {
	if p.depth++; p.depth > onePassDepth {
		return errDeep
	}
	return nil
}

// enter reads and writes the opening bracket at p.pos, and reports
// whether the closing one follows at once (then read and written too).
func (p *parser) enter(open, close byte) (empty bool, err error) {
	if err := p.nest(); err != nil {
		return false, err
	}
	p.pos++
	p.out = append(p.out, open)
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == close {
		p.pos++
		p.depth--
		p.out = append(p.out, close)
		return true, nil
	}
	return false, nil
}

// next reads what follows an element: a comma (more is true) or the
// closing bracket, which the caller writes.
func (p *parser) next(close byte, what string) (more bool, err error) {
	p.space()
	switch {
	case p.pos >= len(p.in):
		return false, p.fail("")
	case p.in[p.pos] == ',':
		p.pos++
		return true, nil
	case p.in[p.pos] == close:
		p.pos++
		p.depth--
		return false, nil
	}
	return false, p.fail("invalid character after " + what)
}

func (p *parser) array() error {
	if empty, err := p.enter('[', ']'); err != nil || empty {
		return err
	}
	for n := 0; ; n++ {
		if n > 0 {
			p.out = append(p.out, ',')
		}
		if err := p.value(); err != nil {
			return err
		}
		if more, err := p.next(']', "array element"); err != nil {
			return err
		} else if !more {
			p.out = append(p.out, ']')
			return nil
		}
	}
}

func (p *parser) object() error {
	open, first := len(p.out), len(p.keys)
	if empty, err := p.enter('{', '}'); err != nil || empty {
		return err
	}
	for n := 0; ; n++ {
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return p.fail("invalid character looking for beginning of object key string")
		}
		key, err := p.string()
		if err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.fail("invalid character after object key")
		}
		p.pos++
		if n > 0 {
			p.out = append(p.out, ',')
		}
		start, bad := len(p.out), p.bad
		p.out = AppendString(p.out, key)
		p.out = append(p.out, ':')
		if err := p.value(); err != nil {
			return err
		}
		p.keys = append(p.keys, member{key: key, start: start, end: len(p.out), seq: n, bad: p.bad - bad})
		more, err := p.next('}', "object key:value pair")
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	p.sortMembers(open, p.keys[first:])
	p.out = append(p.out, '}')
	p.keys = p.keys[:first]
	return nil
}

// sortMembers writes the members of the object whose brace is at
// out[open] again, sorted, the last of equal keys kept; members already
// in order, with no key repeated, stay where they are.
func (p *parser) sortMembers(open int, ms []member) {
	inOrder := true
	for i := 1; i < len(ms) && inOrder; i++ {
		inOrder = compareUTF16(ms[i-1].key, ms[i].key) < 0
	}
	if inOrder {
		return
	}
	slices.SortFunc(ms, func(a, b member) int {
		if c := compareUTF16(a.key, b.key); c != 0 {
			return c
		}
		return b.seq - a.seq // the last one first
	})
	p.scratch = append(p.scratch[:0], p.out[open+1:]...)
	p.out = p.out[:open+1]
	for i, m := range ms {
		if i > 0 && m.key == ms[i-1].key {
			p.bad -= m.bad
			continue
		}
		if len(p.out) > open+1 {
			p.out = append(p.out, ',')
		}
		p.out = append(p.out, p.scratch[m.start-open-1:m.end-open-1]...)
	}
}

// string reads a JSON string at p.pos and returns its value.
func (p *parser) string() (string, error) {
	p.pos++ // '"'
	start := p.pos
	plain := true
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			raw := p.in[start:p.pos]
			p.pos++
			if plain {
				return string(raw), nil
			}
			return unquote(raw), nil
		case c == '\\':
			plain = false
			p.pos++
			if p.pos >= len(p.in) {
				return "", p.fail("")
			}
			switch p.in[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				p.pos++
				for range 4 {
					if p.pos >= len(p.in) {
						return "", p.fail("")
					}
					if !isHex(p.in[p.pos]) {
						return "", p.fail("invalid character in \\u hexadecimal character escape")
					}
					p.pos++
				}
			default:
				return "", p.fail("invalid character in string escape code")
			}
		case c < 0x20:
			return "", p.fail("invalid character in string literal")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && n == 1 {
				plain = false
			}
			p.pos += n
		default:
			p.pos++
		}
	}
	return "", p.fail("")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote decodes a string's escapes (already checked) as encoding/json
// does: a surrogate pair is one rune, a lone surrogate and each byte that
// is not UTF-8 are U+FFFD.
func unquote(raw []byte) string {
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch raw[i+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && allHex(raw[i+2:i+6]) {
						if d := utf16.DecodeRune(r, hex4(raw[i+2:i+6])); d != utf8.RuneError {
							b = utf8.AppendRune(b, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default: // '"', '\\', '/'
				b = append(b, raw[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			b = utf8.AppendRune(b, r) // U+FFFD for a byte that is not UTF-8
			i += n
		}
	}
	return string(b)
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number reads a JSON number at p.pos (its grammar checked as
// encoding/json checks it) and writes its ECMAScript form.
func (p *parser) number() error {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	switch {
	case p.pos >= len(p.in):
		return p.fail("")
	case p.in[p.pos] == '0':
		p.pos++
	case p.in[p.pos] >= '1' && p.in[p.pos] <= '9':
		digits()
	default:
		return p.fail("invalid character in numeric literal")
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.fail("invalid character after decimal point in numeric literal")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.fail("invalid character in exponent of numeric literal")
		}
	}
	text := string(p.in[start:p.pos])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		if p.bad++; p.badErr == nil {
			p.badErr = fmt.Errorf("canonjson: number %s: %w", text, err)
		}
		p.out = append(p.out, '0') // never returned
		return nil
	}
	s, err := formatNumber(f)
	if err != nil {
		return err
	}
	p.out = append(p.out, s...)
	return nil
}
