package app

import (
	"context"
	"fmt"
)

// ReindexOptions select what a reindex covers.
type ReindexOptions struct {
	// Tenant limits the run to one tenant; "" runs every tenant with a
	// serving tier.
	Tenant string
	// Language, when set, first becomes the tenants' full-text language
	// (a Postgres text search configuration such as english or simple).
	Language string
	// Batch is how many entries go to the embedder at once and are
	// written in one transaction (default 128).
	Batch int
	// Progress, when set, is told after every batch.
	Progress func(TenantReindex)
}

// ReindexReport is what a reindex did.
type ReindexReport struct {
	Model      string          `json:"model"`
	Dim        int             `json:"dimensions"`
	IndexBuilt bool            `json:"vector_index_built"`
	Tenants    []TenantReindex `json:"tenants"`
}

// TenantReindex counts one tenant's entries: seen, re-embedded with the
// configured model, and re-parsed in the tenant's language.
type TenantReindex struct {
	Tenant   string `json:"tenant_id"`
	Language string `json:"fts_language"`
	Entries  int    `json:"entries"`
	Embedded int    `json:"embedded"`
	Reparsed int    `json:"reparsed"`
}

// Reindex brings the serving tier in line with the configured embedder
// and each tenant's full-text language, while recall keeps serving: the
// model's HNSW and scope indexes are built first (concurrently), then entries are
// visited in id order in batches; a batch's embeddings are computed
// outside any transaction and written, with any re-parsed tsvectors, in
// one. Until an entry is re-embedded the vector leg, which searches the
// configured model's rows only, does not see it; the full-text leg sees
// every entry throughout. Running it again resumes where it stopped:
// entries already current are skipped.
func (s *Service) Reindex(ctx context.Context, o ReindexOptions) (ReindexReport, error) {
	if o.Batch <= 0 {
		o.Batch = 128
	}
	rep := ReindexReport{Model: s.Embedder.Model(), Dim: s.Embedder.Dim()}
	built, err := s.Repo.EnsureVectorIndex(ctx, rep.Model, rep.Dim)
	if err != nil {
		return rep, fmt.Errorf("vector index: %w", err)
	}
	rep.IndexBuilt = built
	tenants := []string{o.Tenant}
	if o.Tenant == "" {
		if tenants, err = s.Repo.Tenants(ctx); err != nil {
			return rep, err
		}
	}
	for _, tenant := range tenants {
		t, err := s.reindexTenant(ctx, tenant, o)
		rep.Tenants = append(rep.Tenants, t)
		if err != nil {
			return rep, fmt.Errorf("tenant %s: %w", tenant, err)
		}
	}
	return rep, nil
}

func (s *Service) reindexTenant(ctx context.Context, tenant string, o ReindexOptions) (TenantReindex, error) {
	t := TenantReindex{Tenant: tenant}
	if o.Language != "" {
		if err := s.Tx.InTx(ctx, func(ctx context.Context) error { return s.Repo.SetLanguage(ctx, tenant, o.Language) }); err != nil {
			return t, err
		}
	}
	var err error
	if t.Language, err = s.Repo.Language(ctx, tenant); err != nil {
		return t, err
	}
	model, dim := s.Embedder.Model(), s.Embedder.Dim()
	after := ""
	for {
		page, err := s.Repo.Page(ctx, tenant, after, o.Batch)
		if err != nil {
			return t, err
		}
		if len(page) == 0 {
			return t, s.reparseSearch(ctx, tenant, &t)
		}
		after = page[len(page)-1].ArtifactID
		var stale []Stored
		var texts []string
		for _, e := range page {
			if e.Model != model {
				stale = append(stale, e)
				texts = append(texts, e.Text)
			}
		}
		var vecs [][]float32
		if len(texts) > 0 {
			if vecs, err = s.Embedder.EmbedDocuments(ctx, texts); err != nil {
				return t, err
			}
			for _, v := range vecs {
				if len(v) != dim {
					return t, fmt.Errorf("embedder %s returned %d dimensions, configured %d: nothing written for this batch", model, len(v), dim)
				}
			}
		}
		reparsed := 0
		err = s.Tx.InTx(ctx, func(ctx context.Context) error {
			reparsed = 0
			for i, e := range stale {
				if err := s.Repo.SetEmbedding(ctx, tenant, e.ArtifactID, vecs[i], model); err != nil {
					return err
				}
			}
			for _, e := range page {
				if !e.TSVCurrent {
					if err := s.Repo.RebuildFullText(ctx, tenant, e.ArtifactID); err != nil {
						return err
					}
					reparsed++
				}
			}
			return nil
		})
		if err != nil {
			return t, err
		}
		t.Entries += len(page)
		t.Embedded += len(stale)
		t.Reparsed += reparsed
		if o.Progress != nil {
			o.Progress(t)
		}
	}
}

// reparseSearch re-parses the tenant's search rows (events, brain
// entries) in its language, a batch at a time, each in its own unit of
// work.
func (s *Service) reparseSearch(ctx context.Context, tenant string, t *TenantReindex) error {
	if s.SearchRepo == nil {
		return nil
	}
	for {
		var n int
		err := s.Tx.InTx(ctx, func(ctx context.Context) error {
			var err error
			n, err = s.SearchRepo.SearchReparse(ctx, tenant)
			return err
		})
		if err != nil {
			return fmt.Errorf("re-parse search rows: %w", err)
		}
		t.Reparsed += n
		if n == 0 {
			return nil
		}
	}
}
