package containers

import (
	"database/sql"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/containers/internal/testdb"
	"github.com/plenumdb/plenum/internal/testkit/dsnparams"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/oracle"
	"github.com/plenumdb/plenum/postgres"
)

// requireName is the name PLENUM_REQUIRE lists to make these tests fail
// instead of skipping where no container starts.
const requireName = "docker"

// started returns the DSN of a server start runs in a container, or skips
// t (fails it, when PLENUM_REQUIRE lists docker) saying why there is none.
func started(t *testing.T, what string, start func(testing.TB) (string, bool)) string {
	t.Helper()
	// The two lines' shape is what the test summary of internal/cmd/gotest
	// reads.
	if dsn, ok := start(t); ok {
		t.Logf("conformance: %s: testing the database of a container", what)
		return dsn
	}
	_, reason := testdb.Docker()
	if reason == "" {
		reason = "the container did not start (see the log above)"
	}
	msg := "conformance: no " + what + " database: " + reason
	if conformance.Required(requireName) {
		t.Fatalf("%s; it is required: %s lists %s", msg, conformance.RequireEnv, requireName)
	}
	t.Skipf("%s; these tests need a Docker engine (%s=%s turns this skip into a failure)", msg, conformance.RequireEnv, requireName)
	return ""
}

// missingSchema opens handles on a PostgreSQL-protocol server whose
// search_path names only a schema that does not exist.
func missingSchema(driver, dsn string) func(t testing.TB) *sql.DB {
	return func(t testing.TB) *sql.DB {
		return conformance.Opener(driver, dsnparams.Postgres(t, dsn, map[string]string{"search_path": "plenum_no_such_schema"}))(t)
	}
}

func TestConformance_PostgresContainer(t *testing.T) {
	dsn := started(t, "postgres-container", testdb.Postgres)
	conformance.Run(t, conformance.Config{
		Dialect:       postgres.Dialect(),
		Open:          conformance.Opener(postgres.DriverName, dsn),
		Misconfigured: missingSchema(postgres.DriverName, dsn),
	})
}

func TestConformance_CockroachContainer(t *testing.T) {
	dsn := started(t, "cockroach-container", testdb.Cockroach)
	conformance.Run(t, conformance.Config{
		Dialect:       cockroach.Dialect(),
		Open:          conformance.Opener(cockroach.DriverName, dsn),
		Misconfigured: missingSchema(cockroach.DriverName, dsn),
	})
}

func TestConformance_MySQL8Container(t *testing.T) {
	runMySQL(t, started(t, "mysql8-container", testdb.MySQL))
}

func TestConformance_MariaDBContainer(t *testing.T) {
	runMySQL(t, started(t, "mariadb-container", testdb.MariaDB))
}

// TestConformance_OracleContainer runs the suite on Oracle Database Free
// (gvenzl/oracle-free), whose first start takes minutes. It has never run
// on this project's CI, which has no Docker engine.
func TestConformance_OracleContainer(t *testing.T) {
	dsn := started(t, "oracle-container", testdb.Oracle)
	conformance.Run(t, conformance.Config{
		Dialect: oracle.Dialect(),
		Open:    conformance.Opener(oracle.DriverName, dsn),
	})
}

func runMySQL(t *testing.T, dsn string) {
	t.Helper()
	full, err := mysql.DSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Without parseTime DATETIME columns would scan as []byte: Check
	// refuses it.
	bare, err := gomysql.ParseDSN(full)
	if err != nil {
		t.Fatal(err)
	}
	bare.ParseTime = false
	conformance.Run(t, conformance.Config{
		Dialect:       mysql.Dialect(),
		Open:          conformance.Opener(mysql.DriverName, full),
		Misconfigured: conformance.Opener(mysql.DriverName, bare.FormatDSN()),
	})
}
