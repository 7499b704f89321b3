package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
)

// The tests in this file run against the server of PLENUM_MYSQL_DSN (or
// skip), each under a random table prefix whose tables it drops.

// newPrefix returns a random table prefix and registers the drop of its
// Plenum tables (and of extra tables) at cleanup.
func newPrefix(t *testing.T, db *sql.DB, extra ...string) string {
	t.Helper()
	p := fmt.Sprintf("pm%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, mysql.Dialect(), p); err != nil {
			t.Errorf("drop tables of %q: %v", p, err)
		}
		for _, name := range extra {
			if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+p+name); err != nil {
				t.Errorf("drop %s: %v", p+name, err)
			}
		}
	})
	return p
}

// dsnWith returns the DSN of PLENUM_MYSQL_DSN as mysql.DSN completes it,
// changed by mod, bypassing DSN's refusals.
func dsnWith(t *testing.T, mod func(*gomysql.Config)) string {
	t.Helper()
	full, err := mysql.DSN(harnessMySQL.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(full)
	if err != nil {
		t.Fatal(err)
	}
	mod(cfg)
	return cfg.FormatDSN()
}

func TestCheck_AcceptsOpen(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	if err := mysql.Dialect().Check(ctx, db); err != nil {
		t.Fatalf("Check on a database opened with mysql.Open: %v", err)
	}
	var version, iso string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	p := newPrefix(t, db, "iso")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+p+"iso (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	tx, err := mysql.Dialect().Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The isolation of the running transaction is in no variable on either
	// server; InnoDB shows it once the transaction has touched a table
	// (reading INNODB_TRX needs the PROCESS privilege).
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+p+"iso (id) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	err = tx.QueryRowContext(ctx, "SELECT trx_isolation_level FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()").Scan(&iso)
	if err != nil {
		t.Logf("server %s; cannot read the transaction's isolation level: %v", version, err)
		return
	}
	if iso != "READ COMMITTED" {
		t.Fatalf("a transaction begun by the dialect runs at %q, want READ COMMITTED", iso)
	}
	t.Logf("server %s; a transaction begun by the dialect runs at %s", version, iso)
}

// Each DSN lacks one thing the dialect depends on, and Check names it.
func TestCheck_RefusesMisconfiguredConnections(t *testing.T) {
	t.Parallel()
	if harnessMySQL.DSN(t) == "" {
		return
	}
	for _, tc := range []struct {
		name string
		mod  func(*gomysql.Config)
		want string
	}{
		{"no database", func(c *gomysql.Config) { c.DBName = "" }, "no default database"},
		{"no parseTime", func(c *gomysql.Config) { c.ParseTime = false }, "parseTime=true"},
		{"loc America/New_York", func(c *gomysql.Config) { c.Loc = mustZone(t, "America/New_York") }, "loc=UTC"},
		// UTC in January: only the July probe catches it.
		{"loc Europe/London", func(c *gomysql.Config) { c.Loc = mustZone(t, "Europe/London") }, "loc=UTC"},
		{"clientFoundRows", func(c *gomysql.Config) { c.ClientFoundRows = true }, "clientFoundRows=true"},
		{"charset latin1", func(c *gomysql.Config) { _ = c.Apply(gomysql.Charset("latin1", "")) }, "character_set_client"},
		{"autocommit off", func(c *gomysql.Config) { c.Params["autocommit"] = "0" }, "autocommit"},
		{"not strict", func(c *gomysql.Config) { c.Params["sql_mode"] = "'NO_ENGINE_SUBSTITUTION'" }, "STRICT_TRANS_TABLES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, err := sql.Open(mysql.DriverName, dsnWith(t, tc.mod))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = mysql.Dialect().Check(t.Context(), db)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error naming %q", err, tc.want)
			}
			t.Logf("Check: %v", err)
		})
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone data for %s: %v", name, err)
	}
	return loc
}

