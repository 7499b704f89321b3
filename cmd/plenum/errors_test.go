package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// clockless is SQLite with a broken clock: it ignores the offset tests
// move time with, so the clock guarantee must show as broken.
type clockless struct{ dialect.Dialect }

func (clockless) Name() string               { return "sqlite-clockless" }
func (c clockless) Now(time.Duration) string { return c.Dialect.Now(0) }

func init() {
	r, err := dialect.Registered(sqlite.Name)
	if err != nil {
		panic(err)
	}
	r.Dialect = clockless{sqlite.Dialect()}
	// Named only: a DSN's form names sqlite, never this planted copy.
	r.DSN.Schemes, r.DSN.Recognize = nil, nil
	dialect.Register(r)
}

// wantStderr runs a command line and checks its exit status and that
// stderr holds every one of want and none of unwanted.
func wantStderr(t *testing.T, args []string, code int, want []string, unwanted ...string) {
	t.Helper()
	got, _, errOut := cli(t, args...)
	if got != code {
		t.Errorf("%q: exit %d, want %d; stderr:\n%s", args, got, code, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("%q: stderr lacks %q:\n%s", args, w, errOut)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(errOut, u) {
			t.Errorf("%q: stderr has %q:\n%s", args, u, errOut)
		}
	}
}

// Each mistake in --dialect or --dsn is named by its flag, and the DSN
// errors say what is wrong with the DSN.
func TestCLI_ErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"inspect", "bench", "conformance"} {
		wantStderr(t, []string{cmd, "--dialect", "db2", "--dsn", "x"}, cmdline.ExitUsage, []string{"--dialect", `unknown dialect "db2"`, "known: "})
	}
	wantStderr(t, []string{"conformance", "--dsn", "x"}, cmdline.ExitUsage, []string{"give --dialect"})
	wantStderr(t, []string{"inspect", "--dialect", "postgres"}, cmdline.ExitUsage, []string{"missing --dsn", "postgres://"})
	wantStderr(t, []string{"inspect", "--dialect", "mysql", "--dsn", "garbage"}, cmdline.ExitFailure, []string{"--dsn", "invalid DSN"})
	wantStderr(t, []string{"inspect", "--dialect", "postgres", "--dsn", "postgres://u:secret@127.0.0.1:5432/db?sslmode=bogus"}, cmdline.ExitFailure,
		[]string{"--dsn", "the DSN is not valid"}, "cannot reach", "secret")
	wantStderr(t, []string{"conformance", "--dialect", "sqlite", "--dsn", ":memory:"}, cmdline.ExitFailure, []string{"--dsn", "in-memory"})

	// A port nobody listens on: unreachable, and said so.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	wantStderr(t, []string{"inspect", "--dialect", "postgres", "--dsn", "postgres://root@" + closed + "/test?sslmode=disable"}, cmdline.ExitFailure,
		[]string{"--dsn", "cannot reach the server", "connection refused"})
	wantStderr(t, []string{"inspect", "--dialect", "mysql", "--dsn", "root@tcp(" + closed + ")/test"}, cmdline.ExitFailure,
		[]string{"--dsn", "cannot reach the server", "connection refused"})
}

// inspect without a database names both ways to give one.
func TestCLI_InspectWithoutFlagsNamesBothWays(t *testing.T) {
	t.Parallel()
	wantStderr(t, []string{"inspect"}, cmdline.ExitUsage, []string{"--db FILE", "--dialect NAME --dsn DSN", "sqlite"})
	wantStderr(t, []string{"inspect", "--dsn", "x"}, cmdline.ExitUsage, []string{"--dsn: its form names no one dialect", "give --dialect"})
}

// A PostgreSQL server that refuses the role is not "unreachable".
func TestCLI_PostgresRefusedCredentialsAreNotUnreachable(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	u.User = url.User(fmt.Sprintf("plenum_no_role_%08x", rand.Uint32()))
	wantStderr(t, []string{"inspect", "--dialect", "postgres", "--dsn", u.String()}, cmdline.ExitFailure,
		[]string{"--dsn", "refused the credentials", "SQLSTATE 28"}, "cannot reach")
	u = pgURL(t)
	u.Path = fmt.Sprintf("/plenum_no_db_%08x", rand.Uint32())
	wantStderr(t, []string{"inspect", "--dialect", "postgres", "--dsn", u.String()}, cmdline.ExitFailure,
		[]string{"--dsn", "no such database", "3D000"}, "cannot reach")
}

