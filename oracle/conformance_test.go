package oracle_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testdb"
	"github.com/plenumdb/plenum/oracle"
)

// harness finds an Oracle server: PLENUM_ORACLE_DSN (a go-ora URL,
// oracle://user:password@host:1521/service, for a user with EXECUTE on
// DBMS_LOCK), else Oracle Database Free in a container where a Docker
// engine answers. Without either the test skips and says how to enable it;
// PLENUM_REQUIRE=oracle makes that a failure.
var harness = conformance.Harness{Name: "oracle", Fallback: testdb.Oracle}

// TestConformance runs the shared suite on Oracle. It has never run here:
// no Oracle server is reachable from this project's CI.
func TestConformance(t *testing.T) {
	dsn := harness.DSN(t)
	if dsn == "" {
		return // skipped
	}
	conformance.Run(t, conformance.Config{
		Dialect: oracle.Dialect(),
		Open:    conformance.Opener(oracle.DriverName, dsn),
	})
}