// A user without the CREATE TEMPORARY TABLES privilege is told which one
// to grant. The test creates a throwaway account when it may.
func TestCheck_NamesTheMissingPrivilege(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("plenum_probe_%08x", rand.Uint32())
	pass := fmt.Sprintf("pw%016x", rand.Uint64())
	if _, err := db.ExecContext(ctx, "CREATE USER '"+user+"'@'%' IDENTIFIED BY '"+pass+"'"); err != nil {
		t.Skipf("cannot create a test account: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP USER '" + user + "'@'%'") })
	if _, err := db.ExecContext(ctx, "GRANT SELECT, INSERT, UPDATE, DELETE ON `"+schema+"`.* TO '"+user+"'@'%'"); err != nil {
		t.Skipf("cannot grant to the test account: %v", err)
	}
	dsn := dsnWith(t, func(c *gomysql.Config) { c.User, c.Passwd = user, pass })
	limited, err := sql.Open(mysql.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer limited.Close()
	err = mysql.Dialect().Check(ctx, limited)
	if err == nil || !strings.Contains(err.Error(), "CREATE TEMPORARY TABLES") {
		t.Fatalf("Check as a user without CREATE TEMPORARY TABLES = %v, want an error naming the privilege", err)
	}
	t.Logf("Check: %v", err)
	if _, err := db.ExecContext(ctx, "GRANT CREATE TEMPORARY TABLES ON `"+schema+"`.* TO '"+user+"'@'%'"); err != nil {
		t.Fatal(err)
	}
	// A session keeps the database privileges it started with: connect anew.
	limited.Close()
	if limited, err = sql.Open(mysql.DriverName, dsn); err != nil {
		t.Fatal(err)
	}
	defer limited.Close()
	if err := mysql.Dialect().Check(ctx, limited); err != nil {
		t.Fatalf("Check after GRANT CREATE TEMPORARY TABLES: %v", err)
	}
}

// Classify sees the server's own errors: a duplicate key, a lock wait
// timeout (which leaves the transaction open), a deadlock and a killed
// connection.
func TestClassify_RealServerErrors(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db, "side")
	side := p + "side"
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+side+" (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO "+side+" (id, v) VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}

	t.Run("DuplicateKey", func(t *testing.T) {
		_, err := db.ExecContext(ctx, "INSERT INTO "+side+" (id, v) VALUES (1, 0)")
		if got := d.Classify(err); got != dialect.UniqueViolation {
			t.Fatalf("Classify(%v) = %s, want unique-violation", err, got)
		}
	})

	t.Run("LockWaitTimeout", func(t *testing.T) {
		holder, err := d.Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback()
		if _, err := holder.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
		waiter, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		defer waiter.Rollback()
		if _, err := waiter.ExecContext(ctx, "UPDATE "+side+" SET v = v + 10 WHERE id = 2"); err != nil {
			t.Fatal(err)
		}
		_, err = waiter.ExecContext(ctx, "UPDATE "+side+" SET v = v + 10 WHERE id = 1")
		if got := d.Classify(err); got != dialect.Retryable {
			t.Fatalf("Classify(%v) = %s, want retryable", err, got)
		}
		// Only the statement was rolled back: the transaction still holds
		// its first update, and its lock. Hence the rollback before a retry.
		var v int
		if err := waiter.QueryRowContext(ctx, "SELECT v FROM "+side+" WHERE id = 2").Scan(&v); err != nil || v != 10 {
			t.Fatalf("after 1205 the transaction sees v = %d (%v), want its own 10: it is still open", v, err)
		}
		t.Logf("1205 (%v) left the transaction open with its earlier write", err)
	})

	t.Run("Deadlock", func(t *testing.T) {
		a, err := d.Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Rollback()
		b, err := d.Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Rollback()
		if _, err := a.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 2"); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		wg.Go(func() { _, errs[0] = a.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 2") })
		time.Sleep(200 * time.Millisecond) // a waits on b's row
		_, errs[1] = b.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 1")
		if errs[1] != nil {
			_ = b.Rollback() // the victim's locks go, a goes on
		}
		wg.Wait()
		victims := 0
		for _, err := range errs {
			if err == nil {
				continue
			}
			var me *gomysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1213 || d.Classify(err) != dialect.Retryable {
				t.Fatalf("deadlock error %v classified %s, want 1213 retryable", err, d.Classify(err))
			}
			victims++
		}
		if victims != 1 {
			t.Fatalf("%d deadlock victims (%v), want 1", victims, errs)
		}
	})

	t.Run("KilledConnection", func(t *testing.T) {
		tx, err := d.Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var id int64
		if err := tx.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		_, err = tx.ExecContext(ctx, "UPDATE "+side+" SET v = v + 1 WHERE id = 1")
		if got := d.Classify(err); got != dialect.ConnectionLost {
			t.Fatalf("statement on a killed connection: Classify(%v) = %s, want connection-lost", err, got)
		}
		err = tx.Commit()
		if got := d.Classify(err); got != dialect.ConnectionLost {
			t.Fatalf("commit on a killed connection: Classify(%v) = %s, want connection-lost", err, got)
		}
	})
}

