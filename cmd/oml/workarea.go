package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// crew is a workarea's crew record as the API carries it.
type crew struct {
	Name            string `json:"name,omitempty"`
	CharterURI      string `json:"charter_uri,omitempty"`
	ExternalManager string `json:"external_manager,omitempty"`
}

// workareaInfo is the API's view of a workarea (oml_workarea_info's shape).
type workareaInfo struct {
	ID       string  `json:"id"`
	Path     string  `json:"path"`
	Status   string  `json:"status"`
	Crew     *crew   `json:"crew"`
	Parent   *string `json:"parent"`
	Children []struct {
		ID       string `json:"id"`
		PathLeaf string `json:"path_leaf"`
		Status   string `json:"status"`
	} `json:"children"`
	Edges []struct {
		Label string `json:"label"`
		To    string `json:"to"`
		State string `json:"state"`
	} `json:"edges"`
	MyEffectiveVerbs []string `json:"my_effective_verbs"`
	PermissionEpoch  int64    `json:"permission_epoch"`
	IdempotentReplay *bool    `json:"idempotent_replay,omitempty"`
}

// crewFlags are the --crew-* flags shared by create and set.
type crewFlags struct{ name, charter, manager string }

func (f *crewFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "crew-name", "", "crew name")
	fs.StringVar(&f.charter, "crew-charter-uri", "", "URI of the crew's charter")
	fs.StringVar(&f.manager, "crew-external-manager", "", "who manages the crew outside OML")
}

// value is the crew record, or nil when no crew flag was given.
func (f *crewFlags) value() *crew {
	if f.name == "" && f.charter == "" && f.manager == "" {
		return nil
	}
	return &crew{Name: f.name, CharterURI: f.charter, ExternalManager: f.manager}
}

const workareaVerbs = "create, show, set or list"

func (c *cli) workarea(ctx context.Context, args []string) error {
	verb, args, err := c.subcommand("workarea", args, workareaVerbs)
	if err != nil {
		return err
	}
	switch verb {
	case "create":
		return c.workareaCreate(ctx, args)
	case "show":
		return c.workareaShow(ctx, args)
	case "set":
		return c.workareaSet(ctx, args)
	case "list":
		return c.workareaList(ctx, args)
	}
	return c.unknownSubcommand("workarea", verb, workareaVerbs)
}

func (c *cli) workareaCreate(ctx context.Context, args []string) error {
	fs := c.flags("workarea create", "--parent ID|PATH --name NAME [flags]")
	parent := fs.String("parent", "", "parent workarea id or path (required)")
	name := fs.String("name", "", "leaf name of the new workarea (required)")
	status := fs.String("status", "", "development|committed|validated (server default if empty)")
	idem := fs.String("idempotency-key", "", "replay-safe key for this write (D13)")
	var cf crewFlags
	cf.register(fs)
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *parent == "" || *name == "" {
		return errors.New("workarea create: --parent and --name are required")
	}
	body := struct {
		Parent string `json:"parent"`
		Name   string `json:"name"`
		Status string `json:"status,omitempty"`
		Crew   *crew  `json:"crew,omitempty"`
	}{*parent, *name, *status, cf.value()}
	_, err := exchange(ctx, c, request{method: http.MethodPost, path: "/v1/workareas", body: body, idempotencyKey: *idem},
		func(w io.Writer, wa workareaInfo) error {
			fmt.Fprintf(w, "created workarea %s%s\n", wa.Path, replayNote(wa.IdempotentReplay))
			return printWorkarea(w, wa)
		})
	return err
}

func (c *cli) workareaShow(ctx context.Context, args []string) error {
	fs := c.flags("workarea show", "ID|PATH")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	_, err = exchange(ctx, c, request{method: http.MethodGet, path: workareaPath(pos[0])}, printWorkarea)
	return err
}

