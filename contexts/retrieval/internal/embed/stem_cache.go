package embed

import (
	"hash/maphash"
	"sync"

	"github.com/kljensen/snowball/english"
)

// stemShards and stemShardCap bound the stem cache: at most 16 × 4096 words,
// a few MB, so arbitrary input cannot grow it without limit.
const (
	stemShards   = 16
	stemShardCap = 4096
)

// stemCache memoises the Snowball English stemmer, which allocates and costs
// about a microsecond a word; a hit costs one map lookup. A full shard is
// emptied rather than evicted piecemeal: simple, and the working vocabulary
// refills it at once.
type stemCache struct {
	seed   maphash.Seed
	shards [stemShards]stemShard
}

type stemShard struct {
	mu sync.RWMutex
	m  map[string]string
}

// stems is process-wide: stemming is a pure function, so every embedder and
// every call shares one cache.
var stems = newStemCache()

func newStemCache() *stemCache {
	c := &stemCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string]string)
	}
	return c
}

// get returns the stem of a lowercased word.
func (c *stemCache) get(word []byte) string {
	s := &c.shards[maphash.Bytes(c.seed, word)%stemShards]
	s.mu.RLock()
	stem, ok := s.m[string(word)]
	s.mu.RUnlock()
	if ok {
		return stem
	}
	w := string(word)
	stem = english.Stem(w, true)
	if stem == w {
		stem = w // share one string for key and value
	}
	s.mu.Lock()
	if len(s.m) >= stemShardCap {
		clear(s.m)
	}
	s.m[w] = stem
	s.mu.Unlock()
	return stem
}
