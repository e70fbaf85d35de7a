package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// artifactState is what demote and erase answer.
type artifactState struct {
	ArtifactID string `json:"artifact_id"`
	ClaimKey   string `json:"claim_key"`
	Version    int    `json:"version"`
	State      string `json:"state"`
	Workarea   string `json:"workarea"`
}

const artifactVerbs = "show, demote or erase"

// artifacts runs `oml artifact show|demote|erase`.
func (c *cli) artifacts(ctx context.Context, args []string) error {
	verb, args, err := c.subcommand("artifact", args, artifactVerbs)
	if err != nil {
		return err
	}
	switch verb {
	case "show":
		fs := c.flags("artifact show", "ARTIFACT_ID")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		_, err = exchange(ctx, c, request{method: http.MethodGet, path: "/v1/artifacts/" + url.PathEscape(pos[0])},
			func(w io.Writer, v map[string]any) error { return printValue(w, v) })
		return err
	case "demote", "erase":
		fs := c.flags("artifact "+verb, "ARTIFACT_ID --reason TEXT")
		reason := fs.String("reason", "", "why (required; journalled)")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		if strings.TrimSpace(*reason) == "" {
			return fmt.Errorf("artifact %s: --reason is required", verb)
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/artifacts/" + url.PathEscape(pos[0]) + "/" + verb,
			body: map[string]string{"reason": *reason}},
			func(w io.Writer, a artifactState) error {
				_, err := fmt.Fprintf(w, "%s (%s v%d) is now %s\n", a.ArtifactID, a.ClaimKey, a.Version, a.State)
				return err
			})
		return err
	}
	return c.unknownSubcommand("artifact", verb, artifactVerbs)
}

// banInfo is one ban as the server shows it.
type banInfo struct {
	BanID     string     `json:"ban_id"`
	Principal string     `json:"principal"`
	Reason    string     `json:"reason"`
	CreatedAt *time.Time `json:"created_at"`
	LiftedAt  *time.Time `json:"lifted_at"`
}

const banVerbs = "add, list or lift"

// bans runs `oml ban add|list|lift`.
func (c *cli) bans(ctx context.Context, args []string) error {
	verb, args, err := c.subcommand("ban", args, banVerbs)
	if err != nil {
		return err
	}
	switch verb {
	case "add":
		fs := c.flags("ban add", "--principal NAME --reason TEXT")
		principal := fs.String("principal", "", "the principal whose submissions are refused (required)")
		reason := fs.String("reason", "", "why (required; journalled)")
		if _, err := parse(fs, args, 0); err != nil {
			return err
		}
		if *principal == "" || strings.TrimSpace(*reason) == "" {
			return errors.New("ban add: --principal and --reason are required")
		}
		_, err := exchange(ctx, c, request{method: http.MethodPost, path: "/v1/bans", body: map[string]string{"principal": *principal, "reason": *reason}},
			func(w io.Writer, b banInfo) error {
				_, err := fmt.Fprintf(w, "banned %s (%s): %s\n", b.Principal, b.BanID, b.Reason)
				return err
			})
		return err
	case "list":
		if _, err := parse(c.flags("ban list", ""), args, 0); err != nil {
			return err
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/bans"},
			func(w io.Writer, out struct {
				Bans []banInfo `json:"bans"`
			}) error {
				tw := table(w)
				fmt.Fprintln(tw, "BAN\tPRINCIPAL\tSINCE\tLIFTED\tREASON")
				for _, b := range out.Bans {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.BanID, b.Principal, stamp(b.CreatedAt), stamp(b.LiftedAt), b.Reason)
				}
				return tw.Flush()
			})
		return err
	case "lift":
		fs := c.flags("ban lift", "BAN_ID")
		pos, err := parse(fs, args, 1)
		if err != nil {
			return err
		}
		_, err = exchange(ctx, c, request{method: http.MethodDelete, path: "/v1/bans/" + url.PathEscape(pos[0])},
			func(w io.Writer, b banInfo) error {
				_, err := fmt.Fprintf(w, "lifted ban %s at %s\n", b.BanID, stamp(b.LiftedAt))
				return err
			})
		return err
	}
	return c.unknownSubcommand("ban", verb, banVerbs)
}
