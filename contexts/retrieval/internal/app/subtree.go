package app

import "context"

// BuildSubtreeIndex builds, unless one is there, an HNSW index of the
// tenant's entries under the subtree at idPath for the configured model,
// while recall keeps serving (docs/OPERATIONS.md, "Subtree indexes").
// Recall in a scope inside the subtree then walks it when
// domain.SubtreePlan says so.
func (s *Service) BuildSubtreeIndex(ctx context.Context, tenant, idPath string) (SubtreeIndex, error) {
	return s.Repo.EnsureSubtreeIndex(ctx, tenant, s.Embedder.Model(), s.Embedder.Dim(), idPath)
}

// DropSubtreeIndex drops the subtree index BuildSubtreeIndex built for
// the configured model; Dropped says there was one.
func (s *Service) DropSubtreeIndex(ctx context.Context, tenant, idPath string) (DroppedSubtreeIndex, error) {
	out := DroppedSubtreeIndex{Tenant: tenant, IDPath: idPath, Model: s.Embedder.Model()}
	var err error
	out.Name, out.Dropped, err = s.Repo.DropSubtreeIndex(ctx, tenant, out.Model, idPath)
	return out, err
}

// ListSubtreeIndexes lists the subtree indexes of a tenant ("" for every
// tenant's), whatever their model.
func (s *Service) ListSubtreeIndexes(ctx context.Context, tenant string) ([]ListedSubtreeIndex, error) {
	return s.Repo.ListSubtreeIndexes(ctx, tenant)
}
