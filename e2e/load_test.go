package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// loadResult is the part of oml-load's -json output the tests read.
type loadResult struct {
	Ops []struct {
		Op       string         `json:"op"`
		Count    int            `json:"count"`
		OK       int            `json:"ok"`
		Retried  int            `json:"retried"`
		Outcomes map[string]int `json:"outcomes"`
	} `json:"ops"`
	Fixture struct {
		Corpus string `json:"corpus"`
	} `json:"fixture"`
	Errors int `json:"errors"`
	Check  struct {
		Remembered     int      `json:"remembered"`
		Lost           []string `json:"lost"`
		Duplicated     []string `json:"duplicated"`
		Unacknowledged int      `json:"unacknowledged"`
		Approved       int      `json:"approved"`
		NotPromoted    []string `json:"not_promoted"`
		Uploads        int      `json:"uploads"`
		UploadsLost    []string `json:"uploads_lost"`
		JournalOK      bool     `json:"journal_ok"`
	} `json:"check"`
}

// runLoad runs oml-load against urls with args and decodes its result;
// the run's exit status is returned with it.
func runLoad(t testing.TB, admin string, urls []string, args ...string) (loadResult, string, error) {
	t.Helper()
	cmd := exec.Command(bins.load, append([]string{"-urls", strings.Join(urls, ","), "-key", admin, "-metrics-token", metricsToken, "-json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res loadResult
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		t.Fatalf("oml-load output (%v): %v\n%s\n%s", err, jerr, stdout.String(), stderr.String())
	}
	return res, stdout.String(), err
}

// TestLoadThreeReplicas: 30 seconds of the full mix on three replicas of
// one database and store: every operation answered, nothing acknowledged
// lost or written twice, the journal verifies.
func TestLoadThreeReplicas(t *testing.T) {
	t.Parallel()
	s := startServer(t, "OML_REPLICAS=3")
	urls := []string{s.URL, s.replica(t).URL, s.replica(t).URL}
	res, out, err := runLoad(t, s.AdminKey, urls, "-duration", "30s", "-concurrency", "6", "-corpus", "40")
	if err != nil {
		t.Fatalf("oml-load: %v\n%s", err, out)
	}
	// -corpus: recall ran over 40 approved memories of their own.
	var hits struct {
		Hits []json.RawMessage `json:"hits"`
	}
	if r := s.do(t, "POST", "/v1/recall", s.AdminKey, map[string]any{"query": "copper cobalt freight invoice supplier tariff",
		"scope": res.Fixture.Corpus}); r.Status != 200 || json.Unmarshal(r.Body, &hits) != nil || len(hits.Hits) < 5 {
		t.Fatalf("recall over the corpus %q: %d %.300s", res.Fixture.Corpus, r.Status, r.Body)
	}
	if res.Errors != 0 || !res.Check.JournalOK || len(res.Check.Lost)+len(res.Check.Duplicated)+len(res.Check.NotPromoted)+len(res.Check.UploadsLost) > 0 {
		t.Fatalf("the run:\n%s", out)
	}
	counts := map[string]int{}
	for _, op := range res.Ops {
		counts[op.Op] = op.OK
		for label := range op.Outcomes {
			if label != "ok" {
				t.Errorf("%s: %d ended %s (nothing is refused in this mix)", op.Op, op.Outcomes[label], label)
			}
		}
		if op.Retried > 0 {
			t.Errorf("%s: %d operations needed a retry with no fault injected", op.Op, op.Retried)
		}
	}
	for _, op := range []string{"recall", "remember", "events", "review", "upload"} {
		if counts[op] == 0 {
			t.Errorf("no %s succeeded", op)
		}
	}
	if res.Check.Remembered == 0 || res.Check.Approved == 0 || res.Check.Uploads == 0 {
		t.Fatalf("the check saw too little: %+v", res.Check)
	}
	t.Logf("oml-load on 3 replicas:\n%s", out)
}
