package cockroach

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/upgradetest"
)

// The schema upgrade, in the PostgreSQL-compatible mode: the migrator's
// statement-by-statement path (CockroachDB's DDL is not transactional,
// and the dialect says so), with its IF [NOT] EXISTS statements and the
// marks of versions left partly done, against PostgreSQL at SERIALIZABLE.
func TestUpgrade_PostgresCompatible(t *testing.T) {
	t.Parallel()
	dsn := serializableDSN(t)
	upgradetest.Run(t, upgradetest.Config{
		Dialect: postgresCompatible(lockTableFor(t, dsn)),
		Open:    conformance.Opener(DriverName, dsn),
	})
}
