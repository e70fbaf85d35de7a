package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/omlhub/oml/contexts/retrieval/internal/app"
	"github.com/omlhub/oml/platform/errs"
)

// Subtree indexes: an HNSW index of one tenant's entries under one
// subtree, for one model, that an operator builds for a large subtree
// (oml-server subtree-index). Its partial predicate names the tenant, the
// model and the subtree as literals, so the catalog is the only registry:
// a scope's candidates are its ancestors' names, and a valid index of
// that name is one to use. Recall's SQL repeats the predicate literally,
// which is what lets Postgres prove the index applies; the scope, allow,
// deny and fence tests stay outside the index walk as in every vector
// search, so an index dropped or rebuilt meanwhile costs speed, never a
// row the caller may not read.

// SubtreeIndexName names the subtree index of a tenant's entries under
// idPath for a model: a digest, since the path may be long.
func SubtreeIndexName(tenant, model, idPath string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + model + "\x00" + idPath))
	return fmt.Sprintf("entries_subtree_%x", sum[:8])
}

// idPathSyntax is an id path as the access context makes them: ltree
// labels of letters, digits and underscores.
var idPathSyntax = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// isIDPath says s is an id path of at most maxIDPath bytes.
func isIDPath(s string) bool { return len(s) <= maxIDPath && idPathSyntax.MatchString(s) }

// tenantSyntax is a tenant id: the literals a subtree index's predicate
// holds are checked, not only quoted.
var tenantSyntax = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

// literalsOK says a subtree index's predicate may name tenant, model and
// idPath: a tenant id, a model without backslashes (quote doubles quotes
// only) and an id path.
func literalsOK(tenant, model, idPath string) bool {
	return tenantSyntax.MatchString(tenant) && !strings.ContainsRune(model, '\\') && isIDPath(idPath)
}

func badLiterals(tenant, idPath string) error {
	return errs.New(errs.Validation, "a subtree index names a tenant id, a model and an id path of ltree labels of workarea ids",
		"tenant %q and id path %q cannot name a subtree index", tenant, idPath)
}

// maxIDPath bounds the id paths a subtree index is looked up or built
// for (a deeper scope simply does not use one).
const maxIDPath = 4096

// subtreePredicate is a subtree index's partial predicate, written the
// same way in its CREATE INDEX and in the queries that walk it.
func subtreePredicate(tenant, model, idPath string) string {
	return "tenant_id = " + quote(tenant) + " AND embedding_model = " + quote(model) +
		" AND kind <> 'steering' AND workarea_id_path <@ " + quote(idPath) + "::ltree"
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// subtreeSeen is which subtree index served a scope when last looked up,
// and its rows.
type subtreeSeen struct {
	idPath string
	rows   int64
}

// maxSubtreeSeen bounds the remembered lookups.
const maxSubtreeSeen = 10_000

// SubtreeIndex returns the deepest subtree holding scope with a valid
// index for the tenant and model, or "", and the subtree's rows from the
// maintained counts. A lookup is kept for a minute, so an index built or
// dropped is seen within one, and the count, which only sizes the walk
// (domain.SubtreePlan), is at most a minute old.
func (r *Repository) SubtreeIndex(ctx context.Context, tenant, model, scope string) (string, int64, error) {
	if !literalsOK(tenant, model, scope) {
		return "", 0, nil
	}
	key := tenant + "\x00" + model + "\x00" + scope
	if seen, ok := r.subtrees.Get(key); ok {
		return seen.idPath, seen.rows, nil
	}
	labels := strings.Split(scope, ".")
	paths := make([]string, len(labels))
	names := make([]string, len(labels))
	for i := range labels {
		paths[i] = strings.Join(labels[:i+1], ".")
		names[i] = SubtreeIndexName(tenant, model, paths[i])
	}
	var idPath string
	var rows int64
	err := r.conn(ctx).QueryRow(ctx, `SELECT sub.path, (SELECT coalesce(sum(c.n), 0)::bigint FROM retrieval.workarea_counts c
    WHERE c.tenant_id = $3 AND c.id_path <@ sub.path::ltree)
FROM (SELECT x.path FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(path, name, depth)
    JOIN pg_index i ON i.indexrelid = to_regclass('retrieval.' || x.name)
    WHERE i.indisvalid
    ORDER BY x.depth DESC LIMIT 1) AS sub`, paths, names, tenant).Scan(&idPath, &rows)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", 0, fmt.Errorf("subtree index: %w", err)
	}
	r.subtrees.Put(key, subtreeSeen{idPath: idPath, rows: rows})
	return idPath, rows, nil
}

