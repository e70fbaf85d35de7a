package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

// Check is what the run's check found. Every acknowledged write must be
// present once: the claim listed once under its key with the artifact id
// its write was answered with, one submission event for it in the
// journal, one promotion for each approval that was answered, each
// acknowledged upload complete; and the tenant's chain must verify.
type Check struct {
	Remembered int `json:"remembered"` // acknowledged remembers
	// Lost: acknowledged and absent (or under another id).
	Lost []string `json:"lost,omitempty"`
	// Duplicated: a claim listed twice, or an artifact with two
	// submission or promotion events.
	Duplicated []string `json:"duplicated,omitempty"`
	// Unacknowledged: present though no answer reached the client (a
	// reply lost to a fault); allowed, and counted.
	Unacknowledged int      `json:"unacknowledged"`
	Approved       int      `json:"approved"`
	NotPromoted    []string `json:"not_promoted,omitempty"`
	Uploads        int      `json:"uploads"`
	UploadsLost    []string `json:"uploads_lost,omitempty"`
	JournalOK      bool     `json:"journal_ok"`
	JournalEvents  int64    `json:"journal_events"`
	JournalReason  string   `json:"journal_reason,omitempty"`
}

// OK reports a clean check.
func (c Check) OK() bool {
	return len(c.Lost) == 0 && len(c.Duplicated) == 0 && len(c.NotPromoted) == 0 && len(c.UploadsLost) == 0 && c.JournalOK
}

type mineItem struct {
	ArtifactID string `json:"artifact_id"`
	ClaimKey   string `json:"claim_key"`
	State      string `json:"state"`
}

type tailEvent struct {
	Seq       int64          `json:"seq"`
	EventType string         `json:"event_type"`
	Subject   map[string]any `json:"subject"`
}

func check(ctx context.Context, c *cluster, admin string, fx fixture, led *ledger) (Check, error) {
	var chk Check
	base := c.urls[0]
	led.mu.Lock()
	defer led.mu.Unlock()
	state := map[string]string{} // artifact id → state, over all writers
	submitted := map[string]int{}
	promoted := map[string]int{}
	for i, key := range fx.Writers {
		acked := led.remembered[i]
		chk.Remembered += len(acked)
		seen := map[string][]string{} // claim key → artifact ids
		cursor := ""
		for {
			path := "/v1/memories/mine?limit=100&workarea=" + url.QueryEscape(fx.Workarea)
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			var page struct {
				Items      []mineItem `json:"items"`
				NextCursor string     `json:"next_cursor"`
			}
			if o, _ := retry(ctx, c, retryFor, func(b string) outcome { return c.do(ctx, b, "GET", path, key, nil, &page) }); !o.ok() {
				return chk, fmt.Errorf("list writer %d's claims: %s", i, o.label())
			}
			for _, it := range page.Items {
				seen[it.ClaimKey] = append(seen[it.ClaimKey], it.ArtifactID)
				state[it.ArtifactID] = it.State
			}
			if page.NextCursor == "" || len(page.Items) == 0 {
				break
			}
			cursor = page.NextCursor
		}
		for claim, ids := range seen {
			if len(ids) > 1 {
				chk.Duplicated = append(chk.Duplicated, fmt.Sprintf("claim %s listed %d times", claim, len(ids)))
			}
			if _, ok := acked[claim]; !ok {
				chk.Unacknowledged++
			}
		}
		for claim, id := range acked {
			if ids := seen[claim]; len(ids) == 0 || ids[0] != id {
				chk.Lost = append(chk.Lost, fmt.Sprintf("claim %s (%s) acknowledged, listed as %v", claim, id, ids))
			}
		}
		// The writer's own submissions and every promotion in the
		// workarea, from the journal tail.
		if err := tail(ctx, c, key, fx, func(e tailEvent) {
			id, _ := e.Subject["artifact_id"].(string)
			switch e.EventType {
			case "submission.remember":
				submitted[id]++
			case "lifecycle.promote":
				if i == 0 { // every reader sees each promotion: count once
					promoted[id]++
				}
			}
		}); err != nil {
			return chk, err
		}
		for _, id := range acked {
			if n := submitted[id]; n != 1 {
				chk.Lost = append(chk.Lost, fmt.Sprintf("artifact %s has %d submission events", id, n))
			}
		}
	}
	for _, claim := range led.anonymous {
		chk.Lost = append(chk.Lost, fmt.Sprintf("claim %s acknowledged without an artifact id", claim))
	}
	for id, n := range submitted {
		if n > 1 {
			chk.Duplicated = append(chk.Duplicated, fmt.Sprintf("artifact %s has %d submission events", id, n))
		}
	}
	for id, n := range promoted {
		if n > 1 {
			chk.Duplicated = append(chk.Duplicated, fmt.Sprintf("artifact %s promoted %d times", id, n))
		}
	}
	chk.Approved = len(led.approved)
	for id := range led.approved {
		if state[id] != "promoted" || promoted[id] != 1 {
			chk.NotPromoted = append(chk.NotPromoted, fmt.Sprintf("%s: state %q, %d promotion events", id, state[id], promoted[id]))
		}
	}
	for i, key := range fx.Writers {
		for id := range led.uploads[i] {
			chk.Uploads++
			var ses sessionOut
			o, _ := retry(ctx, c, retryFor, func(b string) outcome {
				return c.do(ctx, b, "GET", "/v1/attachments/uploads/"+id, key, nil, &ses)
			})
			if !o.ok() || ses.State != "complete" {
				chk.UploadsLost = append(chk.UploadsLost, fmt.Sprintf("%s: %s, state %q", id, o.label(), ses.State))
			}
		}
	}
	var rep struct {
		OK     bool   `json:"ok"`
		Events int64  `json:"events"`
		Reason string `json:"reason"`
	}
	if o := c.do(ctx, base, "GET", "/v1/admin/journal/verify", admin, nil, &rep); !o.ok() {
		return chk, fmt.Errorf("journal verify: %s", o.label())
	}
	chk.JournalOK, chk.JournalEvents, chk.JournalReason = rep.OK, rep.Events, rep.Reason
	return chk, nil
}

