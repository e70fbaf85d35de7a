package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

func (c *cli) admin(ctx context.Context, args []string) error {
	if len(args) >= 2 && args[0] == "journal" && args[1] == "verify" {
		return c.journalVerify(ctx, args[2:])
	}
	if len(args) >= 1 && args[0] == "upload-limit" {
		return c.uploadLimit(ctx, args[1:])
	}
	if len(args) >= 1 && args[0] == "read-log" {
		return c.readLog(ctx, args[1:])
	}
	if len(args) >= 1 && args[0] == "quota" {
		return c.quota(ctx, args[1:])
	}
	if len(args) >= 1 && args[0] == "simulation" {
		return c.simulationCmd(ctx, args[1:])
	}
	fmt.Fprint(c.stderr, usage)
	return fmt.Errorf("admin: unknown subcommand %q (want journal verify, upload-limit, read-log, quota or simulation)", strings.Join(args, " "))
}

// uploadLimit shows or sets the tenant's attachment size ceiling.
func (c *cli) uploadLimit(ctx context.Context, args []string) error {
	fs := c.flags("admin upload-limit", "[BYTES]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := request{method: http.MethodGet, path: "/v1/attachments/limits"}
	switch fs.NArg() {
	case 0:
	case 1:
		n, err := strconv.ParseInt(fs.Arg(0), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("admin upload-limit: BYTES must be a whole number ≥ 0, got %q", fs.Arg(0))
		}
		req = request{method: http.MethodPut, path: "/v1/attachments/limits", body: map[string]int64{"max_upload_bytes": n}}
	default:
		return fmt.Errorf("admin upload-limit: at most one argument (BYTES), got %d", fs.NArg())
	}
	_, err := exchange(ctx, c, req, func(w io.Writer, l uploadLimits) error {
		source := "the deployment's"
		if l.TenantSet {
			source = "set for this tenant"
		}
		_, err := fmt.Fprintf(w, "attachment size ceiling: %d bytes (%s; deployment ceiling %d)\n", l.Max, source, l.Deployment)
		return err
	})
	return err
}

// uploadLimits is the body of GET/PUT /v1/attachments/limits.
type uploadLimits struct {
	Max        int64 `json:"max_upload_bytes"`
	Deployment int64 `json:"deployment_max_upload_bytes"`
	TenantSet  bool  `json:"tenant_set"`
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
				if err == nil && rep.Pending > 0 {
					_, err = fmt.Fprintf(w, "%d events committed and waiting to be chained (the sequencer or the sweep chains them)\n", rep.Pending)
				}
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
	Pending int64  `json:"pending"`
	Events  int64  `json:"events"`
	HeadSeq int64  `json:"head_seq"`
	OK      bool   `json:"ok"`
	BadSeq  int64  `json:"bad_seq,omitempty"`
	BadID   string `json:"bad_event_id,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// readLog runs `oml admin read-log --key K | --workarea W [--cursor C]
// [--limit N]`: who read what, newest first.
func (c *cli) readLog(ctx context.Context, args []string) error {
	fs := c.flags("admin read-log", "--key KEY_ID | --workarea ID|PATH [--cursor C] [--limit N]")
	key := fs.String("key", "", "reads by this key (admin on universe)")
	workarea := fs.String("workarea", "", "reads scoped to this workarea (admin on it)")
	cursor := fs.String("cursor", "", "the next_cursor of the previous page")
	limit := fs.Int("limit", 0, "rows per page, 1–500 (default 100)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *key == "" && *workarea == "" {
		return fmt.Errorf("admin read-log: --key or --workarea is required")
	}
	q := url.Values{}
	for name, v := range map[string]string{"key_id": *key, "workarea": *workarea, "cursor": *cursor} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if *limit > 0 {
		q.Set("limit", fmt.Sprint(*limit))
	}
	_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/read-log?" + q.Encode()},
		func(w io.Writer, page struct {
			Reads []struct {
				KeyID     string    `json:"key_id"`
				Workarea  string    `json:"workarea"`
				Operation string    `json:"operation"`
				Returned  []string  `json:"returned"`
				At        time.Time `json:"at"`
			} `json:"reads"`
			NextCursor *string `json:"next_cursor"`
		}) error {
			tw := table(w)
			fmt.Fprintln(tw, "AT\tKEY\tOPERATION\tWORKAREA\tRETURNED")
			for _, r := range page.Reads {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.At.UTC().Format(time.RFC3339), r.KeyID, r.Operation, r.Workarea, len(r.Returned))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printMore(w, page.NextCursor)
		})
	return err
}

// quota runs `oml admin quota show` and `oml admin quota set
// --writes-per-minute N | --key KEY_ID --requests-per-minute N` (0 clears).
func (c *cli) quota(ctx context.Context, args []string) error {
	verb, rest, err := c.subcommand("admin quota", args, "show or set")
	if err != nil {
		return err
	}
	show := func(w io.Writer, q struct {
		WritesPerMinute *int `json:"writes_per_minute"`
		Keys            []struct {
			KeyID             string `json:"key_id"`
			RequestsPerMinute int    `json:"requests_per_minute"`
		} `json:"keys"`
	}) error {
		if q.WritesPerMinute == nil {
			fmt.Fprintln(w, "tenant writes: no limit")
		} else {
			fmt.Fprintf(w, "tenant writes: %d a minute\n", *q.WritesPerMinute)
		}
		for _, k := range q.Keys {
			fmt.Fprintf(w, "key %s: %d requests a minute\n", k.KeyID, k.RequestsPerMinute)
		}
		return nil
	}
	switch verb {
	case "show":
		if _, err := parse(c.flags("admin quota show", ""), rest, 0); err != nil {
			return err
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/quotas"}, show)
		return err
	case "set":
		fs := c.flags("admin quota set", "--writes-per-minute N | --key KEY_ID --requests-per-minute N")
		writes := fs.Int("writes-per-minute", -1, "the tenant's writes a minute (0: no limit)")
		key := fs.String("key", "", "the key whose requests to limit")
		requests := fs.Int("requests-per-minute", -1, "the key's requests a minute (0: no limit)")
		if _, err := parse(fs, rest, 0); err != nil {
			return err
		}
		var body map[string]any
		switch {
		case *writes >= 0 && *key == "" && *requests < 0:
			body = map[string]any{"writes_per_minute": *writes}
		case *writes < 0 && *key != "" && *requests >= 0:
			body = map[string]any{"key_id": *key, "requests_per_minute": *requests}
		default:
			return fmt.Errorf("admin quota set: give --writes-per-minute, or --key with --requests-per-minute")
		}
		_, err := exchange(ctx, c, request{method: http.MethodPut, path: "/v1/quotas", body: body}, show)
		return err
	}
	return c.unknownSubcommand("admin quota", verb, "show or set")
}