// EnsureSubtreeIndex builds, unless a valid one exists, the HNSW index of
// the tenant's entries under idPath for the model (m 16, ef_construction
// 200 and one maintenance worker, as the model's own index), without
// blocking writes; it reports the index's rows and size.
func (r *Repository) EnsureSubtreeIndex(ctx context.Context, tenant, model string, dim int, idPath string) (app.SubtreeIndex, error) {
	if !literalsOK(tenant, model, idPath) {
		return app.SubtreeIndex{}, badLiterals(tenant, idPath)
	}
	out := app.SubtreeIndex{Tenant: tenant, IDPath: idPath, Model: model, Name: SubtreeIndexName(tenant, model, idPath)}
	ddl := fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON retrieval.entries
    USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)
    WHERE %s`, out.Name, dim, subtreePredicate(tenant, model, idPath))
	conn, err := r.db.Pool.Acquire(ctx)
	if err != nil {
		return out, err
	}
	defer conn.Release()
	if out.Built, err = ensureIndex(ctx, conn.Conn(), out.Name, true, ddl); err != nil {
		return out, err
	}
	err = conn.QueryRow(ctx, `SELECT c.reltuples::bigint, pg_relation_size(c.oid) FROM pg_class c WHERE c.oid = to_regclass('retrieval.' || $1)`,
		out.Name).Scan(&out.Rows, &out.Bytes)
	r.forgetSubtrees()
	return out, err
}

// DropSubtreeIndex drops the subtree index, without blocking writes; it
// reports whether there was one. One another session is building is
// refused, not waited for.
func (r *Repository) DropSubtreeIndex(ctx context.Context, tenant, model, idPath string) (string, bool, error) {
	if !literalsOK(tenant, model, idPath) {
		return "", false, badLiterals(tenant, idPath)
	}
	name := SubtreeIndexName(tenant, model, idPath)
	var exists, building bool
	err := r.db.Pool.QueryRow(ctx, `SELECT to_regclass('retrieval.' || $1) IS NOT NULL,
    EXISTS (SELECT 1 FROM pg_stat_progress_create_index WHERE index_relid = to_regclass('retrieval.' || $1))`, name).Scan(&exists, &building)
	if err != nil || !exists {
		return name, false, err
	}
	if building {
		return name, false, errs.New(errs.Unavailable, "one session builds or drops an index at a time",
			"%s is being built by another session; drop it when that is done", name)
	}
	if _, err := r.db.Pool.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS retrieval."+name); err != nil {
		return name, false, err
	}
	r.forgetSubtrees()
	return name, true, nil
}

// ListSubtreeIndexes lists the subtree indexes in the database, of one
// tenant ("" for every tenant's), with their predicates: an index of a
// model no longer configured is dropped by name with DROP INDEX
// CONCURRENTLY.
func (r *Repository) ListSubtreeIndexes(ctx context.Context, tenant string) ([]app.ListedSubtreeIndex, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT c.relname::text, i.indisvalid, pg_relation_size(c.oid), pg_get_expr(i.indpred, i.indrelid)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'retrieval.entries'::regclass AND c.relname LIKE 'entries\_subtree\_%'
ORDER BY c.relname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.ListedSubtreeIndex
	for rows.Next() {
		var x app.ListedSubtreeIndex
		if err := rows.Scan(&x.Name, &x.Valid, &x.Bytes, &x.Predicate); err != nil {
			return nil, err
		}
		if tenant == "" || strings.Contains(x.Predicate, "tenant_id = "+quote(tenant)+"::text") {
			out = append(out, x)
		}
	}
	return out, rows.Err()
}

func (r *Repository) forgetSubtrees() { r.subtrees.Clear() }
