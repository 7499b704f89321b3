package sqlite_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

var d = sqlite.Dialect()

func openDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func exec(t *testing.T, q dialect.Querier, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := q.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	got, err := dialect.Lookup("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if got != d || got.Name() != "sqlite" {
		t.Fatalf("Lookup(sqlite) = %v", got)
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	want := dialect.Capabilities{
		SingleWriter:     true,
		ReturningUpdate:  true,
		RecursiveScan:    true,
		TransactionalDDL: true,
		MaxBindParams:    32766,
		ClockResolution:  time.Millisecond,
	}
	if got := d.Capabilities(); got != want {
		t.Fatalf("Capabilities() = %+v, want %+v", got, want)
	}
}

func TestRendering(t *testing.T) {
	t.Parallel()
	const now = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) * 1000"
	for _, c := range []struct{ got, want string }{
		{d.Rebind("SELECT ? FROM t WHERE a = '?'"), "SELECT ? FROM t WHERE a = '?'"},
		{d.Param(dialect.JSON), "?"},
		{d.Now(0), "(" + now + ")"},
		{d.Now(1500 * time.Millisecond), "(" + now + " + 1500000)"},
		{d.Now(-2 * time.Second), "(" + now + " - 2000000)"},
		{d.AddMicros("created_at"), "(created_at + ?)"},
		{d.Limit(10), " LIMIT 10"},
		{d.Limit(-1), " LIMIT 0"},
		{d.InsertIgnore("t", []string{"a", "b"}, "?, ?", 2, []string{"a"}),
			"INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON CONFLICT DO NOTHING"},
		{strings.Join(d.DropTable("t"), ";"), "DROP TABLE IF EXISTS t"},
		{strings.Join(d.CreateIndex("t", dialect.Index{Name: "t_a", Columns: []string{"a", "b"}}), ";"),
			"CREATE INDEX IF NOT EXISTS t_a ON t (a, b)"},
		{strings.Join(d.CreateIndex("t", dialect.Index{Name: "t_u", Columns: []string{"a"}, Unique: true,
			Where: []dialect.Cond{{Column: "state", Value: "it's"}, {Column: "b", NotNull: true}}}), ";"),
			"CREATE UNIQUE INDEX IF NOT EXISTS t_u ON t (a) WHERE state = 'it''s' AND b IS NOT NULL"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}

	table := dialect.Table{
		Name: "t",
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "s", Type: dialect.String, Size: 10},
			{Name: "x", Type: dialect.Text, Nullable: true},
			{Name: "j", Type: dialect.JSON, Nullable: true},
			{Name: "i", Type: dialect.Int},
			{Name: "bi", Type: dialect.BigInt},
			{Name: "b", Type: dialect.Bool},
			{Name: "at", Type: dialect.Time},
		},
		PrimaryKey: []string{"id"},
	}
	want := "CREATE TABLE IF NOT EXISTS t (\n  id BLOB NOT NULL,\n  s TEXT NOT NULL,\n  x TEXT,\n  j TEXT,\n" +
		"  i INTEGER NOT NULL,\n  bi INTEGER NOT NULL,\n  b INTEGER NOT NULL,\n  at INTEGER NOT NULL,\n  PRIMARY KEY (id)\n)"
	if got := strings.Join(d.CreateTable(table), ";"); got != want {
		t.Errorf("CreateTable:\n%s\nwant\n%s", got, want)
	}

	// Everything rendered runs, twice.
	db, _ := openDB(t)
	for range 2 {
		exec(t, db, d.CreateTable(table)...)
		exec(t, db, d.CreateIndex("t", dialect.Index{Name: "t_u", Columns: []string{"s"}, Unique: true,
			Where: []dialect.Cond{{Column: "x", Value: "it's"}, {Column: "j", NotNull: true}}})...)
	}
	if _, err := db.Exec("SELECT "+d.Now(time.Hour)+", "+d.AddMicros(d.Now(-time.Hour)), 5); err != nil {
		t.Fatal(err)
	}
	exec(t, db, d.DropTable("t")...)
	exec(t, db, d.DropTable("t")...)
}

