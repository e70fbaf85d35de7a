-- name: ArtifactInsert :exec
INSERT INTO admission.artifacts (
    tenant_id, id, workarea_id, workarea_id_path, claim_key, version, kind, verb, state, text,
    author_key_id, author_principal, supersedes, simulation_id, findings, attachments,
    envelope, signature, required_approvals, submitted_at, held_expires_at, page_version, base_version
) VALUES (
    @tenant_id, @id, @workarea_id, CAST(sqlc.arg(workarea_id_path)::text AS ltree), @claim_key, @version, @kind, @verb, @state, @text,
    @author_key_id, @author_principal, @supersedes, @simulation_id, @findings, @attachments,
    @envelope, @signature, @required_approvals, @submitted_at, @held_expires_at, @page_version, @base_version
);

-- name: ArtifactGet :one
SELECT * FROM admission.artifacts WHERE tenant_id = $1 AND id = $2;

-- name: ArtifactGetForUpdate :one
SELECT * FROM admission.artifacts WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: ArtifactsByIDs :many
SELECT * FROM admission.artifacts WHERE tenant_id = $1 AND id = ANY(@ids::text[]);

-- name: ArtifactAuthorsByIDs :many
-- Who wrote each artifact among ids, for an independence check over a
-- lineage closure (ids only: no text is read).
SELECT id, author_principal FROM admission.artifacts WHERE tenant_id = $1 AND id = ANY(@ids::text[]);

-- name: ArtifactKeyHolder :one
-- The newest non-erased version carrying a claim key in a workarea and
-- simulation ('' for none).
SELECT * FROM admission.artifacts
WHERE tenant_id = $1 AND workarea_id = $2 AND claim_key = $3 AND state <> 'erased'
  AND coalesce(simulation_id, '') = @simulation::text
ORDER BY version DESC
LIMIT 1;

-- name: ArtifactKeyHead :one
-- The newest held or promoted version of a claim: the one a new version
-- supersedes.
SELECT id, version FROM admission.artifacts
WHERE tenant_id = $1 AND workarea_id = $2 AND claim_key = $3 AND state IN ('held', 'promoted')
  AND coalesce(simulation_id, '') = @simulation::text
ORDER BY version DESC
LIMIT 1;

-- name: ArtifactUpdate :exec
UPDATE admission.artifacts
SET state = @state, approvals = @approvals, self_signed = @self_signed,
    settled_at = @settled_at, promoted_at = @promoted_at, text = @text, leased_until = @leased_until,
    attachments = @attachments, findings = @findings
WHERE tenant_id = @tenant_id AND id = @id;

-- name: ArtifactsMine :many
-- A key's own submissions, newest first (artifact ids sort by time).
SELECT * FROM admission.artifacts
WHERE tenant_id = @tenant_id AND author_key_id = @author_key_id
  AND (sqlc.narg(workarea_id)::text IS NULL OR workarea_id = sqlc.narg(workarea_id))
  AND (sqlc.narg(state)::text IS NULL OR state = sqlc.narg(state))
  AND (sqlc.narg(before)::text IS NULL OR id < sqlc.narg(before))
ORDER BY id DESC
LIMIT @max_rows;

-- name: ArtifactsQueue :many
-- Review candidates: held, unexpired, inside the reviewer's subtrees, not
-- leased to anyone now and not already judged by this principal; oldest
-- first. One table, read in submission order (artifacts_held) until the
-- page is full: no join whose plan depends on the statistics of serves.
-- The expiry is compared as a difference so that artifacts_held_expiry,
-- the sweep's index over every tenant, cannot serve it. The generic plan
-- chose it for a queue of up to about a thousand items, one tenant's
-- most of them (an unknown "> $now" is estimated at a third of the rows,
-- the subtree filters at almost none): the page read every tenant's held
-- items and sorted them, where artifacts_held stops after the page. Nothing is locked here: the lease
-- is taken on one row at a time (ArtifactLeaseUnlocked, then ArtifactLease
-- for rows it passed over).
SELECT a.* FROM admission.artifacts a
WHERE a.tenant_id = @tenant_id AND a.state = 'held' AND a.held_expires_at - @now::timestamptz > interval '0'
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> a.workarea_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> a.workarea_id_path)
  AND a.id <> ALL(@skip::text[])
  AND (a.simulation_id IS NULL OR a.simulation_id = ANY(@fence::text[]))
  AND (a.leased_until IS NULL OR a.leased_until <= @now)
  AND NOT (@principal::text = ANY(a.judged_by))
