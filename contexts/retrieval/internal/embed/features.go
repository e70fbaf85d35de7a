package embed

import (
	"math"
	"unicode/utf8"
)

// Feature families: the first byte hashed, so a word, a bigram and a
// trigram with the same letters land in unrelated buckets.
const (
	famWord    = 'w'
	famBigram  = 'b'
	famTrigram = 't'
)

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvByte folds one byte into an FNV-1a 64 state.
func fnvByte(h uint64, c byte) uint64 {
	return (h ^ uint64(c)) * fnvPrime
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvRune(h uint64, r rune) uint64 {
	if r < utf8.RuneSelf {
		return fnvByte(h, byte(r))
	}
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	return fnvBytes(h, b[:n])
}

// mix is the splitmix64 finaliser. FNV-1a's low bits are weak (the lowest
// is the parity of the input bytes' lowest bits), and both the bucket and the
// sign come from the hash, so every bit must depend on every input byte.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func wordHash(stem string) uint64 {
	return fnvString(fnvByte(fnvOffset, famWord), stem)
}

func bigramHash(a, b string) uint64 {
	h := fnvString(fnvByte(fnvOffset, famBigram), a)
	h = fnvByte(h, 0) // separator: "ab"+"c" ≠ "a"+"bc"
	return fnvString(h, b)
}

// trigramHashes appends the hashes of the character trigrams of word padded
// with boundary markers: "wing" gives "^wi", "win", "ing", "ng$".
func trigramHashes(dst []uint64, word []byte, runes []rune) ([]uint64, []rune) {
	runes = append(runes[:0], '^')
	for i := 0; i < len(word); {
		if c := word[i]; c < utf8.RuneSelf {
			runes = append(runes, rune(c))
			i++
			continue
		}
		r, size := utf8.DecodeRune(word[i:])
		runes = append(runes, r)
		i += size
	}
	runes = append(runes, '$')
	seed := fnvByte(fnvOffset, famTrigram)
	for i := 0; i+3 <= len(runes); i++ {
		h := fnvRune(seed, runes[i])
		h = fnvRune(h, runes[i+1])
		h = fnvRune(h, runes[i+2])
		dst = append(dst, h)
	}
	return dst, runes
}

// feature is one hashed feature's tally in a text.
type feature struct {
	hash   uint64
	count  float32 // occurrences
	weight float32 // family weight × rarity weight, the largest seen
}

// tally counts features in first-seen order. The order matters: summing
// floats in map order would make vectors differ in their last bits from run
// to run.
type tally struct {
	index map[uint64]int32
	feats []feature
}

func (t *tally) reset() {
	clear(t.index)
	t.feats = t.feats[:0]
}

// add counts times occurrences of the feature h.
func (t *tally) add(h uint64, weight, times float32) {
	if i, ok := t.index[h]; ok {
		f := &t.feats[i]
		f.count += times
		f.weight = max(f.weight, weight)
		return
	}
	t.index[h] = int32(len(t.feats))
	t.feats = append(t.feats, feature{hash: h, count: times, weight: weight})
}

// project adds the features into vec by signed feature hashing, weighting
// each by its sublinear term frequency 1 + ln tf.
func (t *tally) project(vec []float32) {
	dim := uint64(len(vec))
	for _, f := range t.feats {
		if f.weight <= 0 {
			continue
		}
		x := mix(f.hash)
		// Multiply-shift maps the high 32 bits onto [0, dim) without a division.
		bucket := ((x >> 32) * dim) >> 32
		v := f.weight
		if f.count > 1 {
			v *= 1 + float32(math.Log(float64(f.count)))
		}
		if x&1 == 1 {
			v = -v
		}
		vec[bucket] += v
	}
}
