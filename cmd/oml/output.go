package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
)

// request is one HTTP call of a command.
type request struct {
	method string
	path   string
	body   any
	// idempotencyKey, if set, is sent as the Idempotency-Key header (D13).
	idempotencyKey string
}

// exchange sends req and prints the answer: the server's JSON under --json,
// else human(T). It returns the decoded answer so callers can act on it
// (the journal check sets the exit status from it).
func exchange[T any](ctx context.Context, c *cli, req request, human func(io.Writer, T) error) (T, error) {
	var out T
	api, err := c.api()
	if err != nil {
		return out, err
	}
	var header http.Header
	if req.idempotencyKey != "" {
		header = http.Header{"Idempotency-Key": {req.idempotencyKey}}
	}
	var raw json.RawMessage
	if err := api.doWith(ctx, req.method, req.path, header, req.body, &raw); err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%s %s: decode response: %w", req.method, req.path, err)
	}
	if c.json {
		return out, printJSON(c.stdout, raw)
	}
	return out, human(c.stdout, out)
}

// printJSON writes raw indented, keeping the server's field order.
func printJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("indent JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := buf.WriteTo(w)
	return err
}

// printValue writes v as indented JSON.
func printValue(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// table aligns tab-separated columns.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// orDash renders an absent value.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printMore says how to go on from a paged listing (nothing at its end).
func printMore(w io.Writer, next *string) error {
	if next == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "(more: --cursor %s)\n", *next)
	return err
}