ORDER BY a.submitted_at
LIMIT @max_rows;

-- name: ArtifactsQueueCounts :many
-- What waits for a reviewer, per workarea: held, unexpired items inside its
-- review subtrees that its principal neither wrote nor judged (R2's closure
-- check happens when one is served); leased ones counted apart.
SELECT a.workarea_id,
       count(*)::bigint AS waiting,
       (count(*) FILTER (WHERE a.leased_until > @now))::bigint AS leased,
       min(a.submitted_at)::timestamptz AS oldest
FROM admission.artifacts a
WHERE a.tenant_id = @tenant_id AND a.state = 'held' AND a.held_expires_at > @now
  AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> a.workarea_id_path
  AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> a.workarea_id_path)
  AND a.author_principal <> @principal
  AND (a.simulation_id IS NULL OR a.simulation_id = ANY(@fence::text[]))
  AND NOT (@principal::text = ANY(a.judged_by))
GROUP BY a.workarea_id;

-- name: ArtifactsExpireDue :many
-- Held items past their expiry become expired; SKIP LOCKED lets every
-- replica sweep without waiting on another.
UPDATE admission.artifacts a
SET state = 'expired', settled_at = @now
WHERE (a.tenant_id, a.id) IN (
    SELECT x.tenant_id, x.id FROM admission.artifacts x
    WHERE x.state = 'held' AND x.held_expires_at <= @now
    ORDER BY x.held_expires_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING a.*;

-- name: ArtifactLeaseClear :exec
-- A released serve gives the held item back to the queue: only its own
-- lease (the serve's expiry), never one another reviewer has taken since.
UPDATE admission.artifacts SET leased_until = NULL
WHERE tenant_id = @tenant_id AND id = @id AND state = 'held' AND leased_until = @lease;

-- name: ArtifactLease :execrows
-- Leases a held item unless someone else holds a lease on it or the
-- reviewer's principal has judged it since the queue was read: the row
-- lock and the re-checked condition make one reviewer win.
UPDATE admission.artifacts SET leased_until = @until
WHERE tenant_id = @tenant_id AND id = @id AND state = 'held' AND held_expires_at > @now
  AND (leased_until IS NULL OR leased_until <= @now)
  AND NOT (@principal::text = ANY(judged_by));

-- name: ArtifactLeaseUnlocked :execrows
-- ArtifactLease, passing over a row another transaction has locked (most
-- often another reviewer's lease, not yet committed) instead of waiting
-- for it, so concurrent serves do not queue behind each other on the
-- oldest item. The conditions are checked on the row version locked.
UPDATE admission.artifacts a SET leased_until = @until
FROM (
    SELECT x.tenant_id, x.id FROM admission.artifacts x
    WHERE x.tenant_id = @tenant_id AND x.id = @id AND x.state = 'held' AND x.held_expires_at > @now
      AND (x.leased_until IS NULL OR x.leased_until <= @now)
      AND NOT (@principal::text = ANY(x.judged_by))
    FOR NO KEY UPDATE SKIP LOCKED
) free
WHERE a.tenant_id = free.tenant_id AND a.id = free.id;

-- name: ArtifactsRecentPromoted :many
-- The newest promoted claims under a workarea (the graph's default roots)
-- that the caller's fence admits (D10).
SELECT * FROM admission.artifacts
WHERE tenant_id = $1 AND state = 'promoted' AND workarea_id_path <@ (SELECT CAST(sqlc.arg(id_path)::text AS ltree))
  AND (simulation_id IS NULL OR simulation_id = ANY(@fence::text[]))
ORDER BY promoted_at DESC, id DESC
LIMIT @max_rows;

-- name: ArtifactClaimKeyLock :exec
-- Serialises promotions of one claim's versions (the newest promoted
-- version alone is in recall) until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('admission.claim_key/' || @tenant_id::text || '/' || @workarea_id::text || '/' || @simulation::text || '/' || @claim_key::text, 0));

-- name: ArtifactPromotedVersions :many
-- The promoted versions of one claim, oldest first.
SELECT id, version FROM admission.artifacts
WHERE tenant_id = $1 AND workarea_id = $2 AND claim_key = $3 AND state = 'promoted'
  AND coalesce(simulation_id, '') = @simulation::text
ORDER BY version;

-- name: EvidenceClaims :many
-- The claims submitted in a subtree in a time range, for the evidence
-- export; limit+1 rows tell the caller the range is too large.
SELECT id, workarea_id, claim_key, version, kind, state, author_key_id, author_principal,
       envelope, signature, self_signed, submitted_at, promoted_at, settled_at
FROM admission.artifacts
WHERE tenant_id = @tenant_id AND workarea_id = ANY(@workareas::text[])
  AND (simulation_id IS NULL OR simulation_id = ANY(@fence::text[])) -- the exporter's fence (D10)
  AND submitted_at >= @from_at AND submitted_at <= @to_at
ORDER BY submitted_at, id
LIMIT @max_rows;

-- name: PageHead :one
-- A knowledge-base page's (or a document's) promoted head: its newest promoted version (a
-- tombstone when the page was deleted).
SELECT * FROM admission.artifacts
WHERE tenant_id = $1 AND workarea_id = $2 AND claim_key = $3 AND kind IN ('page', 'document') AND state = 'promoted'
ORDER BY version DESC
LIMIT 1;

-- name: PageVersions :many
-- One page's (or document's) versions in the given states, newest first,
-- below a version number (0 for no bound), optionally one author's only;
-- the text only when asked for (its size always).
SELECT id, workarea_id, claim_key, version, kind, state, author_key_id, author_principal, submitted_at, held_expires_at,
       promoted_at, page_version, base_version,
       CASE WHEN @with_text::bool THEN coalesce(text, '') ELSE '' END::text AS text, octet_length(coalesce(text, ''))::int AS text_bytes