func (c *cli) workareaSet(ctx context.Context, args []string) error {
	fs := c.flags("workarea set", "ID|PATH [--status S] [crew flags | --clear-crew]")
	status := fs.String("status", "", "new status: development|committed|validated")
	clearCrew := fs.Bool("clear-crew", false, "remove the crew record")
	var cf crewFlags
	cf.register(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	// A map, not a struct: "crew": null (clear) and an absent crew (keep)
	// mean different things to PATCH.
	body := map[string]any{}
	if *status != "" {
		body["status"] = *status
	}
	switch cr := cf.value(); {
	case *clearCrew && cr != nil:
		return errors.New("workarea set: --clear-crew and --crew-* flags exclude each other")
	case *clearCrew:
		body["crew"] = nil
	case cr != nil:
		body["crew"] = cr
	}
	if len(body) == 0 {
		return errors.New("workarea set: nothing to change (give --status, --crew-* or --clear-crew)")
	}
	_, err = exchange(ctx, c, request{method: http.MethodPatch, path: workareaPath(pos[0]), body: body}, printWorkarea)
	return err
}

// workareaPath escapes ref as one path segment: ids and dotted paths pass
// unchanged, anything else cannot reach another route.
func workareaPath(ref string) string {
	return "/v1/workareas/" + url.PathEscape(ref)
}

func printWorkarea(w io.Writer, wa workareaInfo) error {
	tw := table(w)
	fmt.Fprintf(tw, "id\t%s\n", wa.ID)
	fmt.Fprintf(tw, "path\t%s\n", wa.Path)
	fmt.Fprintf(tw, "status\t%s\n", wa.Status)
	parent := "-"
	if wa.Parent != nil {
		parent = *wa.Parent
	}
	fmt.Fprintf(tw, "parent\t%s\n", parent)
	if wa.Crew != nil {
		fmt.Fprintf(tw, "crew\t%s (charter %s, manager %s)\n", orDash(wa.Crew.Name), orDash(wa.Crew.CharterURI), orDash(wa.Crew.ExternalManager))
	} else {
		fmt.Fprintf(tw, "crew\t-\n")
	}
	fmt.Fprintf(tw, "your verbs\t%s\n", orDash(strings.Join(wa.MyEffectiveVerbs, ", ")))
	fmt.Fprintf(tw, "permission epoch\t%d\n", wa.PermissionEpoch)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(wa.Children) > 0 {
		fmt.Fprintln(w, "children:")
		tw = table(w)
		for _, ch := range wa.Children {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", ch.PathLeaf, ch.ID, ch.Status)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(wa.Edges) > 0 {
		fmt.Fprintln(w, "edges:")
		tw = table(w)
		for _, e := range wa.Edges {
			fmt.Fprintf(tw, "  %s\t→ %s\t%s\n", e.Label, e.To, e.State)
		}
		return tw.Flush()
	}
	return nil
}

// replayNote marks an answer the server replayed for an idempotency key.
func replayNote(replay *bool) string {
	if replay != nil && *replay {
		return " (idempotent replay: nothing new was written)"
	}
	return ""
}

// workareaList runs `oml workarea list [--cursor C] [--limit N]`: the tree
// the key reads, parents before children, a page at a time.
func (c *cli) workareaList(ctx context.Context, args []string) error {
	fs := c.flags("workarea list", "[--cursor C] [--limit N]")
	cursor := fs.String("cursor", "", "the next_cursor of the previous page")
	limit := fs.Int("limit", 0, "workareas per page, 1–500 (default 100)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	q := url.Values{}
	if *cursor != "" {
		q.Set("cursor", *cursor)
	}
	if *limit > 0 {
		q.Set("limit", fmt.Sprint(*limit))
	}
	_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/workareas?" + q.Encode()},
		func(w io.Writer, page struct {
			Workareas []struct {
				ID     string `json:"id"`
				Path   string `json:"path"`
				Status string `json:"status"`
			} `json:"workareas"`
			NextCursor *string `json:"next_cursor"`
		}) error {
			tw := table(w)
			fmt.Fprintln(tw, "PATH\tSTATUS\tID")
			for _, wa := range page.Workareas {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", wa.Path, wa.Status, wa.ID)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printMore(w, page.NextCursor)
		})
	return err
}
