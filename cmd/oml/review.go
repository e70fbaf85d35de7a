package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/omlhub/oml/platform/textsafe"
)

// served is POST /v1/reviews/serve's answer (docs/API.md, Review).
type served struct {
	ServeID    string    `json:"serve_id"`
	ExpiresAt  time.Time `json:"expires_at"`
	SelfSigned bool      `json:"self_signed"`
	Subject    string    `json:"subject"`
	Item       *struct {
		ArtifactID  string   `json:"artifact_id"`
		ClaimKey    string   `json:"claim_key"`
		Version     int      `json:"version"`
		Kind        string   `json:"kind"`
		Workarea    string   `json:"workarea"`
		Text        string   `json:"text"`
		DerivesFrom []string `json:"derives_from"`
		Lineage     []string `json:"lineage_closure"`
		Findings    []struct {
			Rule    string `json:"rule"`
			Message string `json:"message"`
			Offset  int    `json:"offset"`
		} `json:"findings"`
		AttachmentReview []struct {
			SHA256    string `json:"sha256"`
			MediaType string `json:"media_type"`
			SizeBytes int64  `json:"size_bytes"`
			Review    string `json:"review"`
			Text      string `json:"text"`
			Truncated bool   `json:"truncated"`
			Note      string `json:"note"`
		} `json:"attachment_review"`
		Approvals         int `json:"approvals"`
		RequiredApprovals int `json:"required_approvals"`
	} `json:"item"`
	Edge *struct {
		EdgeID string `json:"edge_id"`
		Kind   string `json:"kind"`
		Label  string `json:"label"`
		From   string `json:"from"`
		To     string `json:"to"`
		Note   string `json:"note"`
	} `json:"edge"`
}

type verdictOut struct {
	ServeID           string `json:"serve_id"`
	ArtifactID        string `json:"artifact_id"`
	EdgeID            string `json:"edge_id"`
	Verdict           string `json:"verdict"`
	State             string `json:"state"`
	Approvals         int    `json:"approvals"`
	RequiredApprovals int    `json:"required_approvals"`
}

const reviewVerbs = "next, approve, reject, release or queue (no verb: review interactively)"

// review runs the serve ceremony in a terminal: `oml review` goes through
// the queue interactively; next, approve, reject, release and queue are
// its steps for scripts.
func (c *cli) review(ctx context.Context, args []string) error {
	verb := "interactive"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	switch verb {
	case "interactive":
		fs := c.flags("review", "[--workarea ID|PATH]")
		workarea := fs.String("workarea", "", "review only this workarea's subtree")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		return c.reviewLoop(ctx, *workarea)
	case "next":
		fs := c.flags("review next", "[--workarea ID|PATH] [--skip ID,…]")
		workarea := fs.String("workarea", "", "serve from this workarea's subtree only")
		skip := fs.String("skip", "", "comma-separated claim or edge ids to pass over this time")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		s, raw, ok, err := c.serveNext(ctx, *workarea, splitList(*skip))
		if err != nil {
			return err
		}
		if c.json {
			if !ok {
				_, err := fmt.Fprintln(c.stdout, "null")
				return err
			}
			return printJSON(c.stdout, raw)
		}
		if !ok {
			_, err := fmt.Fprintln(c.stdout, "Nothing to review.")
			return err
		}
		return c.printServed(ctx, c.stdout, s)
	case "approve", "reject":
		fs := c.flags("review "+verb, "SERVE_ID --reason TEXT")
		reason := fs.String("reason", "", "why (required to reject)")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		if verb == "reject" && strings.TrimSpace(*reason) == "" {
			return errors.New("review reject: --reason is required: say why the item is rejected")
		}
		_, err = exchange(ctx, c, c.verdictRequest(pos[0], verb, *reason), printVerdict)
		return err
	case "release":
		fs := c.flags("review release", "SERVE_ID")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/reviews/" + url.PathEscape(pos[0]) + "/release", body: map[string]any{}},
			func(w io.Writer, r struct {
				ServeID    string    `json:"serve_id"`
				ReleasedAt time.Time `json:"released_at"`
			}) error {
				_, err := fmt.Fprintf(w, "released %s; its item is back in the queue\n", r.ServeID)
				return err
			})
		return err
	case "queue":
		if _, err := parse(c.flags("review queue", ""), args, 0); err != nil {
			return err
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/reviews/queue"}, func(w io.Writer, q struct {
			Workareas []struct {
				Path   string    `json:"path"`
				Claims int       `json:"claims"`
				Edges  int       `json:"edges"`
				Leased int       `json:"leased"`
				Oldest time.Time `json:"oldest"`
			} `json:"workareas"`
			Claims int `json:"claims"`
			Edges  int `json:"edges"`
		}) error {
			tw := table(w)
			fmt.Fprintln(tw, "WORKAREA\tCLAIMS\tEDGES\tLEASED\tOLDEST")
			for _, r := range q.Workareas {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", r.Path, r.Claims, r.Edges, r.Leased, r.Oldest.UTC().Format(time.RFC3339))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err := fmt.Fprintf(w, "%d claims and %d edges wait for you\n", q.Claims, q.Edges)
			return err
		})
		return err
	}
	return c.unknownSubcommand("review", verb, reviewVerbs)
}

