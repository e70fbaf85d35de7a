package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// docView is a document as the CLI prints it.
type docView struct {
	ArtifactID    string  `json:"artifact_id"`
	Title         string  `json:"title"`
	Format        string  `json:"format"`
	Visibility    string  `json:"visibility"`
	State         string  `json:"state"`
	Version       string  `json:"version"`
	Revision      int     `json:"revision"`
	ReviewID      string  `json:"review_id"`
	ViewerURL     string  `json:"viewer_url"`
	Content       *string `json:"content"`
	CommentsCount int     `json:"comments_count"`
	CommentsOpen  int     `json:"comments_open"`
}

const docsVerbs = "publish, get or list"

// docs runs `oml docs publish|get|list`: documents over /v1/documents.
func (c *cli) docs(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return c.unknownSubcommand("docs", "", docsVerbs)
	}
	verb, args := args[0], args[1:]
	switch verb {
	case "publish":
		fs := c.flags("docs publish", "--workarea W --format html|markdown [--file F|-] [--title T] [--visibility workarea|public|password] [--password P] [--update DOC_ID --base-version V]")
		workarea := fs.String("workarea", "", "the workarea (id or path) of a new document")
		format := fs.String("format", "", "html or markdown (a new document)")
		file := fs.String("file", "-", "the content: a file, or - for standard input")
		title := fs.String("title", "", "the title (a markdown document's first heading when blank)")
		visibility := fs.String("visibility", "", "workarea (the default), public or password")
		password := fs.String("password", "", "with --visibility password")
		update := fs.String("update", "", "publish a new version of this document (doc_…) instead")
		base := fs.String("base-version", "", "with --update: the version you edited")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		content, err := c.readContent(*file)
		if err != nil {
			return err
		}
		req := request{method: http.MethodPost, path: "/v1/documents", body: map[string]any{"workarea": *workarea, "format": *format,
			"content": content, "title": *title, "visibility": *visibility, "password": *password}}
		if *update != "" {
			req = request{method: http.MethodPost, path: "/v1/documents/" + url.PathEscape(*update) + "/versions",
				body: map[string]any{"content": content, "title": *title, "base_version": *base}}
		}
		_, err = exchange(ctx, c, req, func(w io.Writer, d docView) error {
			_, err := fmt.Fprintf(w, "%s version %s: %s, held for review as %s\n", d.ArtifactID, d.Version, d.State, d.ReviewID)
			return err
		})
		return err
	case "get":
		fs := c.flags("docs get", "DOC_ID [--version V]")
		version := fs.String("version", "", "an earlier promoted version")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		path := "/v1/documents/" + url.PathEscape(pos[0])
		if *version != "" {
			path += "?version=" + url.QueryEscape(*version)
		}
		_, err = exchange(ctx, c, request{method: http.MethodGet, path: path}, func(w io.Writer, d docView) error {
			if _, err := fmt.Fprintf(w, "%s  %q  %s %s  revision %d  comments %d (%d open)  %s\n", d.ArtifactID, d.Title, d.Format, d.State,
				d.Revision, d.CommentsCount, d.CommentsOpen, orDash(d.ViewerURL)); err != nil {
				return err
			}
			if d.Content != nil {
				_, err := fmt.Fprintf(w, "\n%s\n", *d.Content)
				return err
			}
			return nil
		})
		return err
	case "list":
		fs := c.flags("docs list", "--workarea W [--session S] [--cursor C] [--limit N]")
		workarea := fs.String("workarea", "", "the workarea (id or path)")
		session := fs.String("session", "", "only this session's documents")
		cursor := fs.String("cursor", "", "the next_cursor of the page before")
		limit := fs.Int("limit", 0, "documents at most (1–200, default 50)")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		q := url.Values{"workarea": {*workarea}}
		for name, v := range map[string]string{"session_id": *session, "cursor": *cursor} {
			if v != "" {
				q.Set(name, v)
			}
		}
		if *limit != 0 {
			q.Set("limit", fmt.Sprint(*limit))
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/documents?" + q.Encode()}, func(w io.Writer, l struct {
			Artifacts  []docView `json:"artifacts"`
			NextCursor *string   `json:"next_cursor"`
		}) error {
			tw := table(w)
			for _, d := range l.Artifacts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d comments\n", d.ArtifactID, d.Title, d.State, d.Visibility, d.CommentsOpen, d.CommentsCount)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printMore(w, l.NextCursor)
		})
		return err
	}
	return c.unknownSubcommand("docs", verb, docsVerbs)
}
