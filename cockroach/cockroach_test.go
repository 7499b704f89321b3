package cockroach

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

func TestRegistered(t *testing.T) {
	t.Parallel()
	got, err := dialect.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if got != Dialect() || got.Name() != "cockroach" {
		t.Fatalf("Lookup(cockroach) = %v", got)
	}
	if _, ok := got.(dialect.TableProber); !ok {
		t.Fatal("the dialect does not implement dialect.TableProber")
	}
	if _, err := dialect.Lookup(postgres.Name); err != nil {
		t.Fatalf("importing cockroach does not register postgres too: %v", err)
	}
}

// Only what CockroachDB does differently differs from PostgreSQL.
func TestCapabilities_DifferOnlyWhereCockroachDBDoes(t *testing.T) {
	t.Parallel()
	want := postgres.Dialect().Capabilities()
	want.LockClause = " FOR UPDATE"
	want.TransactionalDDL = false
	want.MaxClockOffset = 500 * time.Millisecond
	want.MaxStatementBytes = 8 << 20
	want.RetryAttempts = 50
	want.RecursiveScan = false
	if got := Dialect().Capabilities(); got != want {
		t.Fatalf("Capabilities() = %+v, want %+v", got, want)
	}
	if got := postgresCompatible("t").Capabilities(); got != want {
		t.Fatalf("the PostgreSQL-compatible mode's Capabilities() = %+v, want %+v", got, want)
	}
}

// The statements are PostgreSQL's: the same placeholders, clock, claim and
// insert-or-ignore.
func TestStatements_ArePostgreSQLs(t *testing.T) {
	t.Parallel()
	pg, d := postgres.Dialect(), Dialect()
	for _, c := range []struct{ got, want string }{
		{d.Rebind("a = ? AND b = '?'"), pg.Rebind("a = ? AND b = '?'")},
		{d.Now(time.Second), pg.Now(time.Second)},
		{d.AddMicros("t"), pg.AddMicros("t")},
		{d.Param(dialect.JSON), pg.Param(dialect.JSON)},
		{d.Limit(3), pg.Limit(3)},
		{d.InsertIgnore("t", []string{"a"}, "?", 2, nil), pg.InsertIgnore("t", []string{"a"}, "?", 2, nil)},
		{d.Now(0), "statement_timestamp()"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	pg := func(code string) error {
		return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, Message: "restart transaction"})
	}
	for _, c := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{pg("40001"), dialect.Retryable},
		{pg("CR000"), dialect.Retryable},
		{pg("40P01"), dialect.Retryable},
		{pg("55P03"), dialect.Retryable},
		{pg("40003"), dialect.ConnectionLost}, // result is ambiguous
		{pg("08006"), dialect.ConnectionLost},
		{pg("57P01"), dialect.ConnectionLost},
		{pg("23505"), dialect.UniqueViolation},
		{pg("XXA00"), dialect.Other},
		{pg("57014"), dialect.Other},
		{driver.ErrBadConn, dialect.ConnectionLost},
		{context.Canceled, dialect.Other},
		{nil, dialect.Other},
	} {
		if got := Dialect().Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"CockroachDB CCL v23.2.4 (x86_64-pc-linux-gnu, built 2024/04/08)", 2302, true},
		{"CockroachDB CCL v24.3.5 (x86_64-pc-linux-gnu, built 2025/01/20, go1.22.8 X:nocoverageredesign)", 2403, true},
		{"CockroachDB OSS v22.2.19 (x86_64-unknown-linux-gnu)", 2202, true},
		{"CockroachDB CCL v23.2.0-rc.2 (aarch64-unknown-linux-gnu)", 2302, true},
		{"PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu", 0, false},
		{"", 0, false},
	} {
		if got, ok := parseVersion(c.in); got != c.want || ok != c.ok {
			t.Errorf("parseVersion(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestDDL_HashShardsUUIDKeysAndTimeIndexes(t *testing.T) {
	t.Parallel()
	up, down := migrations.Statements(Dialect(), migrations.All("plenum_")[0])
	all := strings.Join(up, ";\n")
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS plenum_items (\n  id uuid NOT NULL,",
		"  PRIMARY KEY (id) USING HASH\n)",
		// Partial indexes stay partial; those led by a time are hash-sharded.
		"CREATE INDEX IF NOT EXISTS plenum_items_claim ON plenum_items (queue, priority, available_at, id) WHERE state = 'available'",
		"CREATE INDEX IF NOT EXISTS plenum_items_lease ON plenum_items (lease_expires_at) USING HASH WHERE state = 'claimed'",
		"CREATE INDEX IF NOT EXISTS plenum_items_owner ON plenum_items (claimed_by) WHERE state = 'claimed'",
		"CREATE UNIQUE INDEX IF NOT EXISTS plenum_items_key ON plenum_items (queue, unique_key)",
		"CREATE INDEX IF NOT EXISTS plenum_processes_heartbeat ON plenum_processes (last_heartbeat_at) USING HASH",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("migration 1 lacks %q:\n%s", want, all)
		}
	}
	if n := strings.Count(all, "PRIMARY KEY (id) USING HASH"); n != 3 {
		t.Errorf("%d hash-sharded primary keys, want 3 (items, processes, barriers)", n)
	}
	if got := Dialect().CreateTable(migrations.MigrationsTable("plenum_")); strings.Contains(got[0], "USING HASH") {
		t.Errorf("the migrations table, keyed by a small integer, is hash-sharded: %s", got[0])
	}
	if strings.Join(down, ";") != strings.Join(func() []string {
		_, d := migrations.Statements(postgres.Dialect(), migrations.All("plenum_")[0])
		return d
	}(), ";") {
		t.Errorf("down statements differ from PostgreSQL's: %q", down)
	}
}

// The PostgreSQL-compatible mode renders exactly PostgreSQL's DDL.
func TestDDL_PostgresCompatibleModeIsPostgreSQLs(t *testing.T) {
	t.Parallel()
	m := migrations.All("plenum_")[0]
	got, _ := migrations.Statements(postgresCompatible("t"), m)
	want, _ := migrations.Statements(postgres.Dialect(), m)
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("compatible mode DDL\n%s\nwant\n%s", strings.Join(got, ";\n"), strings.Join(want, ";\n"))
	}
}

