package sqlcheck

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// suiteScale shrinks the suite's big counts: the statements are the same
// at any size once batches are normalised, and the parsers and the
// serializable stand-in are slow.
const suiteScale = 0.2

// record starts a Recorder in front of target, closed when t ends; at the
// end it also fails t if the Recorder could not read what a client sent.
func record(t *testing.T, target string, proto Protocol) *Recorder {
	t.Helper()
	r, err := Record(target, proto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		if err := r.Err(); err != nil {
			t.Errorf("the recorder could not read a client's messages: %v", err)
		}
	})
	return r
}

// pgSetup is the PostgreSQL server the cockroach dialect runs on here,
// through a Recorder.
type pgSetup struct {
	target string // the server's host:port
	rec    *Recorder
	schema string // of the run's own: every table lands there
	dsn    string // through the recorder, into schema, serializable
	direct *sql.DB
}

// cockroachVersion is what version() answers in the run's schema, so that
// the cockroach dialect's own Check runs every probe on PostgreSQL.
const cockroachVersion = "CockroachDB CCL v24.3.5 (x86_64-pc-linux-gnu, built 2025/01/20, go1.22.8) (a PostgreSQL stand-in)"

// newPGSetup finds the PostgreSQL server (PLENUM_POSTGRES_DSN; a failure
// when PLENUM_REQUIRE names postgres, a skip otherwise), creates a schema
// of the run's own with a version() function that says CockroachDB (found
// before pg_catalog's, which search_path puts last), and starts the
// Recorder. Sessions through the recorder are serializable by default, as
// CockroachDB's are, and see the schema first.
func newPGSetup(t *testing.T) *pgSetup {
	t.Helper()
	dsn := conformance.Harness{Name: "postgres"}.DSN(t)
	if dsn == "" {
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Port() == "" {
		t.Fatalf("PLENUM_POSTGRES_DSN must be a postgres:// URL with a host and port for the recorder to stand in front of: %q", dsn)
	}
	ctx := t.Context()
	direct, err := sql.Open(postgres.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	s := &pgSetup{direct: direct, schema: fmt.Sprintf("sqlcheck_%08x", rand.Uint32())}
	for _, stmt := range []string{
		"CREATE SCHEMA " + s.schema,
		"CREATE FUNCTION " + s.schema + ".version() RETURNS text LANGUAGE sql AS $$ SELECT '" + cockroachVersion + "'::text $$",
	} {
		if _, err := direct.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := direct.ExecContext(ctx, "DROP SCHEMA "+s.schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", s.schema, err)
		}
	})
	s.target = u.Host
	s.rec = record(t, u.Host, PostgreSQL)
	u.Host = s.rec.Addr()
	q := u.Query()
	q.Set("sslmode", "disable")
	q.Set("search_path", s.schema+",pg_catalog")
	q.Set("default_transaction_isolation", "serializable")
	u.RawQuery = q.Encode()
	s.dsn = u.String()
	return s
}

// withParam returns the setup's DSN with one more session parameter.
func (s *pgSetup) withParam(k, v string) string {
	u, _ := url.Parse(s.dsn)
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// through returns a DSN for the postgres dialect through another
// Recorder, rec: into the same schema, but with pg_catalog searched first
// (so that version() is PostgreSQL's), at the server's default isolation.
func (s *pgSetup) through(rec *Recorder) string {
	u, _ := url.Parse(s.dsn)
	u.Host = rec.Addr()
	q := u.Query()
	q.Set("search_path", s.schema)
	q.Del("default_transaction_isolation")
	u.RawQuery = q.Encode()
	return u.String()
}

// standIn is the cockroach dialect as it runs on PostgreSQL here: every
// statement, the isolation level, the lock, the retry classification and
// Check are CockroachDB's; the DDL is PostgreSQL's (PostgreSQL refuses
// USING HASH and DROP INDEX table@index; the cockroach DDL itself is
// checked from the generated files), and the retry budget is ten times the dialect's, as in the
// cockroach package's own stand-in: PostgreSQL aborts a serializable
// writer that CockroachDB would queue.
type standIn struct{ dialect.Dialect }

func newStandIn() standIn { return standIn{cockroach.Dialect()} }

func (s standIn) Capabilities() dialect.Capabilities {
	caps := s.Dialect.Capabilities()
	caps.RetryAttempts = 10 * cockroach.RetryAttempts
	return caps
}

func (s standIn) CreateTable(t dialect.Table) []string { return postgres.Dialect().CreateTable(t) }

func (s standIn) CreateIndex(table string, ix dialect.Index) []string {
	return postgres.Dialect().CreateIndex(table, ix)
}

func (s standIn) DropIndex(table string, ix dialect.Index) []string {
	return postgres.Dialect().DropIndex(table, ix)
}

func (s standIn) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return s.Dialect.(dialect.TableProber).TableExists(ctx, q, table)
}

// mysqlSetup is the MariaDB (or MySQL) server the mysql dialect runs on
// here, through a Recorder.
type mysqlSetup struct {
	rec *Recorder
	dsn string // through the recorder, with the dialect's settings
	cfg *gomysql.Config
}

func newMySQLSetup(t *testing.T) *mysqlSetup {
	t.Helper()
	dsn := conformance.Harness{Name: "mysql"}.DSN(t)
	if dsn == "" {
		return nil
	}
	full, err := mysql.DSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(full)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net != "tcp" || (cfg.TLSConfig != "" && cfg.TLSConfig != "false") {
		t.Fatalf("PLENUM_MYSQL_DSN must reach the server over tcp without TLS for the recorder to read it: net %q, tls %q", cfg.Net, cfg.TLSConfig)
	}
	s := &mysqlSetup{rec: record(t, cfg.Addr, MySQL)}
	cfg.Addr = s.rec.Addr()
	s.cfg = cfg
	// The recorder reads statement texts: with interpolateParams (which
	// mysql.DSN turns on) the driver would write the values into them. Said
	// in the DSN, so that mysql.DSN, in the CLI too, keeps it off.
	cfg.InterpolateParams = false
	s.dsn = cfg.FormatDSN()
	if strings.Contains(s.dsn[strings.LastIndexByte(s.dsn, '/'):], "?") {
		s.dsn += "&interpolateParams=false"
	} else {
		s.dsn += "?interpolateParams=false"
	}
	return s
}

// cliDir holds the plenum binary plenumCLI builds; TestMain removes it.
var cliDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// plenumCLI builds the plenum command once per test binary, from the
// parent module with its own dependencies, with the race detector so that
// the build reuses what the parent's race-enabled tests compiled.
var plenumCLI = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sqlcheck-cli")
	if err != nil {
		return "", err
	}
	cliDir = dir
	bin := filepath.Join(dir, "plenum")
	cmd := exec.Command("go", "build", "-race", "-o", bin, "./cmd/plenum")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/plenum: %v\n%s", err, out)
	}
	return bin, nil
})

// runCLI runs the plenum command with args and returns its output.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := plenumCLI()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("plenum %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
