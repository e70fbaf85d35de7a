package app

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/canonjson"
)

// envelope is what oml-server signs for every submission: the claim's
// fields, its lineage and its attachments' digests. The text is bound by
// its SHA-256, so erasure can drop the text and keep a verifiable record.
type envelope struct {
	V               int                  `json:"v"`
	TenantID        string               `json:"tenant_id"`
	ArtifactID      string               `json:"artifact_id"`
	WorkareaID      string               `json:"workarea_id"`
	ClaimKey        string               `json:"claim_key"`
	Version         int                  `json:"version"`
	Kind            domain.Kind          `json:"kind"`
	Verb            domain.Verb          `json:"verb"`
	TextSHA256      string               `json:"text_sha256"`
	DerivesFrom     []string             `json:"derives_from"`
	Attachments     []envelopeAttachment `json:"attachments"`
	AuthorKeyID     string               `json:"author_key_id"`
	AuthorPrincipal string               `json:"author_principal"`
	Supersedes      string               `json:"supersedes,omitempty"`
	SimulationID    string               `json:"simulation_id,omitempty"`
	BaseVersion     string               `json:"base_version,omitempty"`
	SubmittedAt     time.Time            `json:"submitted_at"`
}

type envelopeAttachment struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
}

// sealEnvelope returns the canonical envelope of c and its signature.
func (s *Service) sealEnvelope(c domain.Claim) (body, sig []byte, err error) {
	sum := sha256.Sum256([]byte(c.Text))
	e := envelope{
		V: 1, TenantID: c.TenantID, ArtifactID: c.ID, WorkareaID: c.WorkareaID, ClaimKey: c.ClaimKey,
		Version: c.Version, Kind: c.Kind, Verb: c.Verb, TextSHA256: hex.EncodeToString(sum[:]),
		DerivesFrom: slices.Sorted(slices.Values(c.DerivesFrom)), Attachments: []envelopeAttachment{},
		AuthorKeyID: c.AuthorKeyID, AuthorPrincipal: c.AuthorPrincipal, Supersedes: c.Supersedes,
		SimulationID: c.SimulationID, BaseVersion: c.BaseVersion, SubmittedAt: c.SubmittedAt,
	}
	if e.DerivesFrom == nil {
		e.DerivesFrom = []string{}
	}
	for _, a := range c.Attachments {
		e.Attachments = append(e.Attachments, envelopeAttachment(a))
	}
	body, err = canonjson.Marshal(e)
	if err != nil {
		return nil, nil, err
	}
	return body, s.Signer.Sign(body), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
