package main

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// The operations of the mix, by name.
const (
	opRecall   = "recall"
	opRemember = "remember"
	opEvents   = "events"
	opReview   = "review"
	opUpload   = "upload"
)

// retryFor bounds how long one operation is retried across replicas:
// longer than a Postgres restart or an upload lease left by a killed
// replica (OML_UPLOAD_LEASE_TTL in the fault tests).
const retryFor = 45 * time.Second

// fixture is what the setup created: the workarea and the keys.
type fixture struct {
	RunID    string `json:"run_id"`
	Workarea string `json:"workarea"`
	// Corpus, with -corpus, is a sibling workarea of fixed memories
	// that recall searches instead of Workarea (which grows with every
	// approval).
	Corpus    string   `json:"corpus,omitempty"`
	Writers   []string `json:"-"`
	Reviewers []string `json:"-"`
	StartSeq  int64    `json:"start_seq"`
}

// ledger is every acknowledged write, for the check afterwards.
type ledger struct {
	mu sync.Mutex
	// remembered: claim key → artifact id, per writer index.
	remembered []map[string]string
	// approved: artifact ids a verdict promoted.
	approved map[string]bool
	// uploads: complete session ids, per writer index.
	uploads []map[string]bool
	// anonymous: remembers acknowledged without an artifact id, which
	// the check cannot find: each one fails it.
	anonymous []string
}

func newLedger(writers int) *ledger {
	l := &ledger{approved: map[string]bool{}}
	for range writers {
		l.remembered = append(l.remembered, map[string]string{})
		l.uploads = append(l.uploads, map[string]bool{})
	}
	return l
}

// worker runs operations for one goroutine; its counters are its own.
type worker struct {
	id     int
	c      *cluster
	fx     fixture
	led    *ledger
	stats  *stats
	seq    int
	cursor int64 // the events tail's after_seq
	rng    *rand.Rand
	upload int // upload size in bytes
}

var words = []string{"copper", "cobalt", "Accra", "Tema", "freight", "invoice", "supplier", "March", "tariff",
	"smelter", "contract", "customs", "warehouse", "audit", "forecast", "quota", "shipment", "ore", "grade", "port"}

// otherWords is the vocabulary of the run's own writes when recall reads
// a corpus (-corpus): 400 words no query uses, as a tenant's other
// workareas hold text unrelated to a query, so recall's work tracks the
// corpus and not the run's growing workarea.
var otherWords = func() []string {
	var out []string
	for _, a := range []string{"ba", "de", "ki", "lo", "mu", "na", "pe", "ri", "so", "tu"} {
		for _, b := range []string{"ga", "he", "ji", "ko", "lu", "ma", "ne", "pi", "ro", "su"} {
			for _, c := range []string{"v", "x", "z", "q"} {
				out = append(out, a+b+c)
			}
		}
	}
	return out
}()

// phrase is n words of vocab.
func (w *worker) phrase(vocab []string, n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += " "
		}
		s += vocab[w.rng.IntN(len(vocab))]
	}
	return s
}

func (w *worker) writer() (int, string) {
	i := w.rng.IntN(len(w.fx.Writers))
	return i, w.fx.Writers[i]
}

// run performs one operation and records it.
func (w *worker) run(ctx context.Context, op string) {
	start := time.Now()
	var o outcome
	var attempts int
	switch op {
	case opRecall:
		o, attempts = w.recall(ctx)
	case opRemember:
		o, attempts = w.remember(ctx)
	case opEvents:
		o, attempts = w.events(ctx)
	case opReview:
		o, attempts = w.review(ctx)
	case opUpload:
		o, attempts = w.uploadOne(ctx)
	}
	w.stats.record(op, o, attempts, time.Since(start))
}

type recallOut struct {
	Hits []struct {
		ArtifactID string `json:"artifact_id"`
	} `json:"hits"`
}

// recall: half over HTTP, half over MCP, retried on the next replica
// like any client's read.
func (w *worker) recall(ctx context.Context) (outcome, int) {
	_, key := w.writer()
	q := map[string]any{"query": w.phrase(words, 2), "scope": cmp.Or(w.fx.Corpus, w.fx.Workarea)}
	mcp := w.rng.IntN(2) == 0
	return retry(ctx, w.c, retryFor, func(base string) outcome {
		var out recallOut
		if mcp {
			return w.c.tool(ctx, base, key, "oml_recall", q, &out)
		}
		return w.c.do(ctx, base, "POST", "/v1/recall", key, q, &out)
	})
}

type rememberOut struct {
	ArtifactID       string `json:"artifact_id"`
	ClaimKey         string `json:"claim_key"`
	IdempotentReplay bool   `json:"idempotent_replay"`
}

