package oracle_test

import (
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/upgradetest"
	"github.com/plenumdb/plenum/oracle"
)

// The schema upgrade from version 1 with data, down and up again,
// concurrent migrators, and failures before each statement of version 2's
// up and down: DDL commits on its own here, so the version shows as partly
// applied (or rolled back) and the next run completes it. It runs where
// PLENUM_ORACLE_DSN names a server; it has never run here.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	dsn := harness.DSN(t)
	upgradetest.Run(t, upgradetest.Config{
		Dialect: oracle.Dialect(),
		Open:    func(t testing.TB) *sql.DB { return conformance.Opener(oracle.DriverName, dsn)(t) },
	})
}