// A server setting the dialect refuses is the fault of --dsn, named before
// the command does anything.
func TestCLI_RefusedSettingNamesDSN(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	q := u.Query()
	q.Set("search_path", "plenum_no_such_schema")
	u.RawQuery = q.Encode()
	for _, cmd := range []string{"inspect", "bench"} {
		wantStderr(t, []string{cmd, "--dialect", "postgres", "--dsn", u.String()}, cmdline.ExitFailure,
			[]string{"--dsn: the postgres database cannot be used as it is", "search_path"})
	}
	// In a subprocess: were the refusal missing, the suite would run and
	// end the process.
	code, out := runCLI(t, "conformance", "--dialect", "postgres", "--dsn", u.String(), "--run", "Claim_Order")
	if code != cmdline.ExitFailure || !strings.Contains(out, "--dsn: the postgres database cannot be used as it is") || strings.Contains(out, "Guarantees on") {
		t.Errorf("conformance on a refused setting: exit %d, output:\n%s", code, out)
	}
}

// The postgres dialect pointed at a MySQL server says so, in words.
func TestCLI_PostgresDialectAtAMySQLPort(t *testing.T) {
	t.Parallel()
	addr := mysqlAddr(t)
	wantStderr(t, []string{"inspect", "--dialect", "postgres", "--dsn", "postgres://root@" + addr + "/test?sslmode=disable"}, cmdline.ExitFailure,
		[]string{"--dsn", "does not speak PostgreSQL's protocol"}, "%!w", "cannot reach")
}

// The mysql dialect pointed at a PostgreSQL server waits for a greeting
// that never comes, and says what that likely means.
func TestCLI_MySQLDialectAtAPostgresPort(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the driver's greeting timeout")
	}
	u := pgURL(t)
	wantStderr(t, []string{"inspect", "--dialect", "mysql", "--dsn", "root@tcp(" + u.Host + ")/test"}, cmdline.ExitFailure,
		[]string{"--dsn", "no MySQL greeting", "another database's"})
	u.User = url.User("plenum_nobody")
	my, err := gomysql.ParseDSN(mysqlDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	my.User, my.Passwd = fmt.Sprintf("plenum_nobody_%06x", rand.Uint32()&0xffffff), "x"
	wantStderr(t, []string{"inspect", "--dialect", "mysql", "--dsn", my.FormatDSN()}, cmdline.ExitFailure,
		[]string{"--dsn", "refused the credentials"}, "cannot reach")
}

func pgURL(t *testing.T) *url.URL {
	t.Helper()
	dsn := conformance.Harness{Name: "postgres"}.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("PLENUM_POSTGRES_DSN is not a URL (%v); this test needs one", err)
	}
	return u
}

func mysqlDSN(t *testing.T) string {
	t.Helper()
	return conformance.Harness{Name: "mysql"}.DSN(t)
}

func mysqlAddr(t *testing.T) string {
	t.Helper()
	cfg, err := gomysql.ParseDSN(mysqlDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net != "tcp" {
		t.Skipf("PLENUM_MYSQL_DSN is not a TCP address")
	}
	return cfg.Addr
}

// runCLI runs a command line in a subprocess of the test binary (the
// conformance command ends its process) and returns its exit status and
// combined output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PLENUM_CLI_ARGS="+string(raw))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out)
	}
	return 0, string(out)
}

// The conformance command ends with a table of the guarantees held and
// broken, with the server's version, and exits 1 when one is broken.
func TestConformance_TableOfHeldAndBroken(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs part of the conformance suite in subprocesses")
	}
	run := "Enqueue_IdempotencyKey|Clock_DatabaseTimeGatesVisibility"
	code, out := runCLI(t, "conformance", "--dialect", "sqlite-clockless", "--dsn", filepath.Join(t.TempDir(), "c.db"), "--run", run)
	if code != cmdline.ExitFailure {
		t.Errorf("a broken clock: exit %d, want %d", code, cmdline.ExitFailure)
	}
	for _, want := range []string{"Guarantees on sqlite-clockless (SQLite 3.", "Enqueue_IdempotencyKey             held",
		"Clock_DatabaseTimeGatesVisibility  BROKEN", "2 guarantees on SQLite 3.", "1 held, 1 broken, 0 could not run, 0 skipped", "--- FAIL: Conformance/Clock_DatabaseTimeGatesVisibility"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out = runCLI(t, "conformance", "--dialect", "sqlite", "--dsn", filepath.Join(t.TempDir(), "c.db"), "--run", run)
	if code != cmdline.ExitOK {
		t.Errorf("sqlite: exit %d, want 0", code)
	}
	if !strings.Contains(out, "2 held, 0 broken, 0 could not run, 0 skipped") || !strings.Contains(out, "Clock_DatabaseTimeGatesVisibility  held") {
		t.Errorf("sqlite: output lacks the table of two held guarantees:\n%s", out)
	}
}

