package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/pgtest"
)

type request struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type response struct {
	ID               string `json:"id"`
	IdempotentReplay bool   `json:"idempotent_replay"`
}

func setup(t *testing.T) (*pg.DB, *idempotency.Store) {
	t.Helper()
	db := pgtest.New(t)
	if _, err := db.Pool.Exec(context.Background(), `CREATE TABLE writes (id serial PRIMARY KEY, name text)`); err != nil {
		t.Fatal(err)
	}
	return db, idempotency.New(db)
}

// write inserts one row, so the number of rows counts the writes.
func write(db *pg.DB, name string) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		var id string
		err := db.Conn(ctx).QueryRow(ctx, `INSERT INTO writes (name) VALUES ($1) RETURNING id::text`, name).Scan(&id)
		return map[string]string{"id": id}, err
	}
}

func count(t *testing.T, db *pg.DB, sql string) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConcurrentDuplicatesWriteOnce(t *testing.T) {
	t.Parallel()
	db, store := setup(t)
	scope := idempotency.Scope{TenantID: "tn", KeyID: "key", Workarea: "wa", Operation: "test.write", Key: "run-1/step-9"}
	req := request{Name: "a", N: 1}
	const n = 20
	results := make([]idempotency.Result, n)
	errc := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errc[i] = store.Do(context.Background(), scope, req, write(db, "a"))
		})
	}
	wg.Wait()
	var replays int
	for i := range n {
		if errc[i] != nil {
			t.Fatalf("request %d: %v", i, errc[i])
		}
		if string(results[i].Body) != string(results[0].Body) {
			t.Fatalf("responses differ: %s vs %s", results[i].Body, results[0].Body)
		}
		if results[i].Replay {
			replays++
		}
	}
	if replays != n-1 {
		t.Fatalf("replays = %d, want %d", replays, n-1)
	}
	if got := count(t, db, `SELECT count(*) FROM writes`); got != 1 {
		t.Fatalf("writes = %d, want 1", got)
	}
	if got := count(t, db, `SELECT count(*) FROM platform.idempotency_records`); got != 1 {
		t.Fatalf("records = %d, want 1", got)
	}
	for _, r := range results {
		if n := strings.Count(string(r.Response()), "idempotent_replay"); n != btoi(r.Replay) {
			t.Fatalf("response %s (replay %v)", r.Response(), r.Replay)
		}
	}
	var replayed response
	for _, r := range results {
		if r.Replay {
			if err := json.Unmarshal(r.Response(), &replayed); err != nil || !replayed.IdempotentReplay {
				t.Fatalf("replayed response %s does not say idempotent_replay", r.Response())
			}
			break
		}
	}
}

func TestSameKeyDifferentRequestConflicts(t *testing.T) {
	t.Parallel()
	db, store := setup(t)
	ctx := context.Background()
	scope := idempotency.Scope{TenantID: "tn", KeyID: "key", Workarea: "wa", Operation: "test.write", Key: "k1"}
	if _, err := store.Do(ctx, scope, request{Name: "a"}, write(db, "a")); err != nil {
		t.Fatal(err)
	}
	_, err := store.Do(ctx, scope, request{Name: "b"}, write(db, "b"))
	if !errs.Is(err, errs.IdempotencyClash) {
		t.Fatalf("err = %v, want %s", err, errs.IdempotencyClash)
	}
	if got := count(t, db, `SELECT count(*) FROM writes`); got != 1 {
		t.Fatalf("writes = %d, want 1", got)
	}
	// The same key in another scope is another record.
	for _, other := range []idempotency.Scope{
		{TenantID: "tn", KeyID: "key2", Workarea: "wa", Operation: "test.write", Key: "k1"},
		{TenantID: "tn", KeyID: "key", Workarea: "wa2", Operation: "test.write", Key: "k1"},
		{TenantID: "tn", KeyID: "key", Workarea: "wa", Operation: "test.other", Key: "k1"},
	} {
		if res, err := store.Do(ctx, other, request{Name: "b"}, write(db, "b")); err != nil || res.Replay {
			t.Fatalf("scope %+v: replay=%v err=%v", other, res.Replay, err)
		}
	}
}

func TestFailedWriteKeepsNoRecord(t *testing.T) {
	t.Parallel()
	db, store := setup(t)
	ctx := context.Background()
	scope := idempotency.Scope{TenantID: "tn", KeyID: "key", Operation: "test.write", Key: "k"}
	boom := errors.New("boom")
	_, err := store.Do(ctx, scope, request{}, func(ctx context.Context) (any, error) {
		if _, err := write(db, "x")(ctx); err != nil {
			return nil, err
		}
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if count(t, db, `SELECT count(*) FROM writes`)+count(t, db, `SELECT count(*) FROM platform.idempotency_records`) != 0 {
		t.Fatal("a failed write left state behind")
	}
	if res, err := store.Do(ctx, scope, request{}, write(db, "x")); err != nil || res.Replay {
		t.Fatalf("retry after failure: replay=%v err=%v", res.Replay, err)
	}
}

func TestKeyValidation(t *testing.T) {
	t.Parallel()
	for _, k := range []string{string(make([]byte, 256)), "a\nb", "a\x00b", "k\xff\xfe"} {
		if err := idempotency.CheckKey(k); !errs.Is(err, errs.Validation) {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReplayFlag(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"a":1,"idempotent_replay":false}`: `{"a":1,"idempotent_replay":true}`,
		`{"a":1}`:                           `{"a":1,"idempotent_replay":true}`,
		`{}`:                                `{"idempotent_replay":true}`,
		`[1]`:                               `[1]`,
	}
	for in, want := range cases {
		if got := (idempotency.Result{Body: []byte(in), Replay: true}).Response(); string(got) != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}
