package migrate_test

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/omlhub/oml/platform/migrate"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
	"github.com/omlhub/oml/sql/migrations"
)

func TestLoadChecksNumbering(t *testing.T) {
	t.Parallel()
	cases := map[string]fstest.MapFS{
		"gap":     {"0001_a.up.sql": {Data: []byte("select 1")}, "0003_c.up.sql": {Data: []byte("select 1")}},
		"no up":   {"0001_a.down.sql": {Data: []byte("select 1")}},
		"renamed": {"0001_a.up.sql": {Data: []byte("select 1")}, "0001_b.down.sql": {Data: []byte("select 1")}},
	}
	for name, fsys := range cases {
		if _, err := migrate.Load(fsys); err == nil {
			t.Errorf("%s: Load accepted", name)
		}
	}
	ms, err := migrate.Load(migrations.FS)
	if err != nil || len(ms) < 2 {
		t.Fatalf("the shipped migrations: %d, %v", len(ms), err)
	}
	for _, m := range ms {
		if m.Down == "" {
			t.Errorf("%04d_%s has no down migration", m.Version, m.Name)
		}
	}
}

// Replicas starting together apply every migration exactly once.
func TestConcurrentUpAppliesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := pg.Open(ctx, pgtest.EmptyURL(t), pg.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var wg sync.WaitGroup
	applied := make([][]int, 4)
	errs := make([]error, 4)
	for i := range applied {
		wg.Go(func() {
			r, err := migrate.New(db.Pool, migrations.FS)
			if err != nil {
				errs[i] = err
				return
			}
			applied[i], errs[i] = r.Up(ctx)
		})
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		total += len(applied[i])
	}
	r, _ := migrate.New(db.Pool, migrations.FS)
	if total != r.Latest() {
		t.Fatalf("applied %d migrations in all, want %d", total, r.Latest())
	}
	if v, err := r.Current(ctx); err != nil || v != r.Latest() {
		t.Fatalf("current = %d, %v", v, err)
	}

	// Down then up again: every down migration undoes its up.
	if _, err := r.Down(ctx, r.Latest()); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname IN ('access', 'platform')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("schemas left after down: %d, %v", left, err)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
