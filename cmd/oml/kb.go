package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// kbPage is a knowledge-base page version as the CLI prints it.
type kbPage struct {
	Workarea   string     `json:"workarea"`
	Path       string     `json:"path"`
	Content    string     `json:"content"`
	Version    string     `json:"version"`
	State      string     `json:"state"`
	Deleted    bool       `json:"deleted"`
	ArtifactID string     `json:"artifact_id"`
	Revision   int        `json:"revision"`
	Author     string     `json:"author"`
	PromotedAt *time.Time `json:"promoted_at"`
	OwnHeld    []struct {
		Version    string `json:"version"`
		ArtifactID string `json:"artifact_id"`
	} `json:"own_held"`
}

const kbVerbs = "get, put, list, history, revert or delete"

// kb runs `oml kb get|put|list|history|revert|delete`: a workarea's
// knowledge base over /v1/kb (every write held for review).
func (c *cli) kb(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return c.unknownSubcommand("kb", "", kbVerbs)
	}
	verb, args := args[0], args[1:]
	fs := c.flags("kb "+verb, kbSynopsis[verb])
	workarea := fs.String("workarea", "", "the workarea (id or path) whose knowledge base to use (required)")
	switch verb {
	case "get":
		version := fs.String("version", "", "an earlier promoted version (kb history lists them)")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}, "path": {pos[0]}}
		if *version != "" {
			q.Set("version", *version)
		}
		_, err = exchange(ctx, c, request{method: http.MethodGet, path: "/v1/kb?" + q.Encode()}, func(w io.Writer, p kbPage) error {
			if _, err := fmt.Fprintf(w, "%s  %s  revision %d  %s  by %s\n", p.Path, p.State, p.Revision, p.Version, p.Author); err != nil {
				return err
			}
			for _, h := range p.OwnHeld {
				if _, err := fmt.Fprintf(w, "your version %s (%s) waits for review\n", h.Version, h.ArtifactID); err != nil {
					return err
				}
			}
			_, err := fmt.Fprintf(w, "\n%s\n", strings.TrimSuffix(p.Content, "\n"))
			return err
		})
		return err
	case "put":
		file := fs.String("file", "-", "the page's content: a file, or - for standard input")
		ifVersion := fs.String("if-version", "", "write only while the page's promoted head is this version (absent: a new page), now and at promotion")
		staleAfter := fs.String("stale-after", "", "when the page should be looked at again (RFC 3339)")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		content, err := c.readContent(*file)
		if err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}, "path": {pos[0]}}
		if *ifVersion != "" {
			q.Set("if_version", *ifVersion)
		}
		if *staleAfter != "" {
			q.Set("stale_after", *staleAfter)
		}
		_, err = exchange(ctx, c, request{method: http.MethodPut, path: "/v1/kb?" + q.Encode(), body: rawBody(content)}, printHeld)
		return err
	case "list":
		prefix := fs.String("prefix", "", "only pages under this path (/fs/…)")
		cursor := fs.String("cursor", "", "the next_cursor of the page before")
		limit := fs.Int("limit", 0, "pages at most (1–500, default 100)")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}}
		for name, v := range map[string]string{"prefix": *prefix, "cursor": *cursor} {
			if v != "" {
				q.Set(name, v)
			}
		}
		if *limit != 0 {
			q.Set("limit", fmt.Sprint(*limit))
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/kb?" + q.Encode()}, func(w io.Writer, l struct {
			Pages []struct {
				Path      string `json:"path"`
				Version   string `json:"version"`
				SizeBytes int64  `json:"size_bytes"`
			} `json:"pages"`
			NextCursor *string `json:"next_cursor"`
		}) error {
			tw := table(w)
			for _, p := range l.Pages {
				fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Path, p.SizeBytes, p.Version)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printMore(w, l.NextCursor)
		})
		return err
	case "history":
		cursor := fs.String("cursor", "", "the next_cursor of the page before")
		limit := fs.Int("limit", 0, "versions at most (1–500, default 100)")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}, "path": {pos[0]}}
		if *cursor != "" {
			q.Set("cursor", *cursor)
		}
		if *limit != 0 {
			q.Set("limit", fmt.Sprint(*limit))
		}
		_, err = exchange(ctx, c, request{method: http.MethodGet, path: "/v1/kb/history?" + q.Encode()}, func(w io.Writer, h struct {
			Versions []struct {
				Version    string     `json:"version"`
				Revision   int        `json:"revision"`
				Author     string     `json:"author"`
				Deleted    bool       `json:"deleted"`
				PromotedAt *time.Time `json:"promoted_at"`
			} `json:"versions"`
			NextCursor *string `json:"next_cursor"`
		}) error {
			tw := table(w)
			for _, v := range h.Versions {
				what := v.Version
				if v.Deleted {
					what = "(deleted)"
				}
				at := "-"
				if v.PromotedAt != nil {
					at = v.PromotedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.Revision, at, v.Author, what)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printMore(w, h.NextCursor)
		})
		return err
	case "revert":
		ifVersion := fs.String("if-version", "", "write only while the page's promoted head is this version, now and at promotion")
		pos, err := parse(fs, args, 2)
		if err != nil {
			return err
		}
		body := map[string]any{"workarea": *workarea, "path": pos[0], "version": pos[1]}
		if *ifVersion != "" {
			body["if_version"] = *ifVersion
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/kb/revert", body: body}, printHeld)
		return err
	case "delete":
		ifVersion := fs.String("if-version", "", "delete only while the page's promoted head is this version, now and at promotion")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}, "path": {pos[0]}}
		if *ifVersion != "" {
			q.Set("if_version", *ifVersion)
		}
		_, err = exchange(ctx, c, request{method: http.MethodDelete, path: "/v1/kb?" + q.Encode()}, printHeld)
		return err
	}
	return c.unknownSubcommand("kb", verb, kbVerbs)
}

var kbSynopsis = map[string]string{
	"get":     "PATH --workarea W [--version V]",
	"put":     "PATH --workarea W [--file F|-] [--if-version V|absent] [--stale-after T]",
	"list":    "--workarea W [--prefix P] [--cursor C] [--limit N]",
	"history": "PATH --workarea W [--cursor C] [--limit N]",
	"revert":  "PATH VERSION --workarea W [--if-version V]",
	"delete":  "PATH --workarea W [--if-version V]",
}

func printHeld(w io.Writer, p kbPage) error {
	what := "version"
	if p.Deleted {
		what = "deletion"
	}
	_, err := fmt.Fprintf(w, "%s %s of %s: %s, held for review as %s\n", what, p.Version, p.Path, p.State, p.ArtifactID)
	return err
}

// readContent reads a page's content from a file or, for "-", standard
// input, bounded a byte past the largest page so an oversized one is
// refused by the server, not truncated here.
func (c *cli) readContent(file string) (string, error) {
	var r io.Reader = c.stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	return string(b), err
}
