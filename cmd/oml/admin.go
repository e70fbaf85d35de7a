package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

func (c *cli) admin(ctx context.Context, args []string) error {
	if len(args) >= 2 && args[0] == "journal" && args[1] == "verify" {
		return c.journalVerify(ctx, args[2:])
	}
	fmt.Fprint(c.stderr, usage)
	return fmt.Errorf("admin: unknown subcommand %q (want journal verify)", strings.Join(args, " "))
}

// journalVerify asks the server to recompute the tenant's hash chain (D1).
// A broken chain is a failure of the command, so scripts and cron see it in
// the exit status.
func (c *cli) journalVerify(ctx context.Context, args []string) error {
	fs := c.flags("admin journal verify", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	rep, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/admin/journal/verify"},
		func(w io.Writer, rep journalReport) error {
			if rep.OK {
				_, err := fmt.Fprintf(w, "journal ok: %d events, head seq %d\n", rep.Events, rep.HeadSeq)
				return err
			}
			_, err := fmt.Fprintf(w, "journal BROKEN at seq %d (event %s): %s\n", rep.BadSeq, rep.BadID, rep.Reason)
			return err
		})
	if err != nil {
		return err
	}
	if !rep.OK {
		return fmt.Errorf("journal broken at seq %d (event %s): %s", rep.BadSeq, rep.BadID, rep.Reason)
	}
	return nil
}

// journalReport is the body of GET /v1/admin/journal/verify. It is declared
// here rather than imported so the CLI does not link the server's database
// packages.
type journalReport struct {
	Events  int64  `json:"events"`
	HeadSeq int64  `json:"head_seq"`
	OK      bool   `json:"ok"`
	BadSeq  int64  `json:"bad_seq,omitempty"`
	BadID   string `json:"bad_event_id,omitempty"`
	Reason  string `json:"reason,omitempty"`
}
