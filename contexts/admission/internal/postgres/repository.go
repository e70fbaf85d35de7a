// Package postgres is the admission context's storage adapter: app.Repository
// over the admission schema with sqlc, translating driver errors at the
// boundary.
package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/contexts/admission/internal/postgres/dbsqlc"
	"github.com/omlhub/oml/platform/pg"
	"github.com/omlhub/oml/platform/scope"
)

// Repository implements app.Repository.
type Repository struct {
	db *pg.DB
	q  *dbsqlc.Queries
}

var _ app.Repository = (*Repository)(nil)

// New returns a repository on db.
func New(db *pg.DB) *Repository { return &Repository{db: db, q: dbsqlc.New()} }

// conn is the unit of work carried by ctx, or the pool. Statements whose
// caller only returns their error (ClaimUpdate, ClaimKeyLock,
// ServeDecide, the serve's row) go on r.db.Later instead, in the round
// trip of the statement after them.
func (r *Repository) conn(ctx context.Context) dbsqlc.DBTX { return r.db.Conn(ctx) }

func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case pg.IsNoRows(err):
		return app.ErrNotFound
	case pg.IsUniqueViolation(err, ""):
		return fmt.Errorf("%w: %v", app.ErrConflict, err)
	}
	return err
}

// findingRecord and attachmentRecord are the stored JSON forms.
type findingRecord struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Offset  int    `json:"offset"`
}

type attachmentRecord struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// records encodes a claim's findings and attachments as stored.
func records(c domain.Claim) (findingsJSON, attachmentsJSON []byte, err error) {
	findings := make([]findingRecord, len(c.Findings))
	for i, f := range c.Findings {
		findings[i] = findingRecord{Rule: f.Rule, Message: f.Message, Offset: f.Offset}
	}
	attachments := make([]attachmentRecord, len(c.Attachments))
	for i, a := range c.Attachments {
		attachments[i] = attachmentRecord(a)
	}
	if findingsJSON, err = json.Marshal(findings); err != nil {
		return nil, nil, err
	}
	attachmentsJSON, err = json.Marshal(attachments)
	return findingsJSON, attachmentsJSON, err
}

// ClaimInsert stores a new claim version with its sealed envelope.
func (r *Repository) ClaimInsert(ctx context.Context, c domain.Claim, envelope, signature []byte) error {
	fj, aj, err := records(c)
	if err != nil {
		return err
	}
	text := c.Text
	return translate(r.q.ArtifactInsert(ctx, r.conn(ctx), dbsqlc.ArtifactInsertParams{
		TenantID: c.TenantID, ID: c.ID, WorkareaID: c.WorkareaID, WorkareaIDPath: c.WorkareaIDPath,
		ClaimKey: c.ClaimKey, Version: int32(c.Version), Kind: string(c.Kind), Verb: string(c.Verb),
		State: string(c.State), Text: &text, AuthorKeyID: c.AuthorKeyID, AuthorPrincipal: c.AuthorPrincipal,
		Supersedes: nullable(c.Supersedes), SimulationID: nullable(c.SimulationID), Findings: fj, Attachments: aj,
		Envelope: envelope, Signature: signature, RequiredApprovals: int32(c.RequiredApprovals),
		SubmittedAt: c.SubmittedAt, HeldExpiresAt: c.HeldExpiresAt,
		PageVersion: nullable(c.PageVersion), BaseVersion: nullable(c.BaseVersion),
	}))
}

// PageHead returns a page's newest promoted version (ErrNotFound if none).
func (r *Repository) PageHead(ctx context.Context, tenant, workarea, path string) (domain.Claim, error) {
	row, err := r.q.PageHead(ctx, r.conn(ctx), dbsqlc.PageHeadParams{TenantID: tenant, WorkareaID: workarea, ClaimKey: path})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return claimFromRow(row)
}

// PageByVersion returns the newest promoted version of a page whose text
// hashes to version (ErrNotFound if none).
func (r *Repository) PageByVersion(ctx context.Context, tenant, workarea, path, version string) (domain.Claim, error) {
	row, err := r.q.PageByVersion(ctx, r.conn(ctx), dbsqlc.PageByVersionParams{TenantID: tenant, WorkareaID: workarea, ClaimKey: path, PageVersion: &version})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return claimFromRow(row)
}

