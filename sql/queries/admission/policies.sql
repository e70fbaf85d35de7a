-- name: PolicyAt :one
-- The policy of the nearest workarea on the path from the root that sets one.
SELECT required_approvals, held_ttl_seconds, scan_policy FROM admission.policies
WHERE tenant_id = $1 AND workarea_id_path @> (SELECT CAST(sqlc.arg(id_path)::text AS ltree))
ORDER BY nlevel(workarea_id_path) DESC
LIMIT 1;

-- name: PoliciesAt :many
-- PolicyAt for many id paths at once, one row a path: the policy of the
-- nearest workarea on it that sets one (has_policy false where none
-- does: the default), with the tenant's self-signed switch, in one round
-- trip.
SELECT p.path::text AS path, (a.required_approvals IS NOT NULL)::boolean AS has_policy,
    coalesce(a.required_approvals, 0)::int AS required_approvals, coalesce(a.held_ttl_seconds, 0)::int AS held_ttl_seconds,
    coalesce(a.scan_policy, '')::text AS scan_policy,
    coalesce((SELECT s.self_signed_development FROM admission.tenant_settings s WHERE s.tenant_id = @tenant_id), false)::boolean AS self_signed_development
FROM unnest(@id_paths::text[]) AS p(path)
LEFT JOIN LATERAL (
    SELECT x.required_approvals, x.held_ttl_seconds, x.scan_policy FROM admission.policies x
    WHERE x.tenant_id = @tenant_id AND x.workarea_id_path @> p.path::ltree
    ORDER BY nlevel(x.workarea_id_path) DESC
    LIMIT 1
) a ON true;

-- name: PolicyUpsert :exec
INSERT INTO admission.policies (tenant_id, workarea_id, workarea_id_path, required_approvals, held_ttl_seconds, scan_policy, updated_at)
VALUES (@tenant_id, @workarea_id, CAST(sqlc.arg(id_path)::text AS ltree), @required_approvals, @held_ttl_seconds, @scan_policy, now())
ON CONFLICT (tenant_id, workarea_id) DO UPDATE
SET required_approvals = EXCLUDED.required_approvals, held_ttl_seconds = EXCLUDED.held_ttl_seconds,
    scan_policy = EXCLUDED.scan_policy, updated_at = now();

-- name: SettingsSelfSigned :one
SELECT self_signed_development FROM admission.tenant_settings WHERE tenant_id = $1;

-- name: SettingsSetSelfSigned :exec
INSERT INTO admission.tenant_settings (tenant_id, self_signed_development) VALUES ($1, $2)
ON CONFLICT (tenant_id) DO UPDATE SET self_signed_development = EXCLUDED.self_signed_development;
