package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omlhub/oml/contexts/retrieval"
	"github.com/omlhub/oml/platform/auth"
)

// cranfieldDir is where the Cranfield collection lives: CRANFIELD_DIR, or
// beside the project.
var cranfieldDir = cmp.Or(os.Getenv("CRANFIELD_DIR"), filepath.Join("..", "..", "..", "shared", "data", "cranfield"))

type cranDoc struct {
	id   int
	text string
}

// readSMART reads a SMART-format file into (id, text of .W) records,
// stripping the collection's CRLF line ends.
func readSMART(path string, idWidth bool) ([]cranDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cranDoc
	var cur *cranDoc
	var field string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, ".I ") {
			id, err := strconv.Atoi(strings.TrimSpace(line[3:]))
			if err != nil {
				return nil, fmt.Errorf("%s: bad id line %q", path, line)
			}
			out = append(out, cranDoc{id: id})
			cur, field = &out[len(out)-1], ""
			continue
		}
		if len(line) == 2 && line[0] == '.' {
			field = line
			continue
		}
		if cur != nil && field == ".W" {
			cur.text += line + "\n"
		}
	}
	return out, sc.Err()
}

// readQrels maps query ordinal (1..225) → doc id → gain (5 - code).
func readQrels(path string) (map[int]map[int]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[int]map[int]float64{}
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		q, _ := strconv.Atoi(f[0])
		d, _ := strconv.Atoi(f[1])
		code, _ := strconv.Atoi(f[2])
		if code < 1 || code > 4 {
			continue
		}
		if out[q] == nil {
			out[q] = map[int]float64{}
		}
		out[q][d] = float64(5 - code)
	}
	return out, nil
}

type scores struct{ ndcg, recall, mrr float64 }

func score(ranked []int, rel map[int]float64, k int) scores {
	var m scores
	var dcg float64
	hits := 0
	for i, d := range ranked[:min(k, len(ranked))] {
		if g, ok := rel[d]; ok {
			dcg += g / math.Log2(float64(i+2))
			hits++
			if m.mrr == 0 {
				m.mrr = 1 / float64(i+1)
			}
		}
	}
	gains := make([]float64, 0, len(rel))
	for _, g := range rel {
		gains = append(gains, g)
	}
	slices.Sort(gains)
	slices.Reverse(gains)
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += g / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		m.ndcg = dcg / idcg
	}
	if len(rel) > 0 {
		m.recall = float64(hits) / float64(len(rel))
	}
	return m
}

// BenchmarkCranfield promotes the 1,400 Cranfield abstracts through the
// real pipeline (remember, serve, approve) and scores recall on its 225
// queries for the full-text leg, the vector leg and the hybrid. make eval
// runs it once and writes the table into docs/BENCHMARKS.md:
//
//	go test -run '^$' -bench Cranfield -benchtime 1x ./cmd/oml-server
func BenchmarkCranfield(b *testing.B) {
	docs, err := readSMART(filepath.Join(cranfieldDir, "cran.all.1400"), true)
	if err != nil {
		b.Fatalf("Cranfield collection: %v", err)
	}
	queries, err := readSMART(filepath.Join(cranfieldDir, "cran.qry"), false)
	if err != nil {
		b.Fatal(err)
	}
	qrels, err := readQrels(filepath.Join(cranfieldDir, "cranqrel"))
	if err != nil {
		b.Fatal(err)
	}
	e := setupBench(b)
	for _, body := range []string{`{"parent":"universe","name":"cranfield"}`} {
		if err := e.callAs(e.adminKey, "POST", "/v1/workareas", body, nil); err != nil && !strings.Contains(err.Error(), "name_conflict") {
			b.Fatal(err)
		}
	}
	// The bench keys hold grants on universe.procurement; give the writer
	// and reviewer the same on universe.cranfield.
	if err := e.grantOn("universe.cranfield"); err != nil {
		b.Fatal(err)
	}
	if err := e.promoteAll(b, docs); err != nil {
		b.Fatal(err)
	}

	caller, err := e.app.access.Authenticate(context.Background(), e.key)
	if err != nil {
		b.Fatal(err)
	}
	ctx := auth.With(context.Background(), caller)
	modes := []struct {
		name     string
		ft, vec  float64
		feedback bool
	}{
		{"full-text leg (BM25)", 1, 0, false},
		{"vector leg", 0, 1, false},
		{"vector leg with feedback", 0, 1, true},
		{"hybrid without feedback", retrieval.ServedFullTextWeight, retrieval.ServedVectorWeight, false},
		{"hybrid (as served)", retrieval.ServedFullTextWeight, retrieval.ServedVectorWeight, true},
	}
	b.ResetTimer()
	fmt.Printf("\n| mode | nDCG@10 | recall@10 | MRR | queries |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, mode := range modes {
		m := e.app.retrieval.WithRanking(mode.ft, mode.vec, mode.feedback)
		var sum scores
		n := 0
		for i, q := range queries {
			rel := qrels[i+1]
			if len(rel) == 0 {
				continue
			}
			out, err := m.Recall(ctx, q.text, "universe.cranfield", 10)
			if err != nil {
				b.Fatal(err)
			}
			var ranked []int
			for _, h := range out.Hits {
				id, _ := strconv.Atoi(strings.TrimPrefix(h.ClaimKey, "cran-"))
				ranked = append(ranked, id)
			}
			s := score(ranked, rel, 10)
			sum.ndcg, sum.recall, sum.mrr = sum.ndcg+s.ndcg, sum.recall+s.recall, sum.mrr+s.mrr
			n++
		}
		fmt.Printf("| %s | %.3f | %.3f | %.3f | %d |\n", mode.name, sum.ndcg/float64(n), sum.recall/float64(n), sum.mrr/float64(n), n)
	}
}

