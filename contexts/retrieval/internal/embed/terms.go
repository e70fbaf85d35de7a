package embed

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// minWordLen is the shortest token kept, in runes.
const minWordLen = 2

// Terms returns the distinct normalised terms of text — lowercased, stemmed
// English words with stopwords removed — in order of first appearance. They
// are the keys of the weights an [Embedder] takes for the Query role, and what
// an indexer counts document frequencies of.
func Terms(text string) []string {
	var (
		out  []string
		seen map[string]struct{}
	)
	scanWords(text, nil, func(_ []byte, stem string) {
		if seen == nil {
			seen = make(map[string]struct{})
		}
		if _, ok := seen[stem]; ok {
			return
		}
		seen[stem] = struct{}{}
		out = append(out, stem)
	})
	return out
}

// IDF returns the rarity weight of a term found in df of n documents: BM25's
// smoothed idf, ln(1 + (n - df + 0.5) / (df + 0.5)). It is positive for any
// n ≥ 0, falls as df grows and is ln 2 for a term in no document of an empty
// corpus. df is clamped to [0, n].
func IDF(df, n int64) float32 {
	n = max(n, 0)
	df = min(max(df, 0), n)
	return float32(math.Log1p((float64(n-df) + 0.5) / (float64(df) + 0.5)))
}

// scanWords splits text into words (maximal runs of Unicode letters and
// digits), lowercases them, drops short words and stopwords, and calls fn with
// the lowercased word and its stem. buf is scratch space for the lowercased
// word and is returned for reuse; word is only valid during the call.
func scanWords(text string, buf []byte, fn func(word []byte, stem string)) []byte {
	i := 0
	for i < len(text) {
		// Skip separators.
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if isASCIIWordByte(c) {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				break
			}
			i += size
		}
		// Collect one word, lowercased.
		buf = buf[:0]
		runes := 0
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if !isASCIIWordByte(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
				runes++
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			runes++
			i += size
		}
		if runes < minWordLen || isStopword(buf) {
			continue
		}
		fn(buf, stems.get(buf))
	}
	return buf
}

func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
