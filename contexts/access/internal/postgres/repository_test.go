package postgres_test

import (
	"testing"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/postgres"
	"github.com/omlhub/oml/contexts/access/internal/repotest"
	"github.com/omlhub/oml/platform/pgtest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	repotest.Run(t, func(t *testing.T) app.Repository { return postgres.New(pgtest.New(t)) })
}
