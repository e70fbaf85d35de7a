package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// web runs `oml web link`: a one-time link that signs a browser in as the
// calling key. The link carries a code that works once, for 10 minutes;
// the key never leaves the terminal.
func (c *cli) web(ctx context.Context, args []string) error {
	verb, rest, err := c.subcommand("web", args, "link")
	if err != nil {
		return err
	}
	if verb != "link" {
		return c.unknownSubcommand("web", verb, "link")
	}
	if _, err := parse(c.flags("web link", ""), rest, 0); err != nil {
		return err
	}
	base, err := baseURL(c.url)
	if err != nil {
		return err
	}
	_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/web/sign-in-codes", body: map[string]any{}},
		func(w io.Writer, out struct {
			Path      string    `json:"path"`
			ExpiresAt time.Time `json:"expires_at"`
		}) error {
			_, err := fmt.Fprintf(w, "%s%s\n(one use, until %s)\n", base, out.Path, out.ExpiresAt.UTC().Format(time.RFC3339))
			return err
		})
	return err
}
