// Package wire holds the admission context's JSON shapes (seed 000), shared
// by its HTTP routes and MCP tools, the named conversions from app types,
// and the idempotent submission both surfaces use.
package wire

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/app"
	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/auth"
	"github.com/omlhub/oml/platform/idempotency"
	"github.com/omlhub/oml/platform/scope"
)

// AttachmentRef names a completed upload session.
type AttachmentRef struct {
	UploadSession string `json:"upload_session" jsonschema:"an upload session completed with oml_attach (ups_…)"`
}

// RememberIn is the input of oml_remember.
type RememberIn struct {
	Workarea       string          `json:"workarea" jsonschema:"the target workarea id (wa_…) or path"`
	ClaimKey       string          `json:"claim_key" jsonschema:"groups the versions of one claim; unique per workarea"`
	Text           string          `json:"text"`
	Kind           string          `json:"kind,omitempty" jsonschema:"memory (default), derived_fact or steering"`
	Attachments    []AttachmentRef `json:"attachments,omitempty"`
	DerivesFrom    []string        `json:"derives_from,omitempty" jsonschema:"artifact ids this memory derives from"`
	SimulationID   string          `json:"simulation_id,omitempty" jsonschema:"a simulation (sim_…) whose audience holds this key: the row is served only to that audience (D10)"`
	IdempotencyKey string          `json:"idempotency_key,omitempty" jsonschema:"a retry with the same key and request returns the stored response"`
}

// RememberOut is the output of oml_remember.
type RememberOut struct {
	ArtifactID       string `json:"artifact_id"`
	ClaimKey         string `json:"claim_key"`
	Version          int    `json:"version"`
	State            string `json:"state"`
	Workarea         string `json:"workarea"`
	AttachmentsBound int    `json:"attachments_bound"`
	IdempotentReplay bool   `json:"idempotent_replay"`
	// Provenance is "simulation" for a simulation's row (D10), else
	// omitted.
	Provenance   string `json:"provenance,omitempty"`
	SimulationID string `json:"simulation_id,omitempty"`
}

