package app

import (
	"context"
	"fmt"
	"time"

	"github.com/omlhub/oml/contexts/admission/internal/domain"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/journal"
)

// Config tunes the service.
type Config struct {
	MaxTextBytes int
	ServeTTL     time.Duration
	// ClosureMax bounds the lineage closure of one independence check.
	ClosureMax int
}

// Deps are the service's ports.
type Deps struct {
	Repo    Repository
	Access  Access
	Lineage Lineage
	Uploads Uploads
	Index   Index
	Signer  Signer
	Journal Journal
	Tx      Transactor
	// Reads sends independent reads together; nil runs them in order.
	Reads Pipeliner
	Now   func() time.Time
}

// Service is the admission context's application service.
type Service struct {
	Deps
	cfg Config
}

// New returns a service.
func New(d Deps, cfg Config) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Reads == nil {
		d.Reads = inOrder{}
	}
	if cfg.MaxTextBytes <= 0 {
		cfg.MaxTextBytes = domain.DefaultTextSize
	}
	if cfg.ClosureMax <= 0 {
		cfg.ClosureMax = 10_000
	}
	if cfg.ServeTTL <= 0 {
		cfg.ServeTTL = 15 * time.Minute
	}
	return &Service{Deps: d, cfg: cfg}
}

// inOrder is the Pipeliner of a service given none: one read after
// another, the first error returned.
type inOrder struct{}

func (inOrder) Together(ctx context.Context, fns ...func(ctx context.Context) error) error {
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	return nil
}

// now is the service clock at Postgres precision.
func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// artifactNotFound is the one refusal for unknown, unreadable, foreign and
// held-by-others artifacts (R3, fail closed).
func artifactNotFound() error {
	return errs.New(errs.NotFound, "R3: held items are visible to their author and served reviewer only; unknown and unreadable are indistinguishable",
		"no artifact with that id is readable by this key")
}

func (s *Service) record(ctx context.Context, tenant string, e journal.Event) error {
	if _, err := s.Journal.Append(ctx, tenant, e); err != nil {
		return fmt.Errorf("journal %s: %w", e.Type, err)
	}
	return nil
}

// subject is the journal subject of a claim version.
func subject(c domain.Claim) map[string]any {
	s := map[string]any{"artifact_id": c.ID, "claim_key": c.ClaimKey, "version": c.Version}
	if c.Kind.Versioned() {
		// A page's or document's version number counts every identity's
		// versions, held ones included; readers of the event see
		// promotions (R3).
		delete(s, "version")
	}
	if c.SimulationID != "" {
		// Every read of the journal (tail, feed, brief, notifications)
		// fences the event by it (D10).
		s["simulation_id"] = c.SimulationID
	}
	return s
}