// Every index led by a time column is marked Sequential, so that the
// cockroach DDL hash-shards it; no other index is.
func TestSchema_TimeLedIndexesAreSequential(t *testing.T) {
	t.Parallel()
	types := map[string]dialect.ColumnType{}
	var indexes []migrations.Change
	for _, m := range migrations.All("plenum_") {
		for _, c := range m.Changes {
			if c.Table != nil {
				for _, col := range c.Table.Columns {
					types[c.Table.Name+"."+col.Name] = col.Type
				}
			}
			if c.Index != nil {
				indexes = append(indexes, c)
			}
		}
	}
	for _, c := range indexes {
		timeLed := types[c.IndexTable+"."+c.Index.Columns[0]] == dialect.Time
		if timeLed != c.Index.Sequential {
			t.Errorf("index %s: led by a time column: %v, Sequential: %v", c.Index.Name, timeLed, c.Index.Sequential)
		}
	}
}

func TestOpen_RefusesEmptyDSN(t *testing.T) {
	t.Parallel()
	if _, err := Open(""); err == nil || !strings.Contains(err.Error(), "empty DSN") {
		t.Fatalf("Open(\"\") = %v", err)
	}
	if _, err := Open("postgresql://root@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("Open(nothing listening) = %v", err)
	}
}

// TestServer_PostgreSQL checks, against PostgreSQL, what the dialect does
// on any server: Begin, Lock, and Check's refusal of PostgreSQL.
func TestServer_PostgreSQL(t *testing.T) {
	dsn := pgHarness.DSN(t)
	db := conformance.Opener(DriverName, dsn)(t)
	ctx := t.Context()

	t.Run("Check_RefusesPostgreSQL", func(t *testing.T) {
		err := Dialect().Check(ctx, db)
		if err == nil || !strings.Contains(err.Error(), "not CockroachDB") || !strings.Contains(err.Error(), "postgres dialect") {
			t.Fatalf("Check on PostgreSQL = %v, want a refusal pointing to the postgres dialect", err)
		}
		if err := Dialect().Check(ctx, nil); err == nil {
			t.Fatal("Check(nil) succeeded")
		}
	})

	t.Run("Begin_Serializable", func(t *testing.T) {
		for _, ro := range []bool{false, true} {
			tx, err := Dialect().Begin(ctx, db, dialect.TxOptions{ReadOnly: ro})
			if err != nil {
				t.Fatal(err)
			}
			var iso, readOnly string
			if err := tx.QueryRowContext(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')").Scan(&iso, &readOnly); err != nil {
				t.Fatal(err)
			}
			tx.Rollback()
			if iso != "serializable" || (readOnly == "on") != ro {
				t.Errorf("Begin(ReadOnly %v): %s, read only %s; want serializable", ro, iso, readOnly)
			}
		}
		if _, err := Dialect().Begin(ctx, nil, dialect.TxOptions{}); err == nil {
			t.Error("Begin(nil) succeeded")
		}
	})

	t.Run("Lock", func(t *testing.T) {
		testLock(t, postgresCompatible(lockTableFor(t, dsn)), db)
	})

	// The store refuses leases within four clock offsets.
	t.Run("MinLease_FourClockOffsets", func(t *testing.T) {
		d := postgresCompatible(lockTableFor(t, dsn))
		prefix := fmt.Sprintf("pm%d_", time.Now().UnixNano()%1e9)
		t.Cleanup(func() { _ = migrations.Drop(context.Background(), db, d, prefix) })
		s, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MinLease(); got != 4*MaxClockOffset {
			t.Fatalf("MinLease() = %v, want %v", got, 4*MaxClockOffset)
		}
	})
}

