package conformance

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// RequireEnv is the environment variable that lists, comma-separated, the
// databases whose conformance tests must run: for a name it lists, a
// missing database is a failure instead of a skip. CI sets it, e.g.
// PLENUM_REQUIRE=postgres,mysql.
const RequireEnv = "PLENUM_REQUIRE"

// Harness says where a dialect's conformance test finds its database: an
// environment variable holding a DSN, then an optional fallback (a server
// the test starts itself), else a skip that says how to enable the test,
// or a failure when RequireEnv lists the database.
type Harness struct {
	// Name is the database's name as RequireEnv lists it: "postgres",
	// "mysql", "cockroach", "oracle". Required.
	Name string

	// Env is the environment variable holding the DSN. Default: "PLENUM_",
	// the upper-cased Name, "_DSN" (PLENUM_POSTGRES_DSN,
	// PLENUM_MYSQL_DSN, PLENUM_COCKROACH_DSN, PLENUM_ORACLE_DSN).
	Env string

	// Fallback, when set, is asked for a DSN when Env is unset or empty:
	// the hook for a test that can start a database itself (a container, a
	// local server). It returns ok == false when it has none, and registers
	// the shutdown of whatever it started with t.Cleanup. Default: none.
	Fallback func(t testing.TB) (dsn string, ok bool)

	// Example is a DSN shown in the skip message. Default: a typical DSN
	// for the known names, none for others.
	Example string

	// Adds says what running the test would add to a run without it
	// ("the suite on a MariaDB server of its own"), for the skip's log and
	// the test summary. Default: a sentence for the known names, none for
	// others.
	Adds string
}

// examples are typical DSNs for the skip messages of the known databases.
var examples = map[string]string{
	"postgres":  "postgres://user:password@localhost:5432/plenum_test?sslmode=disable",
	"mysql":     "user:password@tcp(localhost:3306)/plenum_test",
	"cockroach": "postgresql://root@localhost:26257/plenum_test?sslmode=disable",
	"oracle":    "oracle://user:password@localhost:1521/FREEPDB1",
}

// adds says what the tests of the known names add when they run.
var adds = map[string]string{
	"postgres":  "the postgres dialect's suites on PostgreSQL (and the CLI's, sqlcheck's and migrationtest's tests on it)",
	"mysql":     "the mysql dialect's suites on the MySQL 8 or MariaDB server it names (and the CLI's and sqlcheck's tests on it)",
	"mysql8":    "the suite on a MySQL 8 server of its own, beside the server of PLENUM_MYSQL_DSN (which may be a MariaDB)",
	"mariadb":   "the suite on a MariaDB server of its own, beside the server of PLENUM_MYSQL_DSN (which may be a MySQL 8)",
	"cockroach": "the suite on CockroachDB (serializable transactions, a cluster's clock offset)",
	"oracle":    "the suite on an Oracle server: otherwise its statements are only parsed, never run",
}

// EnvName returns the environment variable the harness reads.
func (h Harness) EnvName() string {
	if h.Env != "" {
		return h.Env
	}
	var b strings.Builder
	b.WriteString("PLENUM_")
	for _, r := range strings.ToUpper(h.Name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteString("_DSN")
	return b.String()
}

// DSN returns the DSN of the database to test. When there is none it skips
// t with a message saying how to provide one, or fails t if RequireEnv
// lists h.Name; it then returns "" (when t's Skip and Fatal return at all).
func (h Harness) DSN(t testing.TB) string {
	t.Helper()
	if strings.TrimSpace(h.Name) == "" {
		t.Fatal("conformance: Harness.Name is empty")
		return ""
	}
	env := h.EnvName()
	// The "testing the database of", "would add" and "no ... database"
	// lines are what the test summary of internal/cmd/gotest reads: keep
	// their shape.
	if dsn := strings.TrimSpace(os.Getenv(env)); dsn != "" {
		t.Logf("conformance: %s: testing the database of %s", h.Name, env)
		return dsn
	}
	if h.Fallback != nil {
		if dsn, ok := h.Fallback(t); ok && strings.TrimSpace(dsn) != "" {
			t.Logf("conformance: %s: testing the database of its fallback", h.Name)
			return dsn
		}
	}
	example := h.Example
	if example == "" {
		example = examples[strings.ToLower(h.Name)]
	}
	add := h.Adds
	if add == "" {
		add = adds[strings.ToLower(h.Name)]
	}
	if add != "" {
		t.Logf("conformance: %s: would add %s", h.Name, add)
	}
	msg := fmt.Sprintf("conformance: no %s database: set %s to the DSN of a database where the test may create and drop tables", h.Name, env)
	if example != "" {
		msg += fmt.Sprintf(" (e.g. %s=%q)", env, example)
	}
	if Required(h.Name) {
		t.Fatalf("%s; it is required: %s=%q lists %s", msg, RequireEnv, os.Getenv(RequireEnv), h.Name)
		return ""
	}
	t.Skipf("%s; %s=%s turns this skip into a failure", msg, RequireEnv, h.Name)
	return ""
}

// DSN is Harness{Name: name}.DSN(t): the DSN from PLENUM_<NAME>_DSN, or a
// skip (a failure when PLENUM_REQUIRE lists name).
func DSN(t testing.TB, name string) string {
	t.Helper()
	return Harness{Name: name}.DSN(t)
}

// Required reports whether RequireEnv lists name (case-insensitive).
func Required(name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	for _, n := range strings.Split(os.Getenv(RequireEnv), ",") {
		if strings.EqualFold(strings.TrimSpace(n), name) {
			return true
		}
	}
	return false
}

// Opener returns a Config.Open that opens a new handle with
// sql.Open(driverName, dsn) on every call, pings it, and closes it when the
// calling test ends. The driver must be registered (import its package).
func Opener(driverName, dsn string) func(t testing.TB) *sql.DB {
	return func(t testing.TB) *sql.DB {
		t.Helper()
		db, err := sql.Open(driverName, dsn)
		if err != nil {
			t.Fatalf("conformance: sql.Open(%q): %v", driverName, err)
			return nil
		}
		t.Cleanup(func() { db.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			t.Fatalf("conformance: ping %s database: %v", driverName, err)
			return nil
		}
		return db
	}
}
