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

// DropSubtreeIndex drops the subtree index BuildSubtreeIndex built; it
// reports whether there was one.
func (s *Service) DropSubtreeIndex(ctx context.Context, tenant, idPath string) (SubtreeIndex, error) {
	out := SubtreeIndex{Tenant: tenant, IDPath: idPath, Model: s.Embedder.Model()}
	dropped, err := s.Repo.DropSubtreeIndex(ctx, tenant, out.Model, idPath)
	out.Dropped = dropped
	return out, err
}