// testLock checks Lock on db: it excludes, releases, gives up when the
// context ends, leaves its table empty, and keeps the caller's connection
// out of its transaction.
func testLock(t *testing.T, d *crdbDialect, db *sql.DB) {
	ctx := t.Context()
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	name := fmt.Sprintf("m%d_migrate", time.Now().UnixNano())
	c1 := conn()
	unlock, err := d.Lock(ctx, c1, name)
	if err != nil {
		t.Fatal(err)
	}
	// The caller's connection is free: not inside the lock's transaction.
	var inTx bool
	if err := c1.QueryRowContext(ctx, "SELECT count(*) > 0 FROM "+d.lockTable).Scan(&inTx); err != nil || inTx {
		t.Fatalf("the caller's connection sees the lock's row (%v, %v): it runs inside the lock's transaction", inTx, err)
	}

	other, err := d.Lock(ctx, conn(), name+"-other")
	if err != nil {
		t.Fatalf("another name: %v", err)
	}
	if err := other(ctx); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := d.Lock(short, conn(), name); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held name with a deadline = %v, want context.DeadlineExceeded", err)
	}

	got := make(chan error, 1)
	var unlock2 func(context.Context) error
	go func() {
		var err error
		unlock2, err = d.Lock(ctx, conn(), name)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a second Lock of %s returned (%v) while the first holds it", name, err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiting Lock after unlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Lock did not get the lock within 10s of unlock")
	}
	if err := unlock2(ctx); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+d.lockTable).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%s has %d rows (%v) after every lock was released; want 0", d.lockTable, rows, err)
	}
}

// fakeDriver stands for a driver other than pgx.
type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return fakeConn{}, nil }

type fakeConn struct{}

func (fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake") }
func (fakeConn) Close() error                        { return nil }
func (fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("fake") }

func init() { sql.Register("plenum-fake-cockroach", fakeDriver{}) }

func TestLockAndCheck_RefuseOtherDrivers(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("plenum-fake-cockroach", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Dialect().Check(t.Context(), db); err == nil || !strings.Contains(err.Error(), "pgx") {
		t.Fatalf("Check on another driver = %v, want a refusal naming pgx", err)
	}
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := Dialect().Lock(t.Context(), c, "x"); err == nil || !strings.Contains(err.Error(), "pgx") {
		t.Fatalf("Lock on another driver's connection = %v, want a refusal naming pgx", err)
	}
	if _, err := Dialect().Lock(t.Context(), nil, "x"); err == nil {
		t.Fatal("Lock(nil) succeeded")
	}
}

// CockroachDB names an index by its table; the PostgreSQL-compatible mode
// drops it as PostgreSQL does.
func TestDDL_DropIndexNamesItsTable(t *testing.T) {
	t.Parallel()
	ix := dialect.Index{Name: "p_a", Columns: []string{"a"}, Sequential: true}
	if got := Dialect().DropIndex("p_t", ix); len(got) != 1 || got[0] != "DROP INDEX IF EXISTS p_t@p_a" {
		t.Errorf("DropIndex = %q", got)
	}
	if got := postgresCompatible("t").DropIndex("p_t", ix); len(got) != 1 || got[0] != "DROP INDEX IF EXISTS p_a" {
		t.Errorf("compatible DropIndex = %q", got)
	}
	name := dialect.Column{Name: "name", Type: dialect.String, Size: 255, Nullable: true}
	if got := Dialect().AddColumn("p_t", name); len(got) != 1 || got[0] != "ALTER TABLE p_t ADD COLUMN IF NOT EXISTS name varchar(255)" {
		t.Errorf("AddColumn = %q", got)
	}
}

// Version 2's time-led index is hash-sharded like version 1's, its down
// drops it by table@name, and the attempts table, keyed by two columns,
// is not hash-sharded.
func TestDDL_Version2(t *testing.T) {
	t.Parallel()
	up, down := migrations.Statements(Dialect(), migrations.All("plenum_")[1])
	all := strings.Join(up, ";\n") + ";\n" + strings.Join(down, ";\n")
	for _, want := range []string{
		"CREATE INDEX IF NOT EXISTS plenum_items_finished ON plenum_items (finished_at) USING HASH WHERE finished_at IS NOT NULL",
		"  PRIMARY KEY (item_id, n)\n)",
		"ALTER TABLE plenum_processes ADD COLUMN IF NOT EXISTS name varchar(255)",
		"DROP INDEX IF EXISTS plenum_items@plenum_items_finished",
		"ALTER TABLE plenum_processes DROP COLUMN IF EXISTS name",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("version 2 lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "(item_id, n) USING HASH") {
		t.Errorf("the attempts table's two-column key is hash-sharded:\n%s", all)
	}
}

// TestOpen_BoundsConnections checks that Open reads libpq's bounds from
// the DSN as the postgres dialect does (internal/pgbounds), refusing a
// value that is no number before it dials.
func TestOpen_BoundsConnections(t *testing.T) {
	_, err := Open("postgresql://root@127.0.0.1:1/defaultdb?keepalives_idle=soon")
	if err == nil || !strings.HasPrefix(err.Error(), "cockroach: open: keepalives_idle=") {
		t.Fatalf("keepalives_idle=soon: %v", err)
	}
}
