package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// issuedKey is the answer to POST /v1/keys: the only time the token is sent.
type issuedKey struct {
	KeyID     string `json:"key_id"`
	Token     string `json:"token"`
	Principal string `json:"principal"`
	Role      string `json:"role"`
}

// keyInfo is a key as listed and as revoked.
type keyInfo struct {
	KeyID     string     `json:"key_id"`
	Principal string     `json:"principal"`
	Role      string     `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	// PermissionEpoch is set by revoke only.
	PermissionEpoch int64 `json:"permission_epoch"`
}

const keyVerbs = "issue, list or revoke"

func (c *cli) keys(ctx context.Context, args []string) error {
	verb, args, err := c.subcommand("key", args, keyVerbs)
	if err != nil {
		return err
	}
	switch verb {
	case "issue":
		return c.keyIssue(ctx, args)
	case "list":
		return c.keyList(ctx, args)
	case "revoke":
		return c.keyRevoke(ctx, args)
	}
	return c.unknownSubcommand("key", verb, keyVerbs)
}

func (c *cli) keyIssue(ctx context.Context, args []string) error {
	fs := c.flags("key issue", "--principal NAME --role ROLE")
	principal := fs.String("principal", "", "principal (identity) the key acts as (required)")
	role := fs.String("role", "", "reader|writer|dreamer|admin|operator (required)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *principal == "" || *role == "" {
		return errors.New("key issue: --principal and --role are required")
	}
	body := struct {
		Principal string `json:"principal"`
		Role      string `json:"role"`
	}{*principal, *role}
	_, err := exchange(ctx, c, request{method: http.MethodPost, path: "/v1/keys", body: body},
		func(w io.Writer, k issuedKey) error {
			tw := table(w)
			fmt.Fprintf(tw, "key_id\t%s\n", k.KeyID)
			fmt.Fprintf(tw, "principal\t%s\n", k.Principal)
			fmt.Fprintf(tw, "role\t%s\n", k.Role)
			fmt.Fprintf(tw, "token\t%s\n", k.Token)
			if err := tw.Flush(); err != nil {
				return err
			}
			// The server keeps only a hash of the token: it cannot show it again.
			_, err := fmt.Fprintln(w, "\nThe token is shown only once: store it now. A lost token means a new key.")
			return err
		})
	return err
}

func (c *cli) keyList(ctx context.Context, args []string) error {
	fs := c.flags("key list", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	type keyList struct {
		Keys []keyInfo `json:"keys"`
	}
	_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/keys"},
		func(w io.Writer, l keyList) error {
			tw := table(w)
			fmt.Fprintln(tw, "KEY_ID\tPRINCIPAL\tROLE\tCREATED\tREVOKED")
			for _, k := range l.Keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Principal, k.Role, stamp(&k.CreatedAt), stamp(k.RevokedAt))
			}
			return tw.Flush()
		})
	return err
}

func (c *cli) keyRevoke(ctx context.Context, args []string) error {
	fs := c.flags("key revoke", "KEY_ID")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	_, err = exchange(ctx, c, request{method: http.MethodDelete, path: "/v1/keys/" + url.PathEscape(pos[0])},
		func(w io.Writer, k keyInfo) error {
			_, err := fmt.Fprintf(w, "revoked key %s (%s, %s) at %s; permission epoch %d\n",
				k.KeyID, k.Principal, k.Role, stamp(k.RevokedAt), k.PermissionEpoch)
			return err
		})
	return err
}

// stamp renders a time in UTC to the second, or "-" when absent.
func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
