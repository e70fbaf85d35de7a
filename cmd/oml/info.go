package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/omlhub/oml/platform/buildinfo"
)

// whoamiInfo is the answer to GET /v1/whoami.
type whoamiInfo struct {
	KeyID        string `json:"key_id"`
	Principal    string `json:"principal"`
	Role         string `json:"role"`
	TenantID     string `json:"tenant_id"`
	RootWorkarea string `json:"root_workarea"`
	GuideURL     string `json:"guide_url"`
}

func (c *cli) whoami(ctx context.Context, args []string) error {
	fs := c.flags("whoami", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/whoami"},
		func(w io.Writer, who whoamiInfo) error {
			tw := table(w)
			fmt.Fprintf(tw, "key_id\t%s\n", who.KeyID)
			fmt.Fprintf(tw, "principal\t%s\n", who.Principal)
			fmt.Fprintf(tw, "role\t%s\n", who.Role)
			fmt.Fprintf(tw, "tenant_id\t%s\n", who.TenantID)
			fmt.Fprintf(tw, "root_workarea\t%s\n", who.RootWorkarea)
			fmt.Fprintf(tw, "guide_url\t%s\n", orDash(who.GuideURL))
			return tw.Flush()
		})
	return err
}

// version prints this binary's build and, when the server answers, its
// build. An unreachable server is reported, not failed: the command is
// also how one finds out which CLI is installed.
func (c *cli) version(ctx context.Context, args []string) error {
	fs := c.flags("version", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	out := struct {
		CLI         buildinfo.Info  `json:"cli"`
		Server      *buildinfo.Info `json:"server,omitempty"`
		ServerError string          `json:"server_error,omitempty"`
	}{CLI: buildinfo.Read()}
	var server buildinfo.Info
	api, err := c.api()
	if err == nil {
		err = api.do(ctx, http.MethodGet, "/v1/version", nil, &server)
	}
	if err != nil {
		out.ServerError = err.Error()
	} else {
		out.Server = &server
	}
	if c.json {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return printJSON(c.stdout, b)
	}
	fmt.Fprintf(c.stdout, "oml %s\n", describe(out.CLI))
	if out.Server != nil {
		fmt.Fprintf(c.stdout, "server %s: oml-server %s\n", c.url, describe(*out.Server))
	} else {
		fmt.Fprintf(c.stdout, "server %s: not reached: %s\n", c.url, out.ServerError)
	}
	return nil
}

func describe(i buildinfo.Info) string {
	s := i.Version
	if i.Revision != "" {
		s += " (revision " + i.Revision
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + i.Go
}
