package embed

import (
	"bufio"
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cranfieldDir is the Cranfield collection: CRANFIELD_DIR, or the shared
// data next to the repository.
func cranfieldDir() string {
	if d := os.Getenv("CRANFIELD_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "..", "shared", "data", "cranfield")
}

// cranfield is the collection: docs[i] is document i+1 (title and text),
// queries[j] is query j+1 by ordinal, qrels[j] maps a document index to its gain.
type cranfield struct {
	docs    []string
	queries []string
	qrels   []map[int]float64
}

func loadCranfield(t testing.TB) *cranfield {
	t.Helper()
	dir := cranfieldDir()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the Cranfield collection is not at %s (set CRANFIELD_DIR): %v", dir, err)
	}
	docs := readSMART(t, filepath.Join(dir, "cran.all.1400"))
	queries := readSMART(t, filepath.Join(dir, "cran.qry"))
	c := &cranfield{docs: docs, queries: queries, qrels: make([]map[int]float64, len(queries))}
	f, err := os.Open(filepath.Join(dir, "cranqrel"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		q, _ := strconv.Atoi(fields[0])
		d, _ := strconv.Atoi(fields[1])
		code, _ := strconv.Atoi(fields[2])
		// The README's mapping: codes 1 (complete answer) … 4 give 5 - code; -1 is no interest.
		if q < 1 || q > len(queries) || d < 1 || d > len(docs) || code < 1 || code > 4 {
			continue
		}
		if c.qrels[q-1] == nil {
			c.qrels[q-1] = make(map[int]float64)
		}
		c.qrels[q-1][d-1] = float64(5 - code)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// readSMART returns the title and text (.T and .W) of each record, in file order.
func readSMART(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out  []string
		cur  strings.Builder
		keep bool
	)
	flush := func() {
		out = append(out, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, ".I"):
			if i > 0 {
				flush()
			}
			keep = false
		case line == ".T" || line == ".W":
			keep = true
		case len(line) == 2 && line[0] == '.':
			keep = false
		case keep:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	flush()
	return out
}

// ndcgAt10 evaluates embedder e on documents docs[:n] (all when n ≤ 0) and
// the queries with a relevant document among them; it returns mean nDCG@10
// with linear gains and the number of queries evaluated.
func ndcgAt10(t testing.TB, c *cranfield, e Embedder, n int) (float64, int) {
	t.Helper()
	ctx := context.Background()
	docs := c.docs
	if n > 0 && n < len(docs) {
		docs = docs[:n]
	}
	dvecs, err := e.Embed(ctx, Document, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	df := make(map[string]int64)
	for _, d := range docs {
		for _, term := range Terms(d) {
			df[term]++
		}
	}
	weights := make(map[string]float32, len(df))
	for term, k := range df {
		weights[term] = IDF(k, int64(len(docs)))
	}
	var (
		sum   float64
		count int
	)
	for qi, q := range c.queries {
		rel := make(map[int]float64)
		for d, g := range c.qrels[qi] {
			if d < len(docs) {
				rel[d] = g
			}
		}
		if len(rel) == 0 {
			continue
		}
		qv, err := e.Embed(ctx, Query, []string{q}, weights)
		if err != nil {
			t.Fatal(err)
		}
		type hit struct {
			doc   int
			score float32
		}
		hits := make([]hit, len(docs))
		for d, dv := range dvecs {
			hits[d] = hit{d, dot(qv[0], dv)}
		}
		slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
		var dcg float64
		for i := 0; i < 10 && i < len(hits); i++ {
			dcg += rel[hits[i].doc] / math.Log2(float64(i+2))
		}
		gains := make([]float64, 0, len(rel))
		for _, g := range rel {
			gains = append(gains, g)
		}
		slices.SortFunc(gains, func(a, b float64) int { return cmp.Compare(b, a) })
		var ideal float64
		for i := 0; i < 10 && i < len(gains); i++ {
			ideal += gains[i] / math.Log2(float64(i+2))
		}
		sum += dcg / ideal
		count++
	}
	return sum / float64(count), count
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