// tail reads the workarea's events after the run's start as key.
func tail(ctx context.Context, c *cluster, key string, fx fixture, each func(tailEvent)) error {
	after := fx.StartSeq
	for {
		path := "/v1/events?limit=500&scope=" + url.QueryEscape(fx.Workarea) + "&after_seq=" + strconv.FormatInt(after, 10)
		var page struct {
			Events       []tailEvent `json:"events"`
			Idle         bool        `json:"idle"`
			NextAfterSeq int64       `json:"next_after_seq"`
		}
		if o, _ := retry(ctx, c, retryFor, func(b string) outcome { return c.do(ctx, b, "GET", path, key, nil, &page) }); !o.ok() {
			return fmt.Errorf("events tail: %s", o.label())
		}
		for _, e := range page.Events {
			each(e)
		}
		if page.Idle || page.NextAfterSeq <= after {
			return nil
		}
		after = page.NextAfterSeq
	}
}

func printCheck(w io.Writer, c Check) {
	verdict := "ok"
	if !c.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "check %s: %d remembers acknowledged (%d lost, %d duplicated, %d present unacknowledged), %d approvals (%d not promoted), %d uploads (%d lost), journal %v (%d events)\n",
		verdict, c.Remembered, len(c.Lost), len(c.Duplicated), c.Unacknowledged, c.Approved, len(c.NotPromoted), c.Uploads, len(c.UploadsLost),
		map[bool]string{true: "verifies", false: "BROKEN " + c.JournalReason}[c.JournalOK], c.JournalEvents)
	for _, l := range [][]string{c.Lost, c.Duplicated, c.NotPromoted, c.UploadsLost} {
		for i, s := range l {
			if i == 10 {
				fmt.Fprintf(w, "  … %d more\n", len(l)-10)
				break
			}
			fmt.Fprintln(w, "  "+s)
		}
	}
}
