package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/audit/evidence"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/journal"
)

// BenchmarkEvidenceExport measures the evidence export of a workarea
// whose range holds EVIDENCE_EVENTS journal events (100,000 by default):
// the export's time and size over HTTP, and the offline verification's
// time. One run:
//
//	go test -run '^$' -bench EvidenceExport -benchtime 1x ./cmd/oml-server
func BenchmarkEvidenceExport(b *testing.B) {
	e := setupBench(b)
	n := 100_000
	if v := os.Getenv("EVIDENCE_EVENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	var who struct {
		TenantID string `json:"tenant_id"`
	}
	if err := e.callAs(e.adminKey, "GET", "/v1/whoami", "", &who); err != nil {
		b.Fatal(err)
	}
	from := time.Now().UTC()
	j := journal.New(e.db, nil)
	ctx := auth.With(context.Background(), auth.Caller{TenantID: who.TenantID})
	for done := 0; done < n; {
		err := e.db.InTx(ctx, func(ctx context.Context) error {
			for i := 0; i < 1000 && done+i < n; i++ {
				if _, err := j.Append(ctx, who.TenantID, journal.Event{
					Type: "bench.event", Actor: "bench", Workarea: e.workarea,
					Subject: map[string]any{"i": done + i}, Payload: map[string]any{"note": "an event of the evidence benchmark"},
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += 1000
	}
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/evidence?workarea="+e.workarea+"&from="+from.Format(time.RFC3339Nano), nil)
		req.Header.Set("Authorization", "Bearer "+e.adminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("export: %d %.300s", resp.StatusCode, body)
		}
		exported := time.Since(start)
		start = time.Now()
		var f evidence.File
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
			b.Fatal(err)
		}
		key, _ := base64.StdEncoding.DecodeString(f.SigningKey)
		rep := evidence.Verify(&f, ed25519.PublicKey(key))
		verified := time.Since(start)
		if !rep.OK || rep.Events < n {
			b.Fatalf("verify: %d events, problems %v", rep.Events, rep.Problems[:min(3, len(rep.Problems))])
		}
		b.ReportMetric(float64(rep.Events), "events")
		b.ReportMetric(exported.Seconds(), "export-s")
		b.ReportMetric(float64(len(body))/(1<<20), "MiB")
		b.ReportMetric(verified.Seconds(), "verify-s")
	}
}
