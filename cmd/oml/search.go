package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// search runs `oml search QUERY [--workarea W | --session S] [--limit N]`:
// feed events, promoted knowledge-base pages and documents, and the key's
// own session brains, ranked.
func (c *cli) search(ctx context.Context, args []string) error {
	fs := c.flags("search", "QUERY [--workarea W | --session S] [--limit N]")
	workarea := fs.String("workarea", "", "a workarea's subtree (id or path)")
	session := fs.String("session", "", "one of your sessions: its brain only")
	limit := fs.Int("limit", 0, "hits at most (1–100, default 20)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	q := url.Values{"query": {pos[0]}}
	if *workarea != "" {
		q.Set("workarea", *workarea)
	}
	if *session != "" {
		q.Set("session_id", *session)
	}
	if *limit != 0 {
		q.Set("limit", fmt.Sprint(*limit))
	}
	_, err = exchange(ctx, c, request{method: http.MethodGet, path: "/v1/search?" + q.Encode()}, func(w io.Writer, out struct {
		Hits []struct {
			Family       string `json:"family"`
			ID           string `json:"id"`
			WorkareaPath string `json:"workarea_path"`
			Title        string `json:"title"`
			Snippet      string `json:"snippet"`
		} `json:"hits"`
	}) error {
		for _, h := range out.Hits {
			snippet := strings.Join(strings.Fields(h.Snippet), " ")
			if _, err := fmt.Fprintf(w, "%-5s %s  %s  %s\n      %s\n", h.Family, h.WorkareaPath, h.Title, h.ID, snippet); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "(%d hits)\n", len(out.Hits))
		return err
	})
	return err
}