// LearnIn is the input of oml_learn.
type LearnIn struct {
	Workarea string `json:"workarea" jsonschema:"the target workarea id (wa_…) or path"`
	ClaimKey string `json:"claim_key"`
	Text     string `json:"text"`
	// Not schema-required: seed 000 refuses an omitted derives_from as
	// submission.lineage_required, like an empty one, not as a missing field.
	DerivesFrom    []string        `json:"derives_from,omitempty" jsonschema:"the artifacts this fact was distilled from; must be non-empty (omitted or empty: submission.lineage_required)"`
	Attachments    []AttachmentRef `json:"attachments,omitempty"`
	SimulationID   string          `json:"simulation_id,omitempty" jsonschema:"a simulation (sim_…) whose audience holds this key: the row is served only to that audience (D10)"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// LearnOut is the output of oml_learn.
type LearnOut struct {
	ArtifactID       string `json:"artifact_id"`
	ClaimKey         string `json:"claim_key"`
	Version          int    `json:"version"`
	Kind             string `json:"kind"`
	State            string `json:"state"`
	LineageDeclared  int    `json:"lineage_declared"`
	IdempotentReplay bool   `json:"idempotent_replay"`
	// Provenance is "simulation" for a simulation's row (D10), else
	// omitted.
	Provenance   string `json:"provenance,omitempty"`
	SimulationID string `json:"simulation_id,omitempty"`
}

// MemoryIn is the body of POST /v1/memories.
type MemoryIn struct {
	Verb           string          `json:"verb,omitempty"`
	Workarea       string          `json:"workarea"`
	ClaimKey       string          `json:"claim_key,omitempty"`
	Text           string          `json:"text"`
	Kind           string          `json:"kind,omitempty"`
	Attachments    []AttachmentRef `json:"attachments,omitempty"`
	DerivesFrom    []string        `json:"derives_from,omitempty"`
	Supersedes     string          `json:"supersedes,omitempty"`
	SimulationID   string          `json:"simulation_id,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// Submission converts the body.
func (m MemoryIn) Submission() domain.Submission {
	verb := domain.Verb(m.Verb)
	if verb == "" {
		verb = domain.VerbRemember
	}
	sub := domain.Submission{
		Verb: verb, Workarea: m.Workarea, ClaimKey: m.ClaimKey, Kind: domain.Kind(m.Kind), Text: m.Text,
		DerivesFrom: m.DerivesFrom, Supersedes: m.Supersedes, SimulationID: m.SimulationID,
	}
	for _, a := range m.Attachments {
		sub.Uploads = append(sub.Uploads, a.UploadSession)
	}
	return sub
}

// FromRemember converts oml_remember's input.
func FromRemember(in RememberIn) MemoryIn {
	return MemoryIn{Verb: "remember", Workarea: in.Workarea, ClaimKey: in.ClaimKey, Text: in.Text, Kind: in.Kind,
		Attachments: in.Attachments, DerivesFrom: in.DerivesFrom, SimulationID: in.SimulationID, IdempotencyKey: in.IdempotencyKey}
}

// FromLearn converts oml_learn's input.
func FromLearn(in LearnIn) MemoryIn {
	return MemoryIn{Verb: "learn", Workarea: in.Workarea, ClaimKey: in.ClaimKey, Text: in.Text, Kind: "derived_fact",
		Attachments: in.Attachments, DerivesFrom: in.DerivesFrom, SimulationID: in.SimulationID, IdempotencyKey: in.IdempotencyKey}
}

// Submitted is a submission's answer in either shape.
type Submitted struct {
	Remember *RememberOut
	Learn    *LearnOut
}

// Body is the JSON document of the answer.
func (s Submitted) Body() any {
	if s.Learn != nil {
		return s.Learn
	}
	return s.Remember
}

// Submit runs one submission under the caller's idempotency key, scoped to
// (key, resolved workarea, verb), and returns the stored answer on a replay.
func Submit(ctx context.Context, svc *app.Service, idem idempotency.Doer, in MemoryIn, key string) (Submitted, error) {
	sub := in.Submission()
	in.IdempotencyKey = ""
	c, _ := auth.From(ctx)
	scope := idempotency.Scope{TenantID: c.TenantID, KeyID: c.KeyID, Operation: "submission." + string(sub.Verb), Key: key}
	if key != "" {
		id, err := svc.ResolveWorkarea(ctx, in.Workarea)
		if err != nil {
			return Submitted{}, err
		}
		scope.Workarea = id
	}
	// Prepare (which may call an embedding service) before the unit of
	// work the idempotency record opens.
	prepared, err := svc.Prepare(ctx, sub)
	if err != nil {
		return Submitted{}, err
	}
	res, err := idem.Do(ctx, scope, in, func(ctx context.Context) (any, error) {
		r, err := svc.Commit(ctx, prepared)
		if err != nil {
			return nil, err
		}
		return toSubmitted(r).Body(), nil
	})
	if err != nil {
		return Submitted{}, err
	}
	var out Submitted
	if sub.Verb == domain.VerbLearn {
		out.Learn = new(LearnOut)
		err = json.Unmarshal(res.Response(), out.Learn)
	} else {
		out.Remember = new(RememberOut)
		err = json.Unmarshal(res.Response(), out.Remember)
	}
	return out, err
}

func toSubmitted(r app.Receipt) Submitted {
	c := r.Claim
	if c.Verb == domain.VerbLearn {
		return Submitted{Learn: &LearnOut{
			ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: ShownVersion(c), Kind: string(c.Kind),
			State: string(c.State), LineageDeclared: r.LineageDeclared,
			Provenance: scope.Provenance(c.SimulationID), SimulationID: c.SimulationID,
		}}
	}
	return Submitted{Remember: &RememberOut{
		ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: ShownVersion(c), State: string(c.State),
		Workarea: c.WorkareaID, AttachmentsBound: r.AttachmentsBound,
		Provenance: scope.Provenance(c.SimulationID), SimulationID: c.SimulationID,
	}}
}

// MyWorkIn is the input of oml_my_work.
type MyWorkIn struct {
	Workarea string `json:"workarea,omitempty" jsonschema:"only this workarea (id or path)"`
	State    string `json:"state,omitempty" jsonschema:"held, promoted, rejected, expired, demoted or erased"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size, 1–200 (default 50)"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// WorkItem is one own submission.
type WorkItem struct {
	ArtifactID    string     `json:"artifact_id"`
	ClaimKey      string     `json:"claim_key"`
	Version       int        `json:"version"`
	Kind          string     `json:"kind"`
	State         string     `json:"state"`
	SubmittedAt   time.Time  `json:"submitted_at"`
	HeldExpiresAt *time.Time `json:"held_expires_at,omitempty"`
	PromotedAt    *time.Time `json:"promoted_at,omitempty"`
	Provenance    string     `json:"provenance,omitempty"`
	SimulationID  string     `json:"simulation_id,omitempty"`
}

// MyWorkOut is the output of oml_my_work.
type MyWorkOut struct {
	Items      []WorkItem `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

// ToMyWork converts a page of own work.
func ToMyWork(p app.MinePage) MyWorkOut {
	out := MyWorkOut{Items: make([]WorkItem, len(p.Items))}
	for i, c := range p.Items {
		item := WorkItem{ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: ShownVersion(c), Kind: string(c.Kind), State: string(c.State),
			SubmittedAt: c.SubmittedAt.UTC(), PromotedAt: utc(c.PromotedAt), Provenance: scope.Provenance(c.SimulationID), SimulationID: c.SimulationID}
		if c.State == domain.StateHeld {
			t := c.HeldExpiresAt.UTC()
			item.HeldExpiresAt = &t
		}
		out.Items[i] = item
	}
	if p.NextCursor != "" {
		out.NextCursor = &p.NextCursor
	}
	return out
}

// Attachment is a bound attachment as shown.
type Attachment struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
}

// Finding is a scan finding as shown.
type Finding struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Offset  int    `json:"offset"`
}