// Values go in and come back as they were: UUIDs as 16 bytes, times with
// their microseconds in UTC, the clock moving between statements of one
// transaction, JSON byte for byte, and text keys compared byte for byte.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db, "rt")
	table := p + "rt"
	for _, s := range d.CreateTable(dialect.Table{Name: table, Columns: []dialect.Column{
		{Name: "id", Type: dialect.UUID},
		{Name: "k", Type: dialect.String, Size: 8},
		{Name: "doc", Type: dialect.JSON, Nullable: true},
		{Name: "at", Type: dialect.Time},
		{Name: "flag", Type: dialect.Bool},
	}, PrimaryKey: []string{"id"}}) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range d.CreateIndex(table, dialect.Index{Name: table + "_k", Columns: []string{"k"}, Unique: true}) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	id := uuid.Must(uuid.NewV7())
	doc := `{"z": 1,"a":[1, 2],  "é":"\u00e9 🦫"}`
	at := time.Date(2038, 1, 19, 3, 14, 8, 123456000, time.UTC) // past TIMESTAMP's range
	ins := "INSERT INTO " + table + " (id, k, doc, at, flag) VALUES (?, ?, ?, ?, ?)"
	if _, err := db.ExecContext(ctx, ins, d.UUID(id), "k", d.JSON([]byte(doc)), at, d.Bool(true)); err != nil {
		t.Fatal(err)
	}
	var (
		gotID   uuid.UUID
		gotDoc  []byte
		gotAt   any
		gotFlag bool
		gotK    string
	)
	if err := db.QueryRowContext(ctx, "SELECT id, k, doc, at, flag FROM "+table+" WHERE id = ?", d.UUID(id)).Scan(&gotID, &gotK, &gotDoc, &gotAt, &gotFlag); err != nil {
		t.Fatal(err)
	}
	gotTime, err := d.ScanTime(gotAt)
	if gotID != id || gotK != "k" || string(gotDoc) != doc || err != nil || !gotTime.Equal(at) || gotTime.Location() != time.UTC || !gotFlag {
		t.Fatalf("round trip: id %s, k %q, doc %s, at %v (%v), flag %v", gotID, gotK, gotDoc, gotTime, err, gotFlag)
	}

	// Keys compare byte for byte: trailing spaces and case count.
	for i, k := range []string{"k ", "K", "k\t"} {
		if _, err := db.ExecContext(ctx, ins, d.UUID(uuid.Must(uuid.NewV7())), k, nil, at, d.Bool(false)); err != nil {
			t.Errorf("key %d %q collides with %q: %v", i, k, "k", err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE k = ?", "k").Scan(&n); err != nil || n != 1 {
		t.Errorf("k = 'k' matches %d rows (%v), want 1", n, err)
	}

	// The clock: UTC, microseconds, moving within a transaction, and the
	// bound interval of AddMicros.
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var a, b, later any
	if err := tx.QueryRowContext(ctx, "SELECT "+d.Now(0)).Scan(&a); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := tx.QueryRowContext(ctx, "SELECT "+d.Now(0)+", "+d.AddMicros(d.Now(time.Hour)), int64(1500)).Scan(&b, &later); err != nil {
		t.Fatal(err)
	}
	ta, _ := d.ScanTime(a)
	tb, _ := d.ScanTime(b)
	tl, _ := d.ScanTime(later)
	if !tb.After(ta) || time.Since(ta) > time.Minute || time.Since(ta) < -time.Minute {
		t.Errorf("clock read %v then %v in one transaction (Go says %v): want it to move, in UTC", ta, tb, time.Now().UTC())
	}
	if diff := tl.Sub(tb); diff < time.Hour || diff > time.Hour+time.Second {
		t.Errorf("Now(1h) + 1500 µs - Now() = %v", diff)
	}
}

// InsertIgnore's rows affected is the number of rows inserted, with the
// default DSN (no clientFoundRows), duplicates within the statement
// included; bad data is an error, never stored coerced.
func TestInsertIgnore_RowsAffectedAreRowsInserted(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db, "ins")
	table := p + "ins"
	stmts := d.CreateTable(dialect.Table{Name: table, Columns: []dialect.Column{
		{Name: "id", Type: dialect.UUID}, {Name: "q", Type: dialect.String, Size: 4}, {Name: "k", Type: dialect.String, Size: 4, Nullable: true}, {Name: "n", Type: dialect.Int},
	}, PrimaryKey: []string{"id"}})
	stmts = append(stmts, d.CreateIndex(table, dialect.Index{Name: table + "_k", Columns: []string{"q", "k"}, Unique: true})...)
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(rows ...[3]any) (int64, error) {
		var args []any
		for _, r := range rows {
			args = append(args, d.UUID(uuid.Must(uuid.NewV7())), r[0], r[1], r[2])
		}
		res, err := db.ExecContext(ctx, d.InsertIgnore(table, []string{"id", "q", "k", "n"}, "?, ?, ?, ?", len(rows), []string{"q", "k"}), args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	if n, err := insert([3]any{"q", "a", 1}, [3]any{"q", "b", 1}); n != 2 || err != nil {
		t.Fatalf("two new rows: %d affected, %v", n, err)
	}
	// One old key, one key twice, two rows without a key.
	if n, err := insert([3]any{"q", "a", 2}, [3]any{"q", "c", 2}, [3]any{"q", "c", 3}, [3]any{"q", nil, 2}, [3]any{"q", nil, 3}); n != 3 || err != nil {
		t.Fatalf("three new rows among five: %d affected, %v", n, err)
	}
	var sum int
	if err := db.QueryRowContext(ctx, "SELECT SUM(n) FROM "+table).Scan(&sum); err != nil || sum != 1+1+2+2+3 {
		t.Fatalf("sum of n = %d (%v): an existing row was changed", sum, err)
	}
	// Too long for the column, an out-of-range number: errors, nothing stored.
	for _, bad := range [][3]any{{"q", "toolongvalue-" + strings.Repeat("x", 20), 1}, {"q", "d", int64(1) << 40}} {
		if n, err := insert(bad); err == nil {
			t.Errorf("bad row %v: %d affected, no error; want the server to refuse it", bad, n)
		}
	}
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&rows); err != nil || rows != 5 {
		t.Errorf("%d rows (%v), want 5", rows, err)
	}
}

// A unique partial index (none in Plenum's schema yet) is rendered with a
// generated column, and is exactly as strict as the partial index.
func TestCreateIndex_UniquePartialIsExact(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db, "up")
	table := p + "up"
	stmts := d.CreateTable(dialect.Table{Name: table, Columns: []dialect.Column{
		{Name: "id", Type: dialect.Int}, {Name: "owner", Type: dialect.Int}, {Name: "state", Type: dialect.String, Size: 16}, {Name: "parent", Type: dialect.Int, Nullable: true},
	}, PrimaryKey: []string{"id"}})
	ix := dialect.Index{Name: table + "_open", Columns: []string{"owner"}, Unique: true,
		Where: []dialect.Cond{{Column: "state", Value: "open"}, {Column: "parent", NotNull: true}}}
	stmts = append(stmts, d.CreateIndex(table, ix)...)
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for _, tc := range []struct {
		id, owner int
		state     string
		parent    any
		dup       bool
	}{
		{1, 1, "open", 1, false},
		{2, 1, "open", 2, true}, // both meet the condition, same owner
		{3, 1, "closed", 1, false},
		{4, 1, "open", nil, false},
		{5, 1, "closed", nil, false},
		{6, 2, "open", 1, false},
		{7, 1, "open ", 3, false}, // byte for byte: not 'open'
	} {
		_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, owner, state, parent) VALUES (?, ?, ?, ?)", tc.id, tc.owner, tc.state, tc.parent)
		if tc.dup != (d.Classify(err) == dialect.UniqueViolation) || (!tc.dup && err != nil) {
			t.Errorf("row %d: %v, want duplicate %v", tc.id, err, tc.dup)
		}
	}
	exists, err := d.(dialect.IndexProber).IndexExists(ctx, db, table, ix.Name)
	if err != nil || !exists {
		t.Errorf("IndexExists(%s) = %v, %v", ix.Name, exists, err)
	}
}

