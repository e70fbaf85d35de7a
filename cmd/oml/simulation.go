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

// simulation is what the simulations routes answer.
type simulation struct {
	ID       string     `json:"simulation_id"`
	Workarea string     `json:"workarea"`
	Name     string     `json:"name"`
	Audience []string   `json:"audience"`
	EndedAt  *time.Time `json:"ended_at"`
}

func printSimulation(w io.Writer, s simulation) error {
	state := "running"
	if s.EndedAt != nil {
		state = "ended " + s.EndedAt.UTC().Format(time.RFC3339)
	}
	_, err := fmt.Fprintf(w, "%s  %s in %s, %s; audience %s\n", s.ID, s.Name, s.Workarea, state, strings.Join(s.Audience, ","))
	return err
}

// simulationCmd runs `oml admin simulation create|end|list`.
func (c *cli) simulationCmd(ctx context.Context, args []string) error {
	verb, rest, err := c.subcommand("admin simulation", args, "create, end or list")
	if err != nil {
		return err
	}
	switch verb {
	case "create":
		fs := c.flags("admin simulation create", "--workarea ID|PATH --name NAME --audience KEY_ID,…")
		workarea := fs.String("workarea", "", "the simulation's workarea (admin on it)")
		name := fs.String("name", "", "a unique name: 1–63 of a-z 0-9 _ -")
		audience := fs.String("audience", "", "comma-separated key ids that see the simulation's rows")
		if _, err := parse(fs, rest, 0); err != nil {
			return err
		}
		if *workarea == "" || *name == "" || *audience == "" {
			return errors.New("admin simulation create: --workarea, --name and --audience are required")
		}
		_, err := exchange(ctx, c, request{method: http.MethodPost, path: "/v1/simulations",
			body: map[string]any{"workarea": *workarea, "name": *name, "audience": splitList(*audience)}}, printSimulation)
		return err
	case "end":
		pos, err := parse(c.flags("admin simulation end", "SIMULATION_ID"), rest, 1)
		if err != nil {
			return err
		}
		_, err = exchange(ctx, c, request{method: http.MethodPost, path: "/v1/simulations/" + url.PathEscape(pos[0]) + "/end", body: map[string]any{}}, printSimulation)
		return err
	case "list":
		if _, err := parse(c.flags("admin simulation list", ""), rest, 0); err != nil {
			return err
		}
		_, err := exchange(ctx, c, request{method: http.MethodGet, path: "/v1/simulations"}, func(w io.Writer, out struct {
			Simulations []simulation `json:"simulations"`
		}) error {
			for _, s := range out.Simulations {
				if err := printSimulation(w, s); err != nil {
					return err
				}
			}
			_, err := fmt.Fprintf(w, "(%d simulations)\n", len(out.Simulations))
			return err
		})
		return err
	}
	return c.unknownSubcommand("admin simulation", verb, "create, end or list")
}