FROM admission.artifacts
WHERE tenant_id = @tenant_id AND workarea_id = @workarea_id AND claim_key = @claim_key AND kind IN ('page', 'document')
  AND state = ANY(@states::text[])
  AND (@before::int = 0 OR version < @before::int)
  AND (sqlc.narg(author_principal)::text IS NULL OR author_principal = sqlc.narg(author_principal))
ORDER BY version DESC
LIMIT @max_rows;

-- name: PageByVersion :one
-- The newest promoted version of a page whose text has this hash.
SELECT * FROM admission.artifacts
WHERE tenant_id = $1 AND workarea_id = $2 AND claim_key = $3 AND kind IN ('page', 'document') AND state = 'promoted'
  AND page_version = @page_version
ORDER BY version DESC
LIMIT 1;

-- name: PageHeads :many
-- The live pages (promoted heads that are not tombstones: the hash of an
-- empty text) inside the subtrees (allow minus deny), of the given
-- workareas only when any are given, in (workarea id, path) order after a
-- position, optionally under a path prefix; sizes, not texts.
SELECT h.id, h.workarea_id, h.claim_key, h.version, h.kind, h.state, h.author_key_id, h.author_principal, h.submitted_at,
       h.held_expires_at, h.promoted_at, h.page_version, h.base_version, ''::text AS text, h.text_bytes
FROM (
    SELECT DISTINCT ON (a.workarea_id, a.claim_key) a.id, a.workarea_id, a.claim_key, a.version, a.kind, a.state, a.author_key_id,
           a.author_principal, a.submitted_at, a.held_expires_at, a.promoted_at, a.page_version, a.base_version,
           octet_length(coalesce(a.text, ''))::int AS text_bytes
    FROM admission.artifacts a
    WHERE a.tenant_id = @tenant_id AND a.kind = 'page' AND a.state = 'promoted'
      AND (cardinality(@workareas::text[]) = 0 OR a.workarea_id = ANY(@workareas::text[]))
      AND (SELECT CAST(sqlc.arg(allow)::text[] AS ltree[])) @> a.workarea_id_path
      AND NOT ((SELECT CAST(sqlc.arg(deny)::text[] AS ltree[])) @> a.workarea_id_path)
      AND (a.workarea_id, a.claim_key) > (@after_workarea::text, @after_path::text)
      AND starts_with(a.claim_key, @prefix::text)
    ORDER BY a.workarea_id, a.claim_key, a.version DESC
) h
WHERE h.page_version <> 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
ORDER BY h.workarea_id, h.claim_key
LIMIT @max_rows;

-- name: HeldDepthByTenant :many
-- The review queue's depth per tenant, for /metrics (an index-only scan
-- of artifacts_held).
SELECT tenant_id, count(*)::bigint AS depth FROM admission.artifacts WHERE state = 'held' GROUP BY tenant_id;

-- name: HeldOldestDue :one
-- The expiry of the held item that has been due longest (@now when none
-- is), for the sweeper's lag in /metrics.
SELECT coalesce(min(held_expires_at), @now::timestamptz)::timestamptz AS due FROM admission.artifacts
WHERE state = 'held' AND held_expires_at <= @now::timestamptz;
