package oracle_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/oracle"
)

// harness finds the Oracle server of the tests: PLENUM_ORACLE_DSN (a go-ora
// URL, oracle://user:password@host:1521/service, for a user with EXECUTE on
// DBMS_LOCK), else a skip that says how to enable it (a failure when
// PLENUM_REQUIRE lists oracle). The containers module (containers/) runs
// the suite on Oracle Database Free in a container, where a Docker engine
// answers.
var harness = conformance.Harness{Name: "oracle"}

// TestConformance runs the shared suite on Oracle. It has never run here:
// no Oracle server is reachable from this project's CI.
func TestConformance(t *testing.T) {
	dsn := harness.DSN(t)
	conformance.Run(t, conformance.Config{
		Dialect: oracle.Dialect(),
		Open:    conformance.Opener(oracle.DriverName, dsn),
	})
}
