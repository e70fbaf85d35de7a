package main

import (
	"fmt"
	"testing"
)

// recallCorpus is how many promoted memories the recall targets search.
const recallCorpus = 200

// BenchmarkRealTools measures what agents feel: oml_recall over MCP beside
// POST /v1/recall, and oml_remember over MCP beside POST /v1/memories, in
// one run on one pool, at concurrency 1 (the ≤ 1.15× target of issue 11)
// and 8. Recall searches recallCorpus promoted memories in the crew's
// subtree; each remember is a new held claim. Run with a fixed count:
//
//	go test -run '^$' -bench RealTools -benchtime 2000x ./cmd/oml-server
func BenchmarkRealTools(b *testing.B) {
	e := setupBench(b)
	e.seedRecall(b)
	for _, c := range []int{1, 8} {
		for _, target := range []string{"recall_http", "recall_mcp", "remember_http", "remember_mcp"} {
			b.Run(fmt.Sprintf("target=%s/c=%d", target, c), func(b *testing.B) {
				e.load(b, loadSpec{Target: target, Concurrency: c, Warmup: 50})
			})
		}
	}
}

// seedRecall promotes recallCorpus memories into the crew's workarea once:
// the writer remembers, the reviewer serves and approves.
func (e *benchEnv) seedRecall(b *testing.B) {
	if e.seeded {
		return
	}
	suppliers := []string{"Accra Metals", "Lagos Alloys", "Tema Steel", "Kumasi Copper", "Abuja Zinc"}
	for i := range recallCorpus {
		body := fmt.Sprintf(`{"verb":"remember","workarea":%q,"claim_key":"corpus-%d","text":"Supplier %s quoted %d USD/t for Q%d-2027 delivery of aluminium, valid until 2026-11-%02d. Quote ref Q-%d."}`,
			e.workarea, i, suppliers[i%len(suppliers)], 380+i%90, 1+i%4, 1+i%28, 7000+i)
		if err := e.callAs(e.key, "POST", "/v1/memories", body, nil); err != nil {
			b.Fatal(err)
		}
		var srv struct {
			ServeID string `json:"serve_id"`
		}
		if err := e.callAs(e.reviewerKey, "POST", "/v1/reviews/serve", "", &srv); err != nil {
			b.Fatal(err)
		}
		if err := e.callAs(e.reviewerKey, "POST", "/v1/reviews/"+srv.ServeID+"/verdict", `{"verdict":"approve"}`, nil); err != nil {
			b.Fatal(err)
		}
	}
	e.seeded = true
}