func (c *cli) verdictRequest(serveID, verb, reason string) request {
	body := map[string]string{"verdict": verb}
	if r := strings.TrimSpace(reason); r != "" {
		body["reason"] = r
	}
	return request{method: http.MethodPost, path: "/v1/reviews/" + url.PathEscape(serveID) + "/verdict", body: body}
}

func printVerdict(w io.Writer, v verdictOut) error {
	if v.EdgeID != "" {
		_, err := fmt.Fprintf(w, "%s edge %s: now %s\n", pastTense(v.Verdict), v.EdgeID, v.State)
		return err
	}
	_, err := fmt.Fprintf(w, "%s %s: now %s (%d of %d approvals)\n", pastTense(v.Verdict), orDash(v.ArtifactID), v.State, v.Approvals, v.RequiredApprovals)
	return err
}

// serveNext asks for the next item; ok is false when nothing waits (204).
func (c *cli) serveNext(ctx context.Context, workarea string, skip []string) (served, json.RawMessage, bool, error) {
	api, err := c.api()
	if err != nil {
		return served{}, nil, false, err
	}
	body := map[string]any{}
	if workarea != "" {
		body["workarea"] = workarea
	}
	if len(skip) > 0 {
		body["skip"] = skip
	}
	var raw json.RawMessage
	if err := api.do(ctx, http.MethodPost, "/v1/reviews/serve", body, &raw); err != nil {
		return served{}, nil, false, err
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return served{}, nil, false, nil
	}
	var s served
	if err := json.Unmarshal(raw, &s); err != nil {
		return served{}, nil, false, fmt.Errorf("serve: decode response: %w", err)
	}
	return s, raw, true, nil
}

// printServed prints a served item the way a reviewer reads it: the
// claim, its declared lineage as this key may see it, the scan findings,
// the attachments' review material and the policy.
func (c *cli) printServed(ctx context.Context, w io.Writer, s served) error {
	api, err := c.api()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "serve %s (expires %s)", s.ServeID, s.ExpiresAt.UTC().Format(time.RFC3339))
	if s.SelfSigned {
		fmt.Fprint(w, ", self-signed (development)")
	}
	fmt.Fprintln(w)
	if e := s.Edge; e != nil {
		fmt.Fprintf(w, "edge %s: %s %s\n  from %s\n  to   %s\n", e.EdgeID, e.Kind, safe(e.Label), e.From, e.To)
		if e.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", safe(e.Note))
		}
		return nil
	}
	it := s.Item
	if it == nil {
		return errors.New("serve: the answer holds neither a claim nor an edge")
	}
	path := it.Workarea
	var wa struct {
		Path string `json:"path"`
	}
	if api.do(ctx, http.MethodGet, "/v1/workareas/"+url.PathEscape(it.Workarea), nil, &wa) == nil {
		path = wa.Path
	}
	fmt.Fprintf(w, "claim %s (%s v%d), %s in %s\n", it.ArtifactID, safe(it.ClaimKey), it.Version, it.Kind, path)
	fmt.Fprintf(w, "policy: %d of %d approvals given\n\n", it.Approvals, it.RequiredApprovals)
	for _, line := range strings.Split(safe(it.Text), "\n") {
		fmt.Fprintf(w, "  | %s\n", line)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "lineage: derives from %d, closure of %d checked\n", len(it.DerivesFrom), len(it.Lineage))
	for i, id := range it.DerivesFrom {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more\n", len(it.DerivesFrom)-i)
			break
		}
		var a struct {
			Kind  string  `json:"kind"`
			State string  `json:"state"`
			Text  *string `json:"text"`
		}
		if err := api.do(ctx, http.MethodGet, "/v1/artifacts/"+url.PathEscape(id), nil, &a); err != nil {
			var ae *APIError
			if errors.As(err, &ae) {
				fmt.Fprintf(w, "  %s: not visible to you (%s)\n", id, ae.Code)
				continue
			}
			return err
		}
		text := ""
		if a.Text != nil {
			text = *a.Text
		}
		fmt.Fprintf(w, "  %s (%s, %s): %s\n", safe(id), a.Kind, a.State, safe(text))
	}
	fmt.Fprintf(w, "findings: %d\n", len(it.Findings))
	for _, f := range it.Findings {
		fmt.Fprintf(w, "  %s at byte %d: %s\n", f.Rule, f.Offset, safe(f.Message))
	}
	fmt.Fprintf(w, "attachments: %d\n", len(it.AttachmentReview))
	for _, a := range it.AttachmentReview {
		fmt.Fprintf(w, "  sha256:%s %s %d bytes (download: GET /v1/artifacts/%s/attachments/%s)\n", a.SHA256, safe(a.MediaType), a.SizeBytes, it.ArtifactID, a.SHA256)
		if a.Text != "" {
			for _, line := range strings.Split(safe(a.Text), "\n") {
				fmt.Fprintf(w, "    | %s\n", line)
			}
			if a.Truncated {
				fmt.Fprintln(w, "    (extract truncated)")
			}
		}
		if a.Note != "" {
			fmt.Fprintf(w, "    %s\n", safe(a.Note))
		}
	}
	return nil
}