// grantOn gives the bench writer and reviewer their scopes on a workarea.
func (e *benchEnv) grantOn(workarea string) error {
	for key, scopes := range map[string][]string{e.writerKeyID: {"reader", "writer"}, e.reviewerKeyID: {"reader", "dreamer.review"}} {
		for _, scope := range scopes {
			body := fmt.Sprintf(`{"key_id":%q,"workarea":%q,"scope":%q,"effect":"allow"}`, key, workarea, scope)
			if err := e.callAs(e.adminKey, "POST", "/v1/grants", body, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// promoteAll submits every document as the writer, four at a time, and
// has the reviewer approve whatever it is served until the queue is empty.
// A serve may legitimately find nothing while other workers hold the
// leases on everything submitted so far, so the final drain collects the
// remainder.
func (e *benchEnv) promoteAll(b *testing.B, docs []cranDoc) error {
	work := make(chan cranDoc)
	errc := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for d := range work {
				text, _ := json.Marshal(d.text)
				body := fmt.Sprintf(`{"workarea":"universe.cranfield","claim_key":"cran-%d","text":%s}`, d.id, text)
				if err := e.callAs(e.key, "POST", "/v1/memories", body, nil); err != nil {
					errc <- err
					return
				}
				if _, err := e.approveNext(); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	for _, d := range docs {
		if strings.TrimSpace(d.text) == "" {
			continue // two abstracts in the collection are empty
		}
		select {
		case work <- d:
		case err := <-errc:
			close(work)
			return err
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	for {
		ok, err := e.approveNext()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	var held int
	if err := e.db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM admission.artifacts WHERE state = 'held'`).Scan(&held); err != nil {
		return err
	}
	if held != 0 {
		return fmt.Errorf("%d claims still held after draining the review queue", held)
	}
	var promoted int
	if err := e.db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM admission.artifacts WHERE state = 'promoted'`).Scan(&promoted); err != nil {
		return err
	}
	b.Logf("promoted %d documents", promoted)
	return nil
}

// approveNext serves the reviewer one item and approves it; false when the
// queue had nothing to serve.
func (e *benchEnv) approveNext() (bool, error) {
	var srv struct {
		ServeID string `json:"serve_id"`
	}
	if err := e.callAs(e.reviewerKey, "POST", "/v1/reviews/serve", "", &srv); err != nil {
		return false, fmt.Errorf("serve: %w", err)
	}
	if srv.ServeID == "" {
		return false, nil
	}
	if err := e.callAs(e.reviewerKey, "POST", "/v1/reviews/"+srv.ServeID+"/verdict", `{"verdict":"approve"}`, nil); err != nil {
		return false, fmt.Errorf("verdict: %w", err)
	}
	return true, nil
}