// The suite leaves the tables it did not create alone, even those under
// Plenum's default prefix.
func TestConformance_LeavesExistingTablesAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs part of the conformance suite in a subprocess")
	}
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	for _, q := range []string{
		"CREATE TABLE plenum_items (id INTEGER PRIMARY KEY, note TEXT)",
		"INSERT INTO plenum_items (note) VALUES ('mine')",
		"CREATE TABLE orders (id INTEGER PRIMARY KEY)",
		"INSERT INTO orders (id) VALUES (7)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := schemaOf(t, db)
	if code, out := runCLI(t, "conformance", "--dialect", "sqlite", "--dsn", path, "--run", "Claim_Order|BadInput"); code != cmdline.ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if after := schemaOf(t, db); after != before {
		t.Errorf("the suite changed the database's tables:\nbefore %s\nafter  %s", before, after)
	}
	var note string
	var n int
	if err := db.QueryRowContext(ctx, "SELECT (SELECT note FROM plenum_items), (SELECT COUNT(*) FROM orders)").Scan(&note, &n); err != nil || note != "mine" || n != 1 {
		t.Errorf("existing rows: %q, %d orders (%v), want mine and 1", note, n, err)
	}
}

func schemaOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s: %s; ", typ, name, q)
	}
	return b.String()
}

// Where the suite cannot create tables it refuses before running
// anything, and says what it needs. The role made here can log in but not
// create tables (PostgreSQL 15 and later grant no CREATE on public).
func TestConformance_RefusesWhereItCannotCreateTables(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	admin, err := postgres.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the role's drop below
	ctx := t.Context()
	var num int
	if err := admin.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		t.Fatal(err)
	}
	if num < 150000 {
		t.Skipf("PostgreSQL %d grants CREATE on public to everyone", num)
	}
	role := fmt.Sprintf("plenum_ro_%08x", rand.Uint32())
	if _, err := admin.ExecContext(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Skipf("cannot create a role to test with: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP ROLE IF EXISTS "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	u.User = url.User(role)
	// In a subprocess: were the refusal missing, the suite would run and
	// end the process.
	code, out := runCLI(t, "conformance", "--dialect", "postgres", "--dsn", u.String(), "--run", "Claim_Order")
	if code != cmdline.ExitFailure {
		t.Errorf("exit %d, want %d", code, cmdline.ExitFailure)
	}
	for _, want := range []string{"--dsn: the suite cannot create tables in this postgres database (PostgreSQL ", "permission denied", "never touches existing tables"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Guarantees on") {
		t.Errorf("the suite ran on a database where it cannot create tables:\n%s", out)
	}
}

// "mariadb" names the mysql dialect on every command, and a DSN in other
// tools' form (user@host:port/db) is refused with the form the driver
// wants, before any connection.
func TestDialect_MariaDBIsMySQLAndBareAddressExplained(t *testing.T) {
	t.Parallel()
	if r, err := cmdline.LookupRegistration("mariadb"); err != nil || r.Dialect.Name() != "mysql" {
		t.Errorf(`cmdline.LookupRegistration("mariadb") = %v, %v; want the mysql dialect`, r.Dialect, err)
	}
	for _, cmd := range [][]string{{"inspect"}, {"migrate", "status"}, {"conformance"}} {
		args := append(cmd, "--dialect", "mariadb", "--dsn", "root:secret@127.0.0.1:3306/test")
		code, _, errOut := cli(t, args...)
		want := "write user:password@tcp(127.0.0.1:3306)/database"
		if code != cmdline.ExitFailure || !strings.Contains(errOut, want) || strings.Contains(errOut, "secret") {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q, without the password", args, code, errOut, cmdline.ExitFailure, want)
		}
	}
}
