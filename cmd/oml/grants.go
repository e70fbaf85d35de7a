package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// grantResult is the answer to POST /v1/grants.
type grantResult struct {
	GrantID         string `json:"grant_id"`
	PermissionEpoch int64  `json:"permission_epoch"`
	KeyID           string `json:"key_id"`
	Workarea        string `json:"workarea"`
	Scope           string `json:"scope"`
	Effect          string `json:"effect"`
	// Created is false when an identical grant already existed.
	Created          bool  `json:"created"`
	IdempotentReplay *bool `json:"idempotent_replay,omitempty"`
}

const grantVerbs = "add, remove or list"

func (c *cli) grants(ctx context.Context, args []string) error {
	verb, args, err := c.subcommand("grant", args, grantVerbs)
	if err != nil {
		return err
	}
	switch verb {
	case "add":
		return c.grantAdd(ctx, args)
	case "remove":
		return c.grantRemove(ctx, args)
	case "list":
		return c.grantList(ctx, args)
	}
	return c.unknownSubcommand("grant", verb, grantVerbs)
}

func (c *cli) grantAdd(ctx context.Context, args []string) error {
	fs := c.flags("grant add", "--key KEY_ID --workarea ID|PATH --scope SCOPE [flags]")
	key := fs.String("key", "", "key id the grant applies to (required)")
	workarea := fs.String("workarea", "", "workarea id or path; the grant covers its subtree (required)")
	scope := fs.String("scope", "", "reader|writer|dreamer.propose|dreamer.review|admin (required)")
	effect := fs.String("effect", "allow", "allow|deny (deny wins over allow, D7)")
	idem := fs.String("idempotency-key", "", "replay-safe key for this write (D13)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *key == "" || *workarea == "" || *scope == "" {
		return errors.New("grant add: --key, --workarea and --scope are required")
	}
	body := struct {
		KeyID    string `json:"key_id"`
		Workarea string `json:"workarea"`
		Scope    string `json:"scope"`
		Effect   string `json:"effect"`
	}{*key, *workarea, *scope, *effect}
	_, err := exchange(ctx, c, request{method: http.MethodPost, path: "/v1/grants", body: body, idempotencyKey: *idem},
		func(w io.Writer, g grantResult) error {
			what := "added"
			if !g.Created {
				what = "already present:"
			}
			_, err := fmt.Fprintf(w, "grant %s %s %s %s on %s for key %s; permission epoch %d%s\n",
				what, g.GrantID, g.Effect, g.Scope, g.Workarea, g.KeyID, g.PermissionEpoch, replayNote(g.IdempotentReplay))
			return err
		})
	return err
}

func (c *cli) grantRemove(ctx context.Context, args []string) error {
	fs := c.flags("grant remove", "GRANT_ID")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	type removed struct {
		GrantID         string `json:"grant_id"`
		PermissionEpoch int64  `json:"permission_epoch"`
	}
	_, err = exchange(ctx, c, request{method: http.MethodDelete, path: "/v1/grants/" + url.PathEscape(pos[0])},
		func(w io.Writer, r removed) error {
			_, err := fmt.Fprintf(w, "grant removed %s; permission epoch %d\n", r.GrantID, r.PermissionEpoch)
			return err
		})
	return err
}

// grantList runs `oml grant list --workarea W | --key K [--epoch N]
// [--cursor C] [--limit N]`: the grants bound to W or given to K, live now
// or in force at epoch N, a page at a time.
func (c *cli) grantList(ctx context.Context, args []string) error {
	fs := c.flags("grant list", "--workarea ID|PATH | --key KEY_ID [--epoch N] [--cursor C] [--limit N]")
	workarea := fs.String("workarea", "", "grants bound to this workarea (admin on it)")
	key := fs.String("key", "", "grants of this key (admin on universe, or with --workarea)")
	epoch := fs.Int64("epoch", -1, "grants in force at this permission_epoch (default: live now)")
	cursor := fs.String("cursor", "", "the next_cursor of the previous page")
	limit := fs.Int("limit", 0, "grants per page, 1–500 (default 100)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *workarea == "" && *key == "" {
		return errors.New("grant list: --workarea or --key is required")
	}
	q := url.Values{}
	for name, v := range map[string]string{"workarea": *workarea, "key_id": *key, "cursor": *cursor} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if *epoch >= 0 {
		q.Set("epoch", fmt.Sprint(*epoch))
	}
	if *limit > 0 {
		q.Set("limit", fmt.Sprint(*limit))
	}
	_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/grants?" + q.Encode()},
		func(w io.Writer, page struct {
			Grants []struct {
				GrantID      string `json:"grant_id"`
				KeyID        string `json:"key_id"`
				Principal    string `json:"principal"`
				WorkareaPath string `json:"workarea_path"`
				Scope        string `json:"scope"`
				Effect       string `json:"effect"`
				KeyRevoked   bool   `json:"key_revoked"`
			} `json:"grants"`
			Epoch      int64   `json:"permission_epoch"`
			NextCursor *string `json:"next_cursor"`
		}) error {
			tw := table(w)
			fmt.Fprintln(tw, "GRANT\tKEY\tPRINCIPAL\tWORKAREA\tSCOPE\tEFFECT")
			for _, g := range page.Grants {
				principal := g.Principal
				if g.KeyRevoked {
					principal += " (key revoked)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.GrantID, g.KeyID, principal, g.WorkareaPath, g.Scope, g.Effect)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if page.NextCursor != nil {
				_, err := fmt.Fprintf(w, "(permission epoch %d; more: --cursor %s)\n", page.Epoch, *page.NextCursor)
				return err
			}
			_, err := fmt.Fprintf(w, "(permission epoch %d)\n", page.Epoch)
			return err
		})
	return err
}
