package postgres_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/upgradetest"
	"github.com/plenumdb/plenum/postgres"
)

// The schema upgrade from version 1 with data, down and up again,
// concurrent migrators, and failures half way (which PostgreSQL's
// transactional DDL rolls back whole).
func TestUpgrade(t *testing.T) {
	t.Parallel()
	upgradetest.Run(t, upgradetest.Config{
		Dialect: postgres.Dialect(),
		Open:    conformance.Opener(postgres.DriverName, harness.DSN(t)),
	})
}
