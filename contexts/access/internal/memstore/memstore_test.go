package memstore_test

import (
	"testing"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/contexts/access/internal/memstore"
	"github.com/omlhub/oml/contexts/access/internal/repotest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	repotest.Run(t, func(*testing.T) app.Repository { return memstore.New() })
}