// reviewLoop serves, shows and asks until the queue is empty: approve,
// reject (with a reason), skip (the serve is released and the item passed
// over for the rest of the run) or quit.
func (c *cli) reviewLoop(ctx context.Context, workarea string) error {
	in := bufio.NewReader(c.stdin)
	ask := func(prompt string) (string, error) {
		fmt.Fprint(c.stdout, prompt)
		line, err := in.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			return "", err
		}
		return strings.TrimSpace(line), nil
	}
	var skip []string
	reviewed := 0
	for {
		s, _, ok, err := c.serveNext(ctx, workarea, skip)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(c.stdout, "The queue is empty (%d reviewed, %d skipped).\n", reviewed, len(skip))
			return nil
		}
		if err := c.printServed(ctx, c.stdout, s); err != nil {
			return err
		}
		for decided := false; !decided; {
			choice, err := ask("\n[a]pprove, [r]eject, [s]kip or [q]uit? ")
			if err != nil {
				_ = c.release(ctx, s.ServeID)
				if errors.Is(err, io.EOF) {
					return errors.New("review: input ended; the serve was released")
				}
				return err
			}
			switch strings.ToLower(choice) {
			case "a", "approve", "r", "reject":
				verb := "approve"
				prompt := "reason (optional): "
				if strings.HasPrefix(strings.ToLower(choice), "r") {
					verb, prompt = "reject", "reason (required): "
				}
				reason, err := ask(prompt)
				if err != nil {
					_ = c.release(ctx, s.ServeID)
					return err
				}
				if verb == "reject" && reason == "" {
					fmt.Fprintln(c.stdout, "A rejection needs a reason.")
					continue
				}
				var v verdictOut
				api, err := c.api()
				if err != nil {
					return err
				}
				if err := api.do(ctx, http.MethodPost, c.verdictRequest(s.ServeID, verb, reason).path, c.verdictRequest(s.ServeID, verb, reason).body, &v); err != nil {
					fmt.Fprintf(c.stdout, "refused: %v\n", err)
					decided = true // the serve is spent or gone: on to the next
					break
				}
				if err := printVerdict(c.stdout, v); err != nil {
					return err
				}
				reviewed++
				decided = true
			case "s", "skip":
				if err := c.release(ctx, s.ServeID); err != nil {
					return err
				}
				id := ""
				if s.Item != nil {
					id = s.Item.ArtifactID
				} else if s.Edge != nil {
					id = s.Edge.EdgeID
				}
				skip = append(skip, id)
				if len(skip) > 100 {
					skip = skip[len(skip)-100:]
				}
				fmt.Fprintln(c.stdout, "skipped (released)")
				decided = true
			case "q", "quit":
				if err := c.release(ctx, s.ServeID); err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "stopped; the serve was released (%d reviewed).\n", reviewed)
				return nil
			default:
				fmt.Fprintln(c.stdout, "Type a, r, s or q.")
			}
		}
	}
}

func (c *cli) release(ctx context.Context, serveID string) error {
	api, err := c.api()
	if err != nil {
		return err
	}
	return api.do(ctx, http.MethodPost, "/v1/reviews/"+url.PathEscape(serveID)+"/release", map[string]any{}, nil)
}

// pastTense names a verdict done.
func pastTense(verdict string) string {
	switch verdict {
	case "approve":
		return "approved"
	case "reject":
		return "rejected"
	}
	return verdict
}

// safe shows agent-written text in a terminal without its control
// sequences or direction overrides taking effect.
func safe(s string) string { return textsafe.Terminal(s) }

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