// PageVersions lists a page's versions in states, newest first, below
// version before (0: no bound), author's only when author is not "";
// their texts only withText (their sizes always).
func (r *Repository) PageVersions(ctx context.Context, tenant, workarea, path string, states []domain.State, author string, before, limit int, withText bool) ([]domain.Claim, error) {
	st := make([]string, len(states))
	for i, x := range states {
		st[i] = string(x)
	}
	rows, err := r.q.PageVersions(ctx, r.conn(ctx), dbsqlc.PageVersionsParams{TenantID: tenant, WorkareaID: workarea, ClaimKey: path,
		States: st, Before: int32(before), AuthorPrincipal: nullable(author), MaxRows: int32(limit), WithText: withText})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Claim, len(rows))
	for i, row := range rows {
		out[i] = pageFromRow(tenant, row)
	}
	return out, nil
}

// pageFromRow converts a page listing's row (no envelope, findings or
// attachments: a page carries none a reader needs).
func pageFromRow(tenant string, row dbsqlc.PageVersionsRow) domain.Claim {
	c := domain.Claim{ID: row.ID, TenantID: tenant, WorkareaID: row.WorkareaID, ClaimKey: row.ClaimKey, Version: int(row.Version),
		Kind: domain.Kind(row.Kind), Verb: domain.VerbRemember, State: domain.State(row.State), Text: row.Text, AuthorKeyID: row.AuthorKeyID,
		AuthorPrincipal: row.AuthorPrincipal, SubmittedAt: row.SubmittedAt, HeldExpiresAt: row.HeldExpiresAt, PromotedAt: row.PromotedAt,
		TextBytes: int(row.TextBytes)}
	if row.PageVersion != nil {
		c.PageVersion = *row.PageVersion
	}
	if row.BaseVersion != nil {
		c.BaseVersion = *row.BaseVersion
	}
	return c
}

