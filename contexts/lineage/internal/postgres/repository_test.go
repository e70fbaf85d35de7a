package postgres_test

import (
	"testing"

	"github.com/omlhub/oml/contexts/lineage/internal/postgres"
	"github.com/omlhub/oml/contexts/lineage/internal/repotest"
	"github.com/omlhub/oml/platform/pgtest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	repotest.Run(t, func(t *testing.T) repotest.Store {
		db := pgtest.New(t)
		return repotest.Store{Repo: postgres.New(db), Tx: db}
	})
}
