package memstore_test

import (
	"testing"

	"github.com/omlhub/oml/contexts/lineage/internal/memstore"
	"github.com/omlhub/oml/contexts/lineage/internal/repotest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	repotest.Run(t, func(*testing.T) repotest.Store { return repotest.Store{Repo: memstore.New(), Tx: memstore.Tx{}} })
}