// PageHeads lists live pages inside within (of workareas only, when any
// are given) in (workarea id, path) order after a position, under prefix.
func (r *Repository) PageHeads(ctx context.Context, tenant string, f app.PageFilter) ([]domain.Claim, error) {
	rows, err := r.q.PageHeads(ctx, r.conn(ctx), dbsqlc.PageHeadsParams{TenantID: tenant, Workareas: nonNil(f.Workareas),
		Allow: nonNil(f.Within.Allow), Deny: nonNil(f.Within.Deny), AfterWorkarea: f.AfterWorkarea, AfterPath: f.AfterPath,
		Prefix: f.Prefix, MaxRows: int32(f.Limit)})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Claim, len(rows))
	for i, row := range rows {
		out[i] = pageFromRow(tenant, dbsqlc.PageVersionsRow(row))
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ClaimKeyLock takes the transaction-scoped lock on one claim's versions.
func (r *Repository) ClaimKeyLock(ctx context.Context, tenant, workarea, simulation, claimKey string) error {
	return translate(r.q.ArtifactClaimKeyLock(ctx, r.db.Later(ctx, "admission: lock claim versions"), dbsqlc.ArtifactClaimKeyLockParams{
		TenantID: tenant, WorkareaID: workarea, Simulation: simulation, ClaimKey: claimKey,
	}))
}

// PromotedVersions lists the promoted versions of one claim (id and
// version only), oldest first.
func (r *Repository) PromotedVersions(ctx context.Context, tenant, workarea, simulation, claimKey string) ([]domain.Claim, error) {
	rows, err := r.q.ArtifactPromotedVersions(ctx, r.conn(ctx), dbsqlc.ArtifactPromotedVersionsParams{
		TenantID: tenant, WorkareaID: workarea, Simulation: simulation, ClaimKey: claimKey,
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]domain.Claim, len(rows))
	for i, row := range rows {
		out[i] = domain.Claim{ID: row.ID, TenantID: tenant, WorkareaID: workarea, ClaimKey: claimKey, Version: int(row.Version), State: domain.StatePromoted}
	}
	return out, nil
}

// claimFromRow converts a stored row. DerivesFrom is not stored here (the
// lineage context owns it).
func claimFromRow(row dbsqlc.AdmissionArtifact) (domain.Claim, error) {
	c := domain.Claim{
		ID: row.ID, TenantID: row.TenantID, WorkareaID: row.WorkareaID, WorkareaIDPath: row.WorkareaIDPath,
		ClaimKey: row.ClaimKey, Version: int(row.Version), Kind: domain.Kind(row.Kind), Verb: domain.Verb(row.Verb),
		State: domain.State(row.State), AuthorKeyID: row.AuthorKeyID, AuthorPrincipal: row.AuthorPrincipal,
		RequiredApprovals: int(row.RequiredApprovals), Approvals: int(row.Approvals), SelfSigned: row.SelfSigned,
		SubmittedAt: row.SubmittedAt, HeldExpiresAt: row.HeldExpiresAt, SettledAt: row.SettledAt, PromotedAt: row.PromotedAt,
		Envelope: row.Envelope, Signature: row.Signature, LeasedUntil: row.LeasedUntil,
	}
	if row.Text != nil {
		c.Text = *row.Text
	}
	if row.Supersedes != nil {
		c.Supersedes = *row.Supersedes
	}
	if row.SimulationID != nil {
		c.SimulationID = *row.SimulationID
	}
	if row.PageVersion != nil {
		c.PageVersion = *row.PageVersion
	}
	if row.BaseVersion != nil {
		c.BaseVersion = *row.BaseVersion
	}
	c.TextBytes = len(c.Text)
	var findings []findingRecord
	if err := json.Unmarshal(row.Findings, &findings); err != nil {
		return c, fmt.Errorf("decode findings of %s: %w", row.ID, err)
	}
	for _, f := range findings {
		c.Findings = append(c.Findings, domain.Finding{Rule: f.Rule, Message: f.Message, Offset: f.Offset})
	}
	var attachments []attachmentRecord
	if err := json.Unmarshal(row.Attachments, &attachments); err != nil {
		return c, fmt.Errorf("decode attachments of %s: %w", row.ID, err)
	}
	for _, a := range attachments {
		c.Attachments = append(c.Attachments, domain.Attachment(a))
	}
	return c, nil
}

func claimsFromRows(rows []dbsqlc.AdmissionArtifact) ([]domain.Claim, error) {
	out := make([]domain.Claim, len(rows))
	for i, row := range rows {
		var err error
		if out[i], err = claimFromRow(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClaimKeyHolder returns the newest non-erased version with the key.
func (r *Repository) ClaimKeyHolder(ctx context.Context, tenant, workarea, simulation, claimKey string) (domain.Claim, error) {
	row, err := r.q.ArtifactKeyHolder(ctx, r.conn(ctx), dbsqlc.ArtifactKeyHolderParams{TenantID: tenant, WorkareaID: workarea, Simulation: simulation, ClaimKey: claimKey})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return claimFromRow(row)
}

// ClaimKeyHead returns the id and version of a claim's newest held or
// promoted version (ErrNotFound if none).
func (r *Repository) ClaimKeyHead(ctx context.Context, tenant, workarea, simulation, claimKey string) (domain.Claim, error) {
	row, err := r.q.ArtifactKeyHead(ctx, r.conn(ctx), dbsqlc.ArtifactKeyHeadParams{TenantID: tenant, WorkareaID: workarea, Simulation: simulation, ClaimKey: claimKey})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return domain.Claim{ID: row.ID, TenantID: tenant, WorkareaID: workarea, ClaimKey: claimKey, Version: int(row.Version)}, nil
}

// ClaimGet loads one artifact.
func (r *Repository) ClaimGet(ctx context.Context, tenant, id string) (domain.Claim, error) {
	row, err := r.q.ArtifactGet(ctx, r.conn(ctx), dbsqlc.ArtifactGetParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return claimFromRow(row)
}

// ClaimGetForUpdate loads and locks one artifact.
func (r *Repository) ClaimGetForUpdate(ctx context.Context, tenant, id string) (domain.Claim, error) {
	row, err := r.q.ArtifactGetForUpdate(ctx, r.conn(ctx), dbsqlc.ArtifactGetForUpdateParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Claim{}, translate(err)
	}
	return claimFromRow(row)
}

// ClaimsByIDs loads the artifacts that exist among ids.
func (r *Repository) ClaimsByIDs(ctx context.Context, tenant string, ids []string) ([]domain.Claim, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := r.q.ArtifactsByIDs(ctx, r.conn(ctx), dbsqlc.ArtifactsByIDsParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	return claimsFromRows(rows)
}

// Authors maps each existing artifact among ids to its author principal.
func (r *Repository) Authors(ctx context.Context, tenant string, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.q.ArtifactAuthorsByIDs(ctx, r.conn(ctx), dbsqlc.ArtifactAuthorsByIDsParams{TenantID: tenant, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	for _, row := range rows {
		out[row.ID] = row.AuthorPrincipal
	}
	return out, nil
}

// ClaimUpdate stores a claim's lifecycle fields.
func (r *Repository) ClaimUpdate(ctx context.Context, c domain.Claim) error {
	var text *string
	if c.State != domain.StateErased {
		text = &c.Text
	}
	fj, aj, err := records(c)
	if err != nil {
		return err
	}
	return translate(r.q.ArtifactUpdate(ctx, r.db.Later(ctx, "admission: update claim"), dbsqlc.ArtifactUpdateParams{
		TenantID: c.TenantID, ID: c.ID, State: string(c.State), Approvals: int32(c.Approvals),
		SelfSigned: c.SelfSigned, SettledAt: c.SettledAt, PromotedAt: c.PromotedAt, Text: text,
		LeasedUntil: c.LeasedUntil, Attachments: aj, Findings: fj,
	}))
}

// Mine lists a key's own submissions.
func (r *Repository) Mine(ctx context.Context, tenant, keyID string, f app.MineFilter) ([]domain.Claim, error) {
	rows, err := r.q.ArtifactsMine(ctx, r.conn(ctx), dbsqlc.ArtifactsMineParams{
		TenantID: tenant, AuthorKeyID: keyID, WorkareaID: nullable(f.WorkareaID), State: nullable(string(f.State)),
		Before: nullable(f.Before), MaxRows: int32(f.Limit),
	})
	if err != nil {
		return nil, translate(err)
	}
	return claimsFromRows(rows)
}

// QueueCandidates locks review candidates.
func (r *Repository) QueueCandidates(ctx context.Context, tenant string, f app.QueueFilter) ([]domain.Claim, error) {
	rows, err := r.q.ArtifactsQueue(ctx, r.conn(ctx), dbsqlc.ArtifactsQueueParams{
		TenantID: tenant, Now: f.Now, Allow: orEmpty(f.Within.Allow), Deny: orEmpty(f.Within.Deny),
		Skip: orEmpty(f.Skip), Principal: f.Principal, MaxRows: int32(f.Limit), Fence: f.Fence.IDs(),
	})
	if err != nil {
		return nil, translate(err)
	}
	return claimsFromRows(rows)
}

// ServeRelease implements app.Repository.
func (r *Repository) ServeRelease(ctx context.Context, tenant, id string, at time.Time) error {
	return translate(r.q.ServeRelease(ctx, r.conn(ctx), dbsqlc.ServeReleaseParams{TenantID: tenant, ID: id, Now: &at}))
}

// ClaimLeaseClear implements app.Repository.
func (r *Repository) ClaimLeaseClear(ctx context.Context, tenant, id string, lease time.Time) error {
	return translate(r.q.ArtifactLeaseClear(ctx, r.conn(ctx), dbsqlc.ArtifactLeaseClearParams{TenantID: tenant, ID: id, Lease: &lease}))
}

// ServeJudgedBy implements app.Repository.
func (r *Repository) ServeJudgedBy(ctx context.Context, tenant, artifact, principal string) (bool, error) {
	ok, err := r.q.ServeJudgedBy(ctx, r.conn(ctx), dbsqlc.ServeJudgedByParams{TenantID: tenant, ArtifactID: &artifact, Principal: principal})
	return ok, translate(err)
}

// QueueCounts implements app.Repository.
func (r *Repository) QueueCounts(ctx context.Context, tenant string, f app.QueueFilter) ([]app.QueueCount, error) {
	rows, err := r.q.ArtifactsQueueCounts(ctx, r.conn(ctx), dbsqlc.ArtifactsQueueCountsParams{
		TenantID: tenant, Now: &f.Now, Allow: orEmpty(f.Within.Allow), Deny: orEmpty(f.Within.Deny), Principal: f.Principal, Fence: f.Fence.IDs(),
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]app.QueueCount, len(rows))
	for i, row := range rows {
		out[i] = app.QueueCount{WorkareaID: row.WorkareaID, Waiting: int(row.Waiting), Leased: int(row.Leased), Oldest: row.Oldest}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// RecentPromoted lists the newest promoted claims under idPath.
func (r *Repository) RecentPromoted(ctx context.Context, tenant, idPath string, fence scope.Fence, limit int) ([]domain.Claim, error) {
	rows, err := r.q.ArtifactsRecentPromoted(ctx, r.conn(ctx), dbsqlc.ArtifactsRecentPromotedParams{TenantID: tenant, IDPath: idPath, Fence: fence.IDs(), MaxRows: int32(limit)})
	if err != nil {
		return nil, translate(err)
	}
	return claimsFromRows(rows)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ServeInsert takes the lease on the artifact row (ErrConflict when another
// reviewer holds it, the reviewer's principal has judged it or, unless
// wait, another transaction has the row locked) and records the serve.
func (r *Repository) ServeInsert(ctx context.Context, tenant string, s domain.Serve, wait bool) error {
	closure, err := json.Marshal(orEmpty(s.Closure))
	if err != nil {
		return err
	}
	if s.ArtifactID != "" {
		var n int64
		if wait {
			n, err = r.q.ArtifactLease(ctx, r.conn(ctx), dbsqlc.ArtifactLeaseParams{TenantID: tenant, ID: s.ArtifactID, Until: &s.ExpiresAt, Now: s.ServedAt, Principal: s.Reviewer.Principal})
		} else {
			n, err = r.q.ArtifactLeaseUnlocked(ctx, r.conn(ctx), dbsqlc.ArtifactLeaseUnlockedParams{TenantID: tenant, ID: s.ArtifactID, Until: &s.ExpiresAt, Now: s.ServedAt, Principal: s.Reviewer.Principal})
		}
		if err != nil {
			return translate(err)
		}
		if n == 0 {
			return app.ErrConflict // another reviewer leased it first
		}
	}
	return translate(r.q.ServeInsert(ctx, r.db.Later(ctx, "admission: insert serve"), dbsqlc.ServeInsertParams{
		TenantID: tenant, ID: s.ID, ArtifactID: nullable(s.ArtifactID), EdgeID: nullable(s.EdgeID), ReviewerKeyID: s.Reviewer.KeyID,
		ReviewerPrincipal: s.Reviewer.Principal, SelfSigned: s.SelfSigned, ServedAt: s.ServedAt,
		ExpiresAt: s.ExpiresAt, Closure: closure,
	}))
}

// ServeGetForUpdate loads and locks a lease.
func (r *Repository) ServeGetForUpdate(ctx context.Context, tenant, id string) (domain.Serve, error) {
	row, err := r.q.ServeGetForUpdate(ctx, r.conn(ctx), dbsqlc.ServeGetForUpdateParams{TenantID: tenant, ID: id})
	if err != nil {
		return domain.Serve{}, translate(err)
	}
	s := domain.Serve{
		ID: row.ID, ArtifactID: deref(row.ArtifactID), EdgeID: deref(row.EdgeID), SelfSigned: row.SelfSigned, ServedAt: row.ServedAt,
		ExpiresAt: row.ExpiresAt, ConsumedAt: row.ConsumedAt,
		Reviewer: domain.Reviewer{KeyID: row.ReviewerKeyID, Principal: row.ReviewerPrincipal},
	}
	if err := json.Unmarshal(row.Closure, &s.Closure); err != nil {
		return s, fmt.Errorf("decode closure of %s: %w", row.ID, err)
	}
	return s, nil
}

// ServeDecide records a verdict on a consumed lease.
func (r *Repository) ServeDecide(ctx context.Context, tenant string, s domain.Serve, v domain.Verdict, reason string) error {
	verdict := string(v)
	closure, err := json.Marshal(orEmpty(s.Closure))
	if err != nil {
		return err
	}
	return translate(r.q.ServeDecide(ctx, r.db.Later(ctx, "admission: record verdict"), dbsqlc.ServeDecideParams{
		TenantID: tenant, ID: s.ID, ConsumedAt: s.ConsumedAt, Verdict: &verdict, Reason: nullable(reason),
		Closure: closure, SelfSigned: s.SelfSigned,
	}))
}

// PoliciesAt is PolicyAt for many id paths: each path's nearest policy, or
// the default, with the tenant's self-signed switch, in one statement.
func (r *Repository) PoliciesAt(ctx context.Context, tenant string, idPaths []string) (map[string]domain.Policy, error) {
	rows, err := r.q.PoliciesAt(ctx, r.conn(ctx), dbsqlc.PoliciesAtParams{TenantID: tenant, IDPaths: idPaths})
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[string]domain.Policy, len(idPaths))
	for _, row := range rows {
		p := domain.DefaultPolicy
		if row.HasPolicy {
			p = domain.Policy{
				RequiredApprovals: int(row.RequiredApprovals),
				HeldTTL:           time.Duration(row.HeldTtlSeconds) * time.Second,
				Scan:              domain.ScanPolicy(row.ScanPolicy),
			}
		}
		p.SelfSignedDevelopment = row.SelfSignedDevelopment
		out[row.Path] = p
	}
	return out, nil
}

// PolicyAt returns the nearest policy on the path from the root, or the
// default.
func (r *Repository) PolicyAt(ctx context.Context, tenant, idPath string) (domain.Policy, error) {
	row, err := r.q.PolicyAt(ctx, r.conn(ctx), dbsqlc.PolicyAtParams{TenantID: tenant, IDPath: idPath})
	if pg.IsNoRows(err) {
		return domain.DefaultPolicy, nil
	}
	if err != nil {
		return domain.Policy{}, translate(err)
	}
	return domain.Policy{
		RequiredApprovals: int(row.RequiredApprovals),
		HeldTTL:           time.Duration(row.HeldTtlSeconds) * time.Second,
		Scan:              domain.ScanPolicy(row.ScanPolicy),
	}, nil
}

// PolicySet sets a workarea's policy.
func (r *Repository) PolicySet(ctx context.Context, tenant, workareaID, idPath string, p domain.Policy) error {
	return translate(r.q.PolicyUpsert(ctx, r.conn(ctx), dbsqlc.PolicyUpsertParams{
		TenantID: tenant, WorkareaID: workareaID, IDPath: idPath, RequiredApprovals: int32(p.RequiredApprovals),
		HeldTtlSeconds: int32(p.HeldTTL / time.Second), ScanPolicy: string(p.Scan),
	}))
}

// SelfSignedDevelopment reads the tenant switch (off when never set).
func (r *Repository) SelfSignedDevelopment(ctx context.Context, tenant string) (bool, error) {
	on, err := r.q.SettingsSelfSigned(ctx, r.conn(ctx), tenant)
	if pg.IsNoRows(err) {
		return false, nil
	}
	return on, translate(err)
}

// SetSelfSignedDevelopment sets the tenant switch.
func (r *Repository) SetSelfSignedDevelopment(ctx context.Context, tenant string, on bool) error {
	return translate(r.q.SettingsSetSelfSigned(ctx, r.conn(ctx), dbsqlc.SettingsSetSelfSignedParams{TenantID: tenant, SelfSignedDevelopment: on}))
}

// ExpireDue expires held items past their expiry.
func (r *Repository) ExpireDue(ctx context.Context, now time.Time, limit int) ([]domain.Claim, error) {
	rows, err := r.q.ArtifactsExpireDue(ctx, r.conn(ctx), dbsqlc.ArtifactsExpireDueParams{Now: &now, MaxRows: int32(limit)})
	if err != nil {
		return nil, translate(err)
	}
	return claimsFromRows(rows)
}

// ServeLive reports whether a key holds an unexpired, undecided serve of
// an artifact.
func (r *Repository) ServeLive(ctx context.Context, tenant, artifact, keyID string, now time.Time) (bool, error) {
	return r.q.ServeLive(ctx, r.conn(ctx), dbsqlc.ServeLiveParams{TenantID: tenant, ArtifactID: &artifact, KeyID: keyID, Now: now})
}

// EvidenceClaim is a submission as the evidence export records it.
type EvidenceClaim struct {
	ID, WorkareaID, ClaimKey string
	Version                  int
	Kind, State              string
	AuthorKeyID              string
	AuthorPrincipal          string
	Envelope                 json.RawMessage
	Signature                []byte
	SelfSigned               bool
	SubmittedAt              time.Time
	PromotedAt, SettledAt    *time.Time
}

// EvidenceServe is a serve and its verdict as the evidence export records
// it.
type EvidenceServe struct {
	ID, ArtifactID                   string
	ReviewerKeyID, ReviewerPrincipal string
	AuthorPrincipal                  string
	SelfSigned                       bool
	ServedAt, ExpiresAt              time.Time
	ConsumedAt                       *time.Time
	Verdict, Reason                  string
	Closure                          []string
}

// Evidence reads a subtree's claims and serves in a time range.
func (r *Repository) Evidence(ctx context.Context, tenant string, workareas []string, fence scope.Fence, from, to time.Time, limit int) ([]EvidenceClaim, []EvidenceServe, error) {
	if workareas == nil {
		workareas = []string{}
	}
	crows, err := r.q.EvidenceClaims(ctx, r.conn(ctx), dbsqlc.EvidenceClaimsParams{TenantID: tenant, Workareas: workareas, Fence: fence.IDs(), FromAt: from, ToAt: to, MaxRows: int32(limit + 1)})
	if err != nil {
		return nil, nil, translate(err)
	}
	claims := make([]EvidenceClaim, len(crows))
	for i, c := range crows {
		claims[i] = EvidenceClaim{ID: c.ID, WorkareaID: c.WorkareaID, ClaimKey: c.ClaimKey, Version: int(c.Version), Kind: c.Kind, State: c.State,
			AuthorKeyID: c.AuthorKeyID, AuthorPrincipal: c.AuthorPrincipal, Envelope: c.Envelope, Signature: c.Signature,
			SelfSigned: c.SelfSigned, SubmittedAt: c.SubmittedAt.UTC(), PromotedAt: c.PromotedAt, SettledAt: c.SettledAt}
	}
	srows, err := r.q.EvidenceServes(ctx, r.conn(ctx), dbsqlc.EvidenceServesParams{TenantID: tenant, Workareas: workareas, Fence: fence.IDs(), FromAt: from, ToAt: to, MaxRows: int32(limit + 1)})
	if err != nil {
		return nil, nil, translate(err)
	}
	serves := make([]EvidenceServe, len(srows))
	for i, s := range srows {
		sv := EvidenceServe{ID: s.ID, ReviewerKeyID: s.ReviewerKeyID, ReviewerPrincipal: s.ReviewerPrincipal, AuthorPrincipal: s.AuthorPrincipal,
			SelfSigned: s.SelfSigned, ServedAt: s.ServedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), ConsumedAt: s.ConsumedAt, Closure: []string{}}
		if s.ArtifactID != nil {
			sv.ArtifactID = *s.ArtifactID
		}
		if s.Verdict != nil {
			sv.Verdict = *s.Verdict
		}
		if s.Reason != nil {
			sv.Reason = *s.Reason
		}
		if len(s.Closure) > 0 {
			if err := json.Unmarshal(s.Closure, &sv.Closure); err != nil {
				return nil, nil, fmt.Errorf("serve %s closure: %w", s.ID, err)
			}
		}
		serves[i] = sv
	}
	return claims, serves, nil
}

// QueueDepth counts held items per tenant (for /metrics).
func (r *Repository) QueueDepth(ctx context.Context) (map[string]int64, error) {
	rows, err := r.q.HeldDepthByTenant(ctx, r.conn(ctx))
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, row := range rows {
		out[row.TenantID] = row.Depth
	}
	return out, nil
}

// OldestDue is the expiry of the held item due longest at now, now when
// none is (for /metrics).
func (r *Repository) OldestDue(ctx context.Context, now time.Time) (time.Time, error) {
	return r.q.HeldOldestDue(ctx, r.conn(ctx), now)
}
