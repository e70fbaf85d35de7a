package retrieval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/contexts/retrieval/internal/postgres"
	"github.com/omlhub/oml/platform/pgtest"
)

// TestReadLogWritesConcurrentReads pins the read log's group writer:
// every one of many concurrent reads is committed when its LogRead
// returns, each row exactly once; a row that Postgres refuses fails its
// caller with Postgres's error and no other; a read
// logged in a unit of work is written in it and rolls back with it.
func TestReadLogWritesConcurrentReads(t *testing.T) {
	ctx := context.Background()
	db := pgtest.New(t)
	repo := postgres.New(db)
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	row := func(key, op string) app.ReadLog {
		return app.ReadLog{TenantID: "ten_a", KeyID: key, WorkareaID: "wa_1", QuerySHA256: []byte{1}, Returned: []string{"art_" + key}, At: at, Operation: op}
	}
	count := func(where string) int {
		t.Helper()
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM retrieval.read_log WHERE `+where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("key_%03d", i)
			if errs[i] = repo.LogRead(ctx, row(key, "")); errs[i] != nil {
				return
			}
			// Written when LogRead returns: another connection sees it.
			var got int
			if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM retrieval.read_log WHERE key_id = $1 AND returned = ARRAY['art_' || $1]`, key).Scan(&got); err != nil || got != 1 {
				errs[i] = fmt.Errorf("after LogRead returned, %d rows for %s (%v)", got, key, err)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if got := count(`key_id LIKE 'key_%'`); got != n {
		t.Fatalf("%d rows for %d reads", got, n)
	}

	// A refused row (the operation check) among good ones: the refused
	// caller gets Postgres's error, every good row is written.
	var bad error
	good := make([]error, 16)
	wg = sync.WaitGroup{}
	for i := range good {
		wg.Go(func() {
			if i == len(good)/2 {
				bad = repo.LogRead(ctx, row("bad", "bogus"))
			}
			good[i] = repo.LogRead(ctx, row(fmt.Sprintf("good_%02d", i), ""))
		})
	}
	wg.Wait()
	if bad == nil || count(`key_id = 'bad'`) != 0 {
		t.Fatalf("a row with operation bogus: %v, %d rows", bad, count(`key_id = 'bad'`))
	}
	for i, err := range good {
		if key := fmt.Sprintf("good_%02d", i); err != nil || count(`key_id = '`+key+`'`) != 1 {
			t.Fatalf("%s beside a refused row: %v, %d rows", key, err, count(`key_id = '`+key+`'`))
		}
	}

	// In a unit of work: written in it, gone with its rollback.
	rollback := errors.New("roll back")
	if err := db.InTx(ctx, func(ctx context.Context) error {
		if err := repo.LogRead(ctx, row("in_tx", "")); err != nil {
			return err
		}
		var n int
		if err := db.Conn(ctx).QueryRow(ctx, `SELECT count(*) FROM retrieval.read_log WHERE key_id = 'in_tx'`).Scan(&n); err != nil || n != 1 {
			return fmt.Errorf("in the unit of work: %d rows (%v)", n, err)
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if count(`key_id = 'in_tx'`) != 0 {
		t.Fatal("a read logged in a rolled-back unit of work stayed")
	}
}

// BenchmarkReadLog compares the read log's group writer with one
// autocommitted INSERT per read (the writer before it), 16 writers at
// once, in the same run: `go test -run '^$' -bench ReadLog ./contexts/retrieval`.
// cpu-ms/op is the machine's busy time (/proc/stat) per row.
func BenchmarkReadLog(b *testing.B) {
	ctx := context.Background()
	db := pgtest.New(b)
	repo := postgres.New(db)
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	l := app.ReadLog{TenantID: "ten_a", KeyID: "key_1", WorkareaID: "wa_1", QuerySHA256: make([]byte, 32), Returned: []string{"art_1", "art_2", "art_3", "art_4", "art_5", "art_6", "art_7", "art_8"}, At: at, Operation: app.ReadRecall}
	for _, c := range []struct {
		name  string
		write func() error
	}{
		{"grouped", func() error { return repo.LogRead(ctx, l) }},
		{"alone", func() error {
			_, err := db.Pool.Exec(ctx, `INSERT INTO retrieval.read_log (tenant_id, key_id, workarea_id, query_sha256, returned, at, operation, simulations)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, l.TenantID, l.KeyID, l.WorkareaID, l.QuerySHA256, l.Returned, l.At, l.Operation, []string{})
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(8) // 16 writers on 2 cores
			busy := machineBusy(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.write(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(machineBusy(b)-busy)/float64(b.N), "cpu-ms/op")
		})
	}
}

// machineBusy is the machine's non-idle CPU time so far, in ms.
func machineBusy(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0])
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy * 1000 / 100 // USER_HZ
}