// GET_LOCK excludes a second holder, honours the context while waiting,
// and is released by unlock.
func TestLock(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	name := fmt.Sprintf("pm%08x_migrate", rand.Uint32())
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()

	unlock, err := d.Lock(ctx, c1, name)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := d.Lock(short, c2, name); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held = %v, want the context's deadline", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("second Lock returned %v after its deadline", waited)
	}

	c3, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	got := make(chan error, 1)
	var unlock3 func(context.Context) error
	go func() {
		var err error
		unlock3, err = d.Lock(ctx, c3, name)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Lock returned (%v) while another session holds the lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Lock still waits after the holder unlocked")
	}
	if err := unlock(ctx); err == nil {
		t.Error("a second unlock succeeded; want an error saying the session does not hold it")
	}
	if err := unlock3(ctx); err != nil {
		t.Fatal(err)
	}
}

// A migration that failed half way is completed by running Apply again:
// CREATE TABLE IF NOT EXISTS runs again harmlessly, and an index that
// exists is skipped (MySQL 8 has no CREATE INDEX IF NOT EXISTS).
func TestApply_CompletesHalfAppliedMigration(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()

	t.Run("TablesAndSomeIndexesByHand", func(t *testing.T) {
		p := newPrefix(t, db)
		up, _ := migrations.Statements(d, migrations.All(p)[0])
		for _, s := range up[:3] { // items, its claim index, its key index
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		// The same statement again fails: that is what the prober avoids.
		if _, err := db.ExecContext(ctx, up[1]); err == nil {
			t.Fatalf("%s ran twice without an error", up[1])
		}
		applied, err := migrations.Apply(ctx, db, d, p)
		if err != nil || len(applied) != migrations.LatestVersion {
			t.Fatalf("Apply over a half-applied migration = %v, %v", applied, err)
		}
		checkSchema(t, db, p)
	})

	t.Run("ApplyFailedAfterSomeStatements", func(t *testing.T) {
		p := newPrefix(t, db)
		broken := brokenIndex{wrapped: wrapped{d}, name: p + "items_owner"}
		_, err := migrations.Apply(ctx, db, broken, p)
		if err == nil || !strings.Contains(err.Error(), "partly applied: run Apply") {
			t.Fatalf("Apply with a failing statement = %v", err)
		}
		if v, err := migrations.Version(ctx, db, d, p); err != nil || v != 0 {
			t.Fatalf("version after the failure = %d, %v; want 0", v, err)
		}
		applied, err := migrations.Apply(ctx, db, d, p)
		if err != nil || len(applied) != migrations.LatestVersion {
			t.Fatalf("second Apply = %v, %v", applied, err)
		}
		checkSchema(t, db, p)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || len(applied) != 0 {
			t.Fatalf("third Apply = %v, %v", applied, err)
		}
	})
}

// brokenIndex renders one index wrongly, so that a migration fails after
// the statements before it ran (and committed: DDL is not transactional).
type brokenIndex struct {
	wrapped
	name string
}

func (b brokenIndex) CreateIndex(table string, ix dialect.Index) []string {
	if ix.Name == b.name {
		return []string{"CREATE INDEX " + ix.Name + " ON " + table + " (no_such_column)"}
	}
	return b.wrapped.CreateIndex(table, ix)
}

// checkSchema checks that every table and index of the schema exists under
// prefix p and that every version is recorded once.
func checkSchema(t *testing.T, db *sql.DB, p string) {
	t.Helper()
	ctx := t.Context()
	d := mysql.Dialect()
	var changes []migrations.Change
	for _, m := range migrations.All(p) {
		changes = append(changes, m.Changes...)
	}
	// An index a later version drops must be gone.
	indexes := map[string]bool{}
	var order []migrations.Change
	for _, c := range changes {
		if c.Table != nil {
			if ok, err := d.(dialect.TableProber).TableExists(ctx, db, c.Table.Name); err != nil || !ok {
				t.Errorf("table %s: exists %v, %v", c.Table.Name, ok, err)
			}
		}
		switch {
		case c.Index != nil:
			indexes[c.Index.Name] = true
			order = append(order, c)
		case c.DropIndex != nil:
			indexes[c.DropIndex.Name] = false
		}
	}
	for _, c := range order {
		want := indexes[c.Index.Name]
		if ok, err := d.(dialect.IndexProber).IndexExists(ctx, db, c.IndexTable, c.Index.Name); err != nil || ok != want {
			t.Errorf("index %s: exists %v, %v; want %v", c.Index.Name, ok, err, want)
		}
	}
	var n, sum int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(version) FROM "+migrations.NamesFor(p).Migrations).Scan(&n, &sum); err != nil ||
		n != migrations.LatestVersion || sum != migrations.LatestVersion*(migrations.LatestVersion+1)/2 {
		t.Errorf("%d version rows adding up to %d, want each version once (%v)", n, sum, err)
	}
}

// The generated migration files, one set for both servers, run as they
// are: up, then down.
func TestGeneratedFilesRun(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db)
	files, err := migrations.Render(d, p, migrations.FormatPlain)
	if err != nil {
		t.Fatal(err)
	}
	run := func(content string) {
		t.Helper()
		for _, s := range strings.Split(content, ";\n") {
			var lines []string
			for _, l := range strings.Split(s, "\n") {
				if !strings.HasPrefix(l, "--") {
					lines = append(lines, l)
				}
			}
			if stmt := strings.TrimSpace(strings.Join(lines, "\n")); stmt != "" {
				if _, err := db.ExecContext(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".up.sql") {
			run(string(f.Content))
		}
	}
	if v, err := migrations.Version(ctx, db, d, p); err != nil || v != migrations.LatestVersion {
		t.Fatalf("version after the up files = %d, %v", v, err)
	}
	checkSchema(t, db, p)
	// Apply finds nothing to do.
	if applied, err := migrations.Apply(ctx, db, d, p); err != nil || len(applied) != 0 {
		t.Fatalf("Apply after the files = %v, %v", applied, err)
	}
	for _, f := range slices.Backward(files) {
		if strings.HasSuffix(f.Name, ".down.sql") {
			run(string(f.Content))
		}
	}
	if ok, err := d.(dialect.TableProber).TableExists(ctx, db, p+"items"); err != nil || ok {
		t.Fatalf("items table after the down files: exists %v, %v", ok, err)
	}
}

// Payloads and results larger in total than max_allowed_packet go through:
// inserts are split by MaxStatementBytes, and the driver, which DSN tells to
// ask the server for its limit, sends large values apart.
func TestLargePayloads_PastMaxAllowedPacket(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	var packet int64
	if err := db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&packet); err != nil {
		t.Fatal(err)
	}
	s, err := core.Open(ctx, db, mysql.Dialect(), core.Options{Prefix: newPrefix(t, db), Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	big := func(c byte) []byte { return []byte(`"` + strings.Repeat(string(c), 900<<10) + `"`) }
	n := int(packet/(900<<10)) + 4
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "big", Payload: big('a' + byte(i%26))}
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatalf("Enqueue of %d payloads of 900 KiB (max_allowed_packet %d): %v", n, packet, err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "big", Owner: owner, Limit: n, Lease: time.Minute})
	if err != nil || len(cs) != n {
		t.Fatalf("Claim = %d, %v; want %d", len(cs), err, n)
	}
	comps := make([]core.Completion, n)
	for i, c := range cs {
		if len(c.Payload) != 900<<10+2 {
			t.Fatalf("payload of %d bytes came back with %d", 900<<10+2, len(c.Payload))
		}
		comps[i] = core.Completion{Claim: c, Result: big('z' - byte(i%26))}
	}
	if lost, err := s.CompleteMany(ctx, comps); err != nil || len(lost) != 0 {
		t.Fatalf("CompleteMany of %d results of 900 KiB = lost %d, %v", n, len(lost), err)
	}
	it, err := s.Get(ctx, cs[n-1].ID)
	if err != nil || string(it.Result) != string(comps[n-1].Result) {
		t.Fatalf("Get: result of %d bytes, %v", len(it.Result), err)
	}
}
