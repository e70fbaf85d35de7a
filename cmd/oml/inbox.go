package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// inboxItem is an inbox item as the CLI prints it.
type inboxItem struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Workarea string   `json:"workarea"`
	Status   string   `json:"status"`
	Body     string   `json:"body"`
	Options  []string `json:"options"`
	Asker    string   `json:"asker"`
	Expired  bool     `json:"expired"`
	Answer   *struct {
		Body string `json:"body"`
		By   string `json:"by"`
	} `json:"answer"`
	Decision *struct {
		Decision string `json:"decision"`
		Note     string `json:"note"`
		By       string `json:"by"`
	} `json:"decision"`
}

func printItem(w io.Writer, it inboxItem) error {
	line := fmt.Sprintf("%s  %-8s %-9s %s: %s", it.ID, it.Kind, it.Status, it.Asker, it.Body)
	if len(it.Options) > 0 {
		line += "  [" + strings.Join(it.Options, " | ") + "]"
	}
	switch {
	case it.Answer != nil:
		line += fmt.Sprintf("\n    answered by %s: %s", it.Answer.By, it.Answer.Body)
	case it.Decision != nil:
		line += fmt.Sprintf("\n    %s by %s: %s", it.Decision.Decision, it.Decision.By, it.Decision.Note)
	}
	if it.Expired {
		line += " (resolved by the hub at its deadline)"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

const inboxVerbs = "list (the default), answer or decide"

// inbox runs `oml inbox [--workarea W] [--status S]`, `oml inbox answer ID
// TEXT` and `oml inbox decide ID approve|decline [--note TEXT]`.
func (c *cli) inbox(ctx context.Context, args []string) error {
	verb := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	switch verb {
	case "list":
		fs := c.flags("inbox", "[--workarea ID|PATH] [--status S] [--since SEQ] [--wait SECONDS]")
		workarea := fs.String("workarea", "", "items in this workarea's subtree")
		status := fs.String("status", "", "open, resolved, answered, approved, declined or expired")
		since := fs.String("since", "", "the next_since of an earlier read")
		wait := fs.Int("wait", 0, "wait up to this many seconds (at most 60) for an item after --since to land")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		q := url.Values{}
		if *wait > 0 {
			q.Set("wait", fmt.Sprint(*wait))
		}
		for name, v := range map[string]string{"workarea": *workarea, "status": *status, "since": *since} {
			if v != "" {
				q.Set(name, v)
			}
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/inbox?" + q.Encode()},
			func(w io.Writer, page struct {
				Items     []inboxItem `json:"items"`
				NextSince int64       `json:"next_since"`
			}) error {
				for _, it := range page.Items {
					if err := printItem(w, it); err != nil {
						return err
					}
				}
				_, err := fmt.Fprintf(w, "(%d items; next: --since %d)\n", len(page.Items), page.NextSince)
				return err
			})
		return err
	case "answer":
		fs := c.flags("inbox answer", "ID TEXT")
		pos, err := parse(fs, args, 2)
		if err != nil {
			return err
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/inbox/" + url.PathEscape(pos[0]) + "/answer",
			body: map[string]string{"body": pos[1]}}, printItem)
		return err
	case "decide":
		fs := c.flags("inbox decide", "ID approve|decline [--note TEXT] [--role R --grant WORKAREA:SCOPE …]")
		note := fs.String("note", "", "why (shown to the asker)")
		role := fs.String("role", "", "an enrolment request's approval: the new key's role (reader, writer or dreamer)")
		var grants []map[string]string
		fs.Func("grant", "an enrolment request's approval: WORKAREA:SCOPE to grant the new key (repeatable)", func(v string) error {
			w, s, ok := strings.Cut(v, ":")
			if !ok || w == "" || s == "" {
				return fmt.Errorf("want WORKAREA:SCOPE, got %q", v)
			}
			grants = append(grants, map[string]string{"workarea": w, "scope": s})
			return nil
		})
		pos, err := parse(fs, args, 2)
		if err != nil {
			return err
		}
		decision := map[string]string{"approve": "approved", "decline": "declined"}[pos[1]]
		if decision == "" {
			return fmt.Errorf("inbox decide: want approve or decline, got %q", pos[1])
		}
		body := map[string]any{"decision": decision, "note": *note}
		if *role != "" {
			body["role"] = *role
		}
		if grants != nil {
			body["grants"] = grants
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/inbox/" + url.PathEscape(pos[0]) + "/decide",
			body: body}, printItem)
		return err
	}
	return c.unknownSubcommand("inbox", verb, inboxVerbs)
}