// Artifact is GET /v1/artifacts/{id}: the claim as the key may see it,
// with its signed envelope.
type Artifact struct {
	ArtifactID    string          `json:"artifact_id"`
	ClaimKey      string          `json:"claim_key"`
	Version       int             `json:"version"`
	Kind          string          `json:"kind"`
	State         string          `json:"state"`
	Workarea      string          `json:"workarea"`
	Text          *string         `json:"text"`
	DerivesFrom   []string        `json:"derives_from"`
	Supersedes    string          `json:"supersedes,omitempty"`
	Attachments   []Attachment    `json:"attachments"`
	Findings      []Finding       `json:"findings,omitempty"`
	SelfSigned    bool            `json:"self_signed"`
	SubmittedAt   time.Time       `json:"submitted_at"`
	HeldExpiresAt *time.Time      `json:"held_expires_at,omitempty"`
	PromotedAt    *time.Time      `json:"promoted_at,omitempty"`
	Provenance    string          `json:"provenance,omitempty"`
	SimulationID  string          `json:"simulation_id,omitempty"`
	Envelope      json.RawMessage `json:"envelope"`
	Signature     string          `json:"signature" jsonschema:"base64 Ed25519 signature of the envelope's canonical bytes"`
}

// ToArtifact converts a claim; findings are shown to the author only.
func ToArtifact(c domain.Claim, parents []string, author bool) Artifact {
	a := Artifact{
		ArtifactID: c.ID, ClaimKey: c.ClaimKey, Version: ShownVersion(c), Kind: string(c.Kind), State: string(c.State),
		Workarea: c.WorkareaID, DerivesFrom: orEmpty(parents), Supersedes: c.Supersedes, Attachments: ToAttachments(c.Attachments),
		SelfSigned: c.SelfSigned, SubmittedAt: c.SubmittedAt.UTC(), PromotedAt: utc(c.PromotedAt),
		Provenance: scope.Provenance(c.SimulationID), SimulationID: c.SimulationID,
		Envelope: json.RawMessage(c.Envelope), Signature: base64.StdEncoding.EncodeToString(c.Signature),
	}
	if c.State != domain.StateErased {
		a.Text = &c.Text
	}
	if c.State == domain.StateHeld {
		t := c.HeldExpiresAt.UTC()
		a.HeldExpiresAt = &t
	}
	if author {
		a.Findings = ToFindings(c.Findings)
	}
	return a
}

// ToAttachments converts bound attachments.
func ToAttachments(in []domain.Attachment) []Attachment {
	out := make([]Attachment, len(in))
	for i, a := range in {
		out[i] = Attachment(a)
	}
	return out
}

// ToFindings converts scan findings.
func ToFindings(in []domain.Finding) []Finding {
	out := make([]Finding, len(in))
	for i, f := range in {
		out[i] = Finding{Rule: f.Rule, Message: f.Message, Offset: f.Offset}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ShownVersion is a claim's version number as answers show it: a page's
// or document's is 0, since it counts every identity's versions of it,
// held ones included (R3); their own contexts number promoted versions.
func ShownVersion(c domain.Claim) int {
	if c.Kind.Versioned() {
		return 0
	}
	return c.Version
}