// remember writes a new claim, over MCP or HTTP, retried on the next
// replica with the same idempotency key until acknowledged.
func (w *worker) remember(ctx context.Context) (outcome, int) {
	i, key := w.writer()
	w.seq++
	claim := fmt.Sprintf("load-%s-%d-%d", w.fx.RunID, w.id, w.seq)
	idem := "ik-" + claim
	vocab := words
	if w.fx.Corpus != "" && w.fx.Workarea != w.fx.Corpus {
		vocab = otherWords // the run's own writes beside a corpus
	}
	text := w.phrase(vocab, 12)
	mcp := w.rng.IntN(2) == 0
	var out rememberOut
	o, n := retry(ctx, w.c, retryFor, func(base string) outcome {
		if mcp {
			return w.c.tool(ctx, base, key, "oml_remember", map[string]any{"workarea": w.fx.Workarea, "claim_key": claim,
				"text": text, "idempotency_key": idem}, &out)
		}
		return w.c.do(ctx, base, "POST", "/v1/memories", key, map[string]any{"verb": "remember", "workarea": w.fx.Workarea,
			"claim_key": claim, "text": text, "idempotency_key": idem}, &out)
	})
	if o.ok() {
		w.led.mu.Lock()
		if out.ArtifactID != "" {
			w.led.remembered[i][claim] = out.ArtifactID
		} else {
			w.led.anonymous = append(w.led.anonymous, claim)
		}
		w.led.mu.Unlock()
	}
	return o, n
}

type eventsOut struct {
	NextAfterSeq int64 `json:"next_after_seq"`
}

// events: the tail over HTTP from this worker's cursor, or the feed over
// MCP.
func (w *worker) events(ctx context.Context) (outcome, int) {
	_, key := w.writer()
	if w.rng.IntN(2) == 0 {
		path := "/v1/events?scope=" + url.QueryEscape(w.fx.Workarea) + "&limit=100"
		if w.cursor > 0 {
			path += "&after_seq=" + strconv.FormatInt(w.cursor, 10)
		}
		var out eventsOut
		o, n := retry(ctx, w.c, retryFor, func(base string) outcome { return w.c.do(ctx, base, "GET", path, key, nil, &out) })
		if o.ok() {
			w.cursor = out.NextAfterSeq
		}
		return o, n
	}
	// feed_read moves the principal's cursor: a retry after a lost answer
	// skips what that answer held, as it would for any client.
	return retry(ctx, w.c, retryFor, func(base string) outcome {
		return w.c.tool(ctx, base, key, "feed_read", map[string]any{"workarea": w.fx.Workarea}, nil)
	})
}

type serveOut struct {
	ServeID string `json:"serve_id"`
	Item    struct {
		ArtifactID string `json:"artifact_id"`
	} `json:"item"`
}

type verdictOut struct {
	State string `json:"state"`
}

// review serves the next held item and approves it. The verdict is
// retried on the next replica after a failure; its serve is this key's
// alone, so review.serve_consumed on a retry means the first attempt
// committed.
func (w *worker) review(ctx context.Context) (outcome, int) {
	key := w.fx.Reviewers[w.rng.IntN(len(w.fx.Reviewers))]
	var srv serveOut
	o, n := retry(ctx, w.c, retryFor, func(base string) outcome {
		srv = serveOut{}
		return w.c.do(ctx, base, "POST", "/v1/reviews/serve", key, map[string]any{"workarea": w.fx.Workarea}, &srv)
	})
	if !o.ok() || srv.ServeID == "" {
		return o, n // 204: nothing to review
	}
	var out verdictOut
	first := true
	vo, vn := retry(ctx, w.c, retryFor, func(base string) outcome {
		r := w.c.do(ctx, base, "POST", "/v1/reviews/"+srv.ServeID+"/verdict", key,
			map[string]any{"verdict": "approve", "reason": "load test"}, &out)
		if !first && r.Code == "review.serve_consumed" {
			r = outcome{Status: 200} // the earlier attempt committed
			out.State = "promoted"
		}
		first = false
		return r
	})
	if vo.ok() && out.State == "promoted" {
		w.led.mu.Lock()
		w.led.approved[srv.Item.ArtifactID] = true
		w.led.mu.Unlock()
	}
	return vo, n + vn - 1
}

type sessionOut struct {
	UploadSession string `json:"upload_session"`
	State         string `json:"state"`
	NextPart      int    `json:"next_part"`
}

// uploadOne opens a session and sends its one part; a failed part is sent
// again (to any replica: the session is in Postgres) until the session is
// complete.
func (w *worker) uploadOne(ctx context.Context) (outcome, int) {
	i, key := w.writer()
	data := make([]byte, w.upload)
	_, _ = crand.Read(data)
	sum := sha256.Sum256(data)
	var ses sessionOut
	o, n := retry(ctx, w.c, retryFor, func(base string) outcome {
		return w.c.do(ctx, base, "POST", "/v1/attachments/uploads", key, map[string]any{"media_type": "application/octet-stream",
			"size_bytes": len(data), "expected_digest": "sha256:" + hex.EncodeToString(sum[:])}, &ses)
	})
	if !o.ok() || ses.UploadSession == "" {
		return o, n
	}
	var done sessionOut
	po, pn := retry(ctx, w.c, retryFor, func(base string) outcome {
		return w.c.do(ctx, base, "PUT", "/v1/attachments/uploads/"+ses.UploadSession+"/parts/1", key, data, &done)
	})
	if po.ok() && done.State == "complete" {
		w.led.mu.Lock()
		w.led.uploads[i][ses.UploadSession] = true
		w.led.mu.Unlock()
	}
	// The open session is abandoned when the part never landed: the
	// sweeper expires it.
	return po, n + pn - 1
}
