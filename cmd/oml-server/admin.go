package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/omlhub/oml/contexts/access"
	"github.com/omlhub/oml/contexts/retrieval"
	"github.com/omlhub/oml/platform/config"
	"github.com/omlhub/oml/platform/crypto"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/journal"
	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/sql/migrations"
)

// database opens the configured database with its migration runner.
func database(ctx context.Context, getenv func(string) string) (config.Config, *pg.DB, *migrate.Runner, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return cfg, nil, nil, fmt.Errorf("configuration: %w", err)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return cfg, nil, nil, err
	}
	runner, err := migrate.New(db.Pool, migrations.FS)
	if err != nil {
		db.Close()
		return cfg, nil, nil, err
	}
	return cfg, db, runner, nil
}

// currentDatabase opens the configured database for cmd and refuses one
// whose schema is not at this binary's version.
func currentDatabase(ctx context.Context, getenv func(string) string, cmd string) (config.Config, *pg.DB, error) {
	cfg, db, runner, err := database(ctx, getenv)
	if err != nil {
		return cfg, nil, err
	}
	v, err := runner.Current(ctx)
	if err == nil && v != runner.Latest() {
		err = fmt.Errorf("%s: database schema is at version %d of %d; run `oml-server migrate` first", cmd, v, runner.Latest())
	}
	if err != nil {
		db.Close()
		return cfg, nil, err
	}
	return cfg, db, nil
}

// openRetrieval opens the current database for cmd and the retrieval
// module on it, with the configured embedder. The caller closes db.
func openRetrieval(ctx context.Context, getenv func(string) string, cmd string) (*pg.DB, *retrieval.Module, error) {
	cfg, db, err := currentDatabase(ctx, getenv, cmd)
	if err != nil {
		return nil, nil, err
	}
	ret, err := retrieval.New(retrieval.Deps{DB: db, Embedder: embedderConfig(cfg)})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, ret, nil
}

func migrateCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	_, db, runner, err := database(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	verb := "up"
	if len(args) > 0 {
		verb = args[0]
	}
	switch verb {
	case "up":
		applied, err := runner.Up(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "migrations applied: %v; schema at version %d\n", applied, runner.Latest())
	case "down":
		steps := 1
		if len(args) > 1 {
			if steps, err = strconv.Atoi(args[1]); err != nil || steps < 1 {
				return fmt.Errorf("migrate down: want a positive step count, got %q", args[1])
			}
		}
		reverted, err := runner.Down(ctx, steps)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "migrations reverted: %v\n", reverted)
	case "status":
		v, err := runner.Current(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schema at version %d of %d\n", v, runner.Latest())
	default:
		return fmt.Errorf("migrate: unknown verb %q (want up, down N or status)", verb)
	}
	return nil
}

func keygen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory to write signing.key and master.key into (created 0700)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("keygen: --dir is required")
	}
	sp, mp, err := crypto.GenerateKeyFiles(*dir)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	fmt.Fprintf(stdout, "OML_SIGNING_KEY_FILE=%s\nOML_MASTER_KEY_FILE=%s\n", sp, mp)
	return nil
}

func bootstrap(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tenant := fs.String("tenant", "", "name of the tenant to create")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" {
		return errors.New("bootstrap: --tenant is required")
	}
	_, db, err := currentDatabase(ctx, getenv, "bootstrap")
	if err != nil {
		return err
	}
	defer db.Close()
	// Bootstrap needs only the access context (and no deployment keys).
	acc := access.New(access.Deps{DB: db, Journal: journal.New(db, nil), Idempotency: idempotency.New(db)})
	res, err := acc.Bootstrap(ctx, *tenant)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return json.NewEncoder(stdout).Encode(struct {
		TenantID       string `json:"tenant_id"`
		RootWorkareaID string `json:"root_workarea_id"`
		AdminKey       string `json:"admin_key"`
	}{res.TenantID, res.RootWorkareaID, res.AdminKey})
}

// reindex brings the serving tier in line with the configured embedder and
// the tenants' full-text languages while the servers keep serving.
func reindex(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tenant := fs.String("tenant", "", "reindex only this tenant id (default: every tenant)")
	language := fs.String("fts-language", "", "first set the full-text language (a text search configuration, e.g. english, simple)")
	batch := fs.Int("batch", 128, "entries per embedding call and transaction")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *language != "" && *tenant == "" {
		return errors.New("reindex: --fts-language needs --tenant (the language is a tenant setting)")
	}
	db, ret, err := openRetrieval(ctx, getenv, "reindex")
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := ret.Reindex(ctx, retrieval.ReindexOptions{
		Tenant: *tenant, Language: *language, Batch: *batch,
		Progress: func(t retrieval.TenantReindex) {
			fmt.Fprintf(stderr, "reindex: tenant %s: %d entries, %d re-embedded, %d re-parsed\n", t.Tenant, t.Entries, t.Embedded, t.Reparsed)
		},
	})
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// subtreeIndex builds, drops or lists the HNSW indexes of a tenant's
// entries under one workarea's subtree (docs/OPERATIONS.md, "Subtree
// indexes").
func subtreeIndex(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("subtree-index", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tenant := fs.String("tenant", "", "the tenant id")
	workarea := fs.String("workarea", "", "the workarea (id or path) whose subtree to index")
	drop := fs.Bool("drop", false, "drop the subtree's index (of the configured model) instead")
	list := fs.Bool("list", false, "list the subtree indexes of the tenant (of every tenant without --tenant), any model")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("subtree-index: unexpected argument %q", fs.Arg(0))
	case *list && (*drop || *workarea != ""):
		return errors.New("subtree-index: --list takes no --workarea or --drop")
	case !*list && (*tenant == "" || *workarea == ""):
		return errors.New("subtree-index: --tenant and --workarea are required (or --list)")
	}
	db, ret, err := openRetrieval(ctx, getenv, "subtree-index")
	if err != nil {
		return err
	}
	defer db.Close()
	var out any
	if *list {
		listed, err := ret.ListSubtreeIndexes(ctx, *tenant)
		if err != nil {
			return fmt.Errorf("subtree-index: %w", err)
		}
		out = struct {
			Indexes []retrieval.ListedSubtreeIndex `json:"indexes"`
		}{append([]retrieval.ListedSubtreeIndex{}, listed...)}
		return json.NewEncoder(stdout).Encode(out)
	}
	acc := access.New(access.Deps{DB: db, Journal: journal.New(db, nil), Idempotency: idempotency.New(db)})
	w, err := acc.Locate(ctx, *tenant, *workarea)
	if err != nil {
		return fmt.Errorf("subtree-index: %w", err)
	}
	if *drop {
		out, err = ret.DropSubtreeIndex(ctx, *tenant, w.IDPath)
	} else {
		out, err = ret.BuildSubtreeIndex(ctx, *tenant, w.IDPath)
	}
	if err != nil {
		return fmt.Errorf("subtree-index: %w", err)
	}
	return json.NewEncoder(stdout).Encode(out)
}