func TestValues(t *testing.T) {
	t.Parallel()
	u := uuid.MustParse("0190d6a5-3c2b-7def-8a01-23456789abcd")
	b, ok := d.UUID(u).([]byte)
	if !ok || len(b) != 16 || uuid.UUID(b) != u {
		t.Fatalf("UUID = %#v", d.UUID(u))
	}
	if v := d.JSON(nil); v != nil {
		t.Fatalf("JSON(nil) = %#v", v)
	}
	if v := d.JSON([]byte{}); v != "" {
		t.Fatalf("JSON(empty) = %#v", v)
	}
	if v := d.JSON([]byte(`{"a":1}`)); v != `{"a":1}` {
		t.Fatalf("JSON = %#v", v)
	}
	if d.Bool(true) != int64(1) || d.Bool(false) != int64(0) {
		t.Fatalf("Bool = %#v %#v", d.Bool(true), d.Bool(false))
	}
}

func TestDSNAndOpen(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", ":memory:", "file:x.db"} {
		if _, err := sqlite.Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	dsn, err := sqlite.DSN("/tmp/a b/c.db")
	if err != nil {
		t.Fatal(err)
	}
	want := "file:///tmp/a%20b/c.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	if dsn != want {
		t.Fatalf("DSN = %s\nwant  %s", dsn, want)
	}

	// Characters that mean something in a URI land in the file's name.
	dir := t.TempDir()
	path := filepath.Join(dir, "we?ird #name%20&x=1.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created under its own name: %v", err)
	}
	if err := d.Check(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	var sync int
	if err := db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 1 {
		t.Fatalf("synchronous = %d, %v; want 1 (NORMAL)", sync, err)
	}

	if _, err := sqlite.Open(filepath.Join(dir, "missing", "dir", "x.db")); err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	if err := d.Check(ctx, db); err != nil {
		t.Fatalf("Check on an Open database: %v", err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, dsn, want string }{
		{"no busy_timeout", "file:" + filepath.Join(dir, "a.db") + "?_pragma=journal_mode(WAL)", "_pragma=busy_timeout(10000)"},
		{"in-memory", "file::memory:?_pragma=busy_timeout(10000)", "file path"},
		{"temporary", "", "file path"},
		{"not wal", "file:" + filepath.Join(dir, "b.db") + "?_pragma=busy_timeout(10000)", "_pragma=journal_mode(WAL)"},
	} {
		db, err := sql.Open("sqlite", c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		err = d.Check(ctx, db)
		db.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check = %v, want an error naming %q", c.name, err, c.want)
		}
	}

	closed, _ := openDB(t)
	closed.Close()
	if err := d.Check(ctx, closed); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Check on a closed database = %v", err)
	}
	if err := d.Check(ctx, nil); err == nil {
		t.Error("Check(nil) succeeded")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := openDB(t)
	exec(t, db, "CREATE TABLE u (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE)", "INSERT INTO u VALUES (1, 'a')")

	_, err := db.Exec("INSERT INTO u VALUES (2, 'a')")
	if got := d.Classify(err); got != dialect.UniqueViolation {
		t.Errorf("unique index: Classify(%v) = %v", err, got)
	}
	_, err = db.Exec("INSERT INTO u VALUES (1, 'b')")
	if got := d.Classify(fmt.Errorf("wrapped: %w", err)); got != dialect.UniqueViolation {
		t.Errorf("primary key: Classify(%v) = %v", err, got)
	}
	_, err = db.Exec("INSERT INTO u VALUES (3, NULL)")
	if got := d.Classify(err); err == nil || got != dialect.Other {
		t.Errorf("not null: Classify(%v) = %v", err, got)
	}

	// A real SQLITE_BUSY: a second *sql.DB (another queue, as another process
	// would be) with a short busy_timeout, while the first holds the writer.
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(50)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = d.Begin(ctx, other, dialect.TxOptions{})
	if got := d.Classify(err); got != dialect.Retryable {
		t.Errorf("busy: Classify(%v) = %v", err, got)
	}
	_, err = other.Exec("INSERT INTO u VALUES (9, 'z')")
	if got := d.Classify(err); got != dialect.Retryable {
		t.Errorf("busy autocommit: Classify(%v) = %v", err, got)
	}

	for _, c := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{nil, dialect.Other},
		{errors.New("boom"), dialect.Other},
		{context.Canceled, dialect.Other},
		{driver.ErrBadConn, dialect.ConnectionLost},
		{fmt.Errorf("x: %w", sqlite.ErrWriterQueueTimeout), dialect.Retryable},
	} {
		if got := d.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	exec(t, db, "CREATE TABLE jobs (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL, state TEXT NOT NULL, token TEXT)")
	// Ten rows in a scrambled order; the claim order is priority, then id.
	for _, id := range []int{7, 3, 9, 1, 4, 10, 2, 8, 6, 5} {
		if _, err := db.Exec("INSERT INTO jobs VALUES (?, ?, 'available', NULL)", id, id%3); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, db, "UPDATE jobs SET state = 'done' WHERE id = 3")
	order := []int{6, 9, 1, 4, 7, 10, 2, 5, 8} // priority 0, 1, 2; id 3 is not available

	claim := func(limit int, token string) ([]int, error) {
		tx, err := d.Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		rows, err := d.Claim(ctx, tx, dialect.ClaimSpec{
			Table:      "jobs",
			Key:        "id",
			Filter:     "state = ?",
			FilterArgs: []any{"available"},
			OrderBy:    "priority, id",
			Limit:      limit,
			Set:        "state = ?, token = ?",
			SetArgs:    []any{"claimed", token},
			Returning:  []string{"id", "state", "token"},
		})
		if err != nil {
			return nil, err
		}
		var ids []int
		for rows.Next() {
			var id int
			var state, tok string
			if err := rows.Scan(&id, &state, &tok); err != nil {
				return nil, err
			}
			if state != "claimed" || tok != token {
				return nil, fmt.Errorf("returned row %d has state %q token %q", id, state, tok)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		slices.Sort(ids)
		return ids, tx.Commit()
	}

	sorted := func(s []int) []int { s = slices.Clone(s); slices.Sort(s); return s }
	got, err := claim(4, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if want := sorted(order[:4]); !slices.Equal(got, want) {
		t.Fatalf("first claim took %v, want %v", got, want)
	}
	got, err = claim(4, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if want := sorted(order[4:8]); !slices.Equal(got, want) {
		t.Fatalf("second claim took %v, want %v", got, want)
	}
	got, err = claim(4, "t3")
	if err != nil {
		t.Fatal(err)
	}
	if want := order[8:]; !slices.Equal(got, want) {
		t.Fatalf("third claim took %v, want %v", got, want)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM jobs WHERE state = 'claimed'").Scan(&n); err != nil || n != 9 {
		t.Fatalf("claimed rows = %d, %v", n, err)
	}

	if _, err := claim(0, "t4"); err == nil {
		t.Fatal("Claim with limit 0 succeeded")
	}
	if _, err := d.Claim(ctx, db, dialect.ClaimSpec{Table: "jobs", Key: "id", Filter: "1", OrderBy: "id", Limit: 1, Set: "state = state"}); err == nil {
		t.Fatal("Claim without returning columns succeeded")
	}
}

func TestInsertIgnore(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	exec(t, db,
		"CREATE TABLE kids (id INTEGER PRIMARY KEY, parent TEXT NOT NULL, k TEXT)",
		"CREATE UNIQUE INDEX kids_k ON kids (parent, k)",
		"INSERT INTO kids VALUES (1, 'p', 'a'), (2, 'p', 'b')")
	q := d.InsertIgnore("kids", []string{"id", "parent", "k"}, "?, ?, ?", 6, []string{"parent", "k"})
	res, err := db.Exec(q,
		10, "p", "a", // collides on the unique index
		11, "p", "c",
		2, "p", "z", // collides on the primary key
		12, "p", "d",
		13, "p", "c", // collides with a row of this very statement
		14, "p", nil) // NULL never collides
	if err != nil {
		t.Fatal(err)
	}
	n, err := res.RowsAffected()
	if err != nil || n != 3 {
		t.Fatalf("RowsAffected = %d, %v; want 3", n, err)
	}
	var total int
	if err := db.QueryRow("SELECT COUNT(*) FROM kids").Scan(&total); err != nil || total != 5 {
		t.Fatalf("rows = %d, %v; want 5", total, err)
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var first, second, shifted int64
	if err := tx.QueryRowContext(ctx, "SELECT "+d.Now(0)).Scan(&first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := tx.QueryRowContext(ctx, "SELECT "+d.Now(0)+", "+d.Now(time.Hour)).Scan(&second, &shifted); err != nil {
		t.Fatal(err)
	}
	if second-first < 4000 {
		t.Fatalf("clock moved %d µs in 5 ms within one transaction", second-first)
	}
	if shifted-second != time.Hour.Microseconds() {
		t.Fatalf("Now(1h) - Now(0) = %d µs in one statement", shifted-second)
	}
	if first%1000 != 0 {
		t.Fatalf("Now(0) = %d is not whole milliseconds", first)
	}
	if skew := time.Since(time.UnixMicro(first)); skew > time.Minute || skew < -time.Minute {
		t.Fatalf("database clock is %v away from the host's", skew)
	}
	var plus int64
	if err := tx.QueryRowContext(ctx, "SELECT "+d.AddMicros("?"), first, 250).Scan(&plus); err != nil || plus != first+250 {
		t.Fatalf("AddMicros: %d, %v", plus, err)
	}

	// The conversion is exact for every millisecond: truncating instead of
	// rounding loses one on about one value in two hundred.
	expr := strings.Replace(d.Now(0), "julianday('now')", "julianday(?)", 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		want := time.UnixMilli(rng.Int64N(4102444800000)).UTC()
		var got int64
		if err := tx.QueryRowContext(ctx, "SELECT "+expr, want.Format("2006-01-02 15:04:05.000")).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want.UnixMicro() {
			t.Fatalf("clock expression gives %d for %s, want %d", got, want, want.UnixMicro())
		}
	}
}

func TestScanTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	exec(t, db, "CREATE TABLE times (at INTEGER NOT NULL)")
	want := time.Date(2025, 3, 4, 5, 6, 7, 891234000, time.UTC)
	if _, err := db.Exec("INSERT INTO times VALUES (?)", want.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	exec(t, db, "INSERT INTO times VALUES "+d.Now(0))
	rows, err := db.QueryContext(ctx, "SELECT at FROM times ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	for rows.Next() {
		var src any
		if err := rows.Scan(&src); err != nil {
			t.Fatal(err)
		}
		tm, err := d.ScanTime(src)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tm)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Equal(want) || got[0].Location() != time.UTC {
		t.Fatalf("round trip = %v, want %v", got, want)
	}
	if since := time.Since(got[1]); since > time.Minute || since < -time.Minute {
		t.Fatalf("Now read back as %v", got[1])
	}

	us := want.UnixMicro()
	for _, src := range []any{us, float64(us), []byte(fmt.Sprint(us)), fmt.Sprint(us), " " + fmt.Sprint(us) + " ",
		fmt.Sprintf("%d.0", us), want.In(time.FixedZone("x", 3600))} {
		tm, err := d.ScanTime(src)
		if err != nil || !tm.Equal(want) || tm.Location() != time.UTC {
			t.Errorf("ScanTime(%#v) = %v, %v", src, tm, err)
		}
	}
	for _, src := range []any{nil, "garbage", []byte("12x"), math.NaN(), math.Inf(1), 1e300, struct{}{}, true} {
		if tm, err := d.ScanTime(src); err == nil {
			t.Errorf("ScanTime(%#v) = %v, want an error", src, tm)
		}
	}
}

func TestWriterQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	exec(t, db, "CREATE TABLE counter (n INTEGER NOT NULL)", "INSERT INTO counter VALUES (0)")
	const workers, each = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				tx, err := d.Begin(ctx, db, dialect.TxOptions{})
				if err != nil {
					errs <- err
					return
				}
				// Read, then write: only safe because the transaction
				// holds the write lock from its BEGIN.
				var n int
				if err := tx.QueryRowContext(ctx, "SELECT n FROM counter").Scan(&n); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if _, err := tx.ExecContext(ctx, "UPDATE counter SET n = ?", n+1); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.QueryRow("SELECT n FROM counter").Scan(&n); err != nil || n != workers*each {
		t.Fatalf("counter = %d, %v; want %d", n, err, workers*each)
	}
}

func TestBeginContext(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	exec(t, db, "CREATE TABLE t (n INTEGER)")

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ro := range []bool{false, true} {
		if tx, err := d.Begin(cancelled, db, dialect.TxOptions{ReadOnly: ro}); !errors.Is(err, context.Canceled) || tx != nil {
			t.Errorf("Begin(cancelled, ReadOnly=%v) = %v, %v", ro, tx, err)
		}
	}

	// While one writer holds the queue, another waits only as long as its
	// context allows; a reader does not wait at all.
	ctx := context.Background()
	w, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, w, "INSERT INTO t VALUES (1)")
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := d.Begin(short, db, dialect.TxOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Begin behind a writer = %v, want the context's deadline", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("Begin waited %v past its deadline", waited)
	}
	r, err := d.Begin(ctx, db, dialect.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := r.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("reader saw %d rows, %v; want 0 (uncommitted)", n, err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}

	// Rollback and Commit both hand the queue on.
	if err := w.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := w.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("second Rollback = %v", err)
	}
	for range 3 {
		next, cancel3 := context.WithTimeout(ctx, time.Second)
		tx, err := d.Begin(next, db, dialect.TxOptions{})
		cancel3()
		if err != nil {
			t.Fatalf("Begin after the writer ended: %v", err)
		}
		exec(t, tx, "INSERT INTO t VALUES (2)")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := d.Begin(ctx, nil, dialect.TxOptions{}); err == nil {
		t.Fatal("Begin(nil db) succeeded")
	}
	closed, _ := openDB(t)
	closed.Close()
	if _, err := d.Begin(ctx, closed, dialect.TxOptions{}); err == nil {
		t.Fatal("Begin on a closed database succeeded")
	}
	// A failed Begin gave its turn back.
	closedAgain, cancel4 := context.WithTimeout(ctx, time.Second)
	defer cancel4()
	if _, err := d.Begin(closedAgain, closed, dialect.TxOptions{}); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a failed Begin kept the writer queue")
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	unlock, err := d.Lock(ctx, conn, "plenum_migrate")
	if err != nil {
		t.Fatal(err)
	}
	if err := unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Several handles opening the same brand-new file at once all succeed: the
// switch to WAL can answer SQLITE_BUSY without waiting, and Open waits it
// out.
func TestOpen_ConcurrentOnNewFile(t *testing.T) {
	t.Parallel()
	for round := 0; round < 20; round++ {
		path := filepath.Join(t.TempDir(), "new.db")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := sqlite.Open(path)
				if err != nil {
					errs <- err
					return
				}
				db.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
