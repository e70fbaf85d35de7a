// Package idempotency makes writes safe to retry (D13). A record is scoped
// to (key, workarea, operation, idempotency key) and holds a hash of the
// request and the stored response: the same request again replays the
// response, a different request under the same key is refused, and
// concurrent duplicates produce exactly one write.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/omlhub/oml/platform/canonjson"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/internal/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
)

// MaxKeyLen bounds client-chosen idempotency keys.
const MaxKeyLen = 255

// Scope identifies one record.
type Scope struct {
	TenantID  string
	KeyID     string
	Workarea  string // "" for tenant-level operations
	Operation string
	Key       string // the client's idempotency key
}

// Store reads and writes records in the caller's transaction.
type Store struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

// New returns a store on db.
func New(db *pg.DB) *Store { return &Store{db: db, q: dbsqlc.New()} }

// Result is a response, fresh or replayed.
type Result struct {
	Body   json.RawMessage
	Replay bool
}

// CheckKey validates a client-supplied idempotency key: bounded, UTF-8
// (a header can carry any byte; Postgres text refuses what is not UTF-8)
// and free of control characters.
func CheckKey(k string) error {
	if len(k) > MaxKeyLen {
		return errs.Invalid("idempotency_key is longer than %d bytes", MaxKeyLen)
	}
	if !utf8.ValidString(k) {
		return errs.Invalid("idempotency_key is not valid UTF-8")
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return errs.Invalid("idempotency_key holds control characters")
		}
	}
	return nil
}

// RequestHash is the hash of a request's canonical JSON form.
func RequestHash(req any) ([]byte, error) {
	b, err := canonjson.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("idempotency: hash request: %w", err)
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// Do runs write once per scope, in one transaction with its record. When
// scope.Key is empty it simply runs write in a transaction. An error from
// write rolls everything back, record included, so a retry runs again.
func (s *Store) Do(ctx context.Context, scope Scope, req any, write func(ctx context.Context) (resp any, err error)) (Result, error) {
	var res Result
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		res = Result{}
		if scope.Key == "" {
			resp, err := write(ctx)
			if err != nil {
				return err
			}
			body, err := json.Marshal(resp)
			res = Result{Body: body}
			return err
		}
		if err := CheckKey(scope.Key); err != nil {
			return err
		}
		hash, err := RequestHash(req)
		if err != nil {
			return err
		}
		conn := s.db.Conn(ctx)
		claimed, err := s.q.IdempotencyClaim(ctx, conn, dbsqlc.IdempotencyClaimParams{
			TenantID: scope.TenantID, KeyID: scope.KeyID, Workarea: scope.Workarea,
			Operation: scope.Operation, IdempotencyKey: scope.Key, RequestHash: hash,
		})
		if err != nil {
			return fmt.Errorf("idempotency: claim: %w", err)
		}
		if claimed == 0 {
			return s.replay(ctx, scope, hash, &res)
		}
		resp, err := write(ctx)
		if err != nil {
			return err
		}
		body, err := json.Marshal(resp)
		if err != nil {
			return fmt.Errorf("idempotency: encode response: %w", err)
		}
		err = s.q.IdempotencyComplete(ctx, conn, dbsqlc.IdempotencyCompleteParams{
			TenantID: scope.TenantID, KeyID: scope.KeyID, Workarea: scope.Workarea,
			Operation: scope.Operation, IdempotencyKey: scope.Key, Response: body,
		})
		if err != nil {
			return fmt.Errorf("idempotency: store response: %w", err)
		}
		res = Result{Body: body}
		return nil
	})
	return res, err
}

func (s *Store) replay(ctx context.Context, scope Scope, hash []byte, res *Result) error {
	rec, err := s.q.IdempotencyGet(ctx, s.db.Conn(ctx), dbsqlc.IdempotencyGetParams{
		TenantID: scope.TenantID, KeyID: scope.KeyID, Workarea: scope.Workarea,
		Operation: scope.Operation, IdempotencyKey: scope.Key,
	})
	if err != nil {
		return fmt.Errorf("idempotency: read record: %w", err)
	}
	if string(rec.RequestHash) != string(hash) {
		return errs.New(errs.IdempotencyClash,
			"idempotency keys are scoped to (key, workarea, operation); one key names one request (D13)",
			"idempotency_key %q was used for a different %s request; use a new key", scope.Key, scope.Operation)
	}
	if len(rec.Response) == 0 {
		// A claim commits together with its response, so this cannot be
		// seen; fail loudly rather than replay nothing.
		return fmt.Errorf("idempotency: record %q has no response", scope.Key)
	}
	*res = Result{Body: rec.Response, Replay: true}
	return nil
}

// Response returns the body to send; a replay says "idempotent_replay": true.
func (r Result) Response() json.RawMessage {
	if !r.Replay {
		return r.Body
	}
	return withReplayFlag(r.Body)
}

// withReplayFlag marks a replayed object body: an "idempotent_replay":false
// member (responses that always carry the flag) becomes true; a body without
// one gets "idempotent_replay":true appended. The stored bytes otherwise keep
// their order.
func withReplayFlag(body []byte) []byte {
	const off, on = `"idempotent_replay":false`, `"idempotent_replay":true`
	if i := bytes.LastIndex(body, []byte(off)); i >= 0 {
		return slices.Concat(body[:i], []byte(on), body[i+len(off):])
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) < 2 || trimmed[0] != '{':
		return body
	case string(trimmed) == "{}":
		return []byte("{" + on + "}")
	}
	n := len(trimmed) - 1
	return slices.Concat(trimmed[:n], []byte(","+on+"}"))
}

// Doer runs a write once per scope; *Store implements it and app tests
// fake it.
type Doer interface {
	Do(ctx context.Context, scope Scope, req any, write func(ctx context.Context) (any, error)) (Result, error)
}

// Purge deletes up to limit completed records created before cutoff: a
// retry after that is a new request.
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.q.IdempotencyPurge(ctx, s.db.Conn(ctx), dbsqlc.IdempotencyPurgeParams{Cutoff: cutoff, MaxRows: int32(limit)})
}
