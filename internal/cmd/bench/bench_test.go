package bench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// PLENUM_BENCH_DIALECT and PLENUM_BENCH_DSN name a database of another
// dialect (a server, usually) for the tiny bench test and the benchmark to
// run on as well; without them those runs skip. The DSN defaults to the
// one the dialect's conformance test reads (PLENUM_POSTGRES_DSN, ...), so
// that PLENUM_BENCH_DIALECT=postgres is enough where that is set.
const (
	envBenchDialect = "PLENUM_BENCH_DIALECT"
	envBenchDSN     = "PLENUM_BENCH_DSN"
)

// envBenchTarget returns the dialect and DSN the environment names, and
// skips tb when it names none.
func envBenchTarget(tb testing.TB) (name, dsn string) {
	tb.Helper()
	name, dsn = os.Getenv(envBenchDialect), os.Getenv(envBenchDSN)
	if name == "" {
		if dsn != "" {
			tb.Fatalf("%s is set but %s is not: name the DSN's dialect", envBenchDSN, envBenchDialect)
		}
		tb.Skipf("set %s (and %s, or the dialect's conformance DSN) to run on another database", envBenchDialect, envBenchDSN)
	}
	if dsn == "" {
		env := conformance.Harness{Name: name}.EnvName()
		if dsn = os.Getenv(env); dsn == "" {
			tb.Fatalf("%s=%s names no database: set %s or %s", envBenchDialect, name, envBenchDSN, env)
		}
	}
	return name, dsn
}

// checkTinyRun checks what a tiny bench reported: every row measured on
// both sides and printed. runBench itself returns an error unless the work
// was really done on both sides.
func checkTinyRun(t *testing.T, rep benchReport, out string) {
	t.Helper()
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Name)
	}
	want := []string{"enqueue", "claim+complete", "fan-in arrivals", "runtime"}
	if _, ok := minimalNamed(rep.Dialect); ok {
		want = append(want, minimalRow)
		if !strings.Contains(out, "CREATE TABLE "+minimalTable(rep.Prefixes[1])) {
			t.Errorf("output lacks the minimal table's DDL:\n%s", out)
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("rows %+v, want %v", rep.Rows, want)
	}
	for _, r := range rep.Rows {
		if r.Plenum <= 0 || r.Baseline <= 0 || r.Ratio() <= 0 {
			t.Errorf("row %+v has a rate of zero", r)
		}
		if !strings.Contains(out, r.Name) {
			t.Errorf("output lacks row %q:\n%s", r.Name, out)
		}
	}
	if !strings.Contains(out, "Plenum bench on "+rep.Dialect) {
		t.Errorf("header does not name the dialect %s:\n%s", rep.Dialect, out)
	}
	if !strings.Contains(out, "bare SQL "+cmdline.Commas(rep.BaseRetries)+".") {
		t.Errorf("output lacks the baseline's retries:\n%s", out)
	}
}

// checkCeiling checks that the run measured the commit ceiling with
// sessions sessions, committed, and printed it after the settings line
// with what it allows at batches of batch.
func checkCeiling(t *testing.T, rep benchReport, out string, sessions, batch int) {
	t.Helper()
	c := rep.Ceiling
	if c == nil || c.Sessions != sessions || c.Commits <= 0 || c.Took <= 0 {
		t.Fatalf("commit ceiling %+v, want %d sessions that committed", c, sessions)
	}
	settings := strings.Index(out, "settings")
	line := strings.Index(out, ceilingLine(*c, batch))
	if settings < 0 || line < settings {
		t.Errorf("output lacks the commit ceiling after the settings line:\n%s", out)
	}
	if got, want := c.ItemsPerSecond(batch), c.PerSecond()*float64(batch)/2; got != want {
		t.Errorf("items/s at the ceiling %v, want %v", got, want)
	}
}

// checkLatency checks the pickup latency section of a run with pickups
// enqueues each: a row per way of finding items (NOTIFY's only where the
// dialect is a notifier), each over every pickup, p50 at most p99, and
// printed.
func checkLatency(t *testing.T, rep benchReport, out string, d dialect.Dialect, pickups int) {
	t.Helper()
	want := []string{"woken in-process", "polling only"}
	if _, ok := d.(dialect.Notifier); ok {
		want = []string{"woken in-process", "woken by NOTIFY", "polling only"}
	}
	var names []string
	for _, r := range rep.Latency {
		names = append(names, r.Name)
		if r.N != pickups || r.P50 <= 0 || r.P50 > r.P99 {
			t.Errorf("latency row %+v: want %d pickups, 0 < p50 <= p99", r, pickups)
		}
		if !strings.Contains(out, r.Name) {
			t.Errorf("output lacks latency row %q:\n%s", r.Name, out)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("latency rows %v, want %v", names, want)
	}
	if !strings.Contains(out, "pickup latency") {
		t.Errorf("output lacks the pickup latency section:\n%s", out)
	}
}

// checkDropped fails t if any table of the run is still readable on db.
func checkDropped(t *testing.T, db *sql.DB, rep benchReport) {
	t.Helper()
	ctx := context.Background()
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range rep.Prefixes {
		if prefix == "" {
			t.Fatalf("report lacks a table prefix: %+v", rep.Prefixes)
		}
		for _, table := range []string{"items", "processes", "barriers", "migrations"} {
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+table).Scan(&n); err == nil {
				t.Errorf("table %s%s left behind", prefix, table)
			}
		}
	}
}

// A tiny bench measures every row on both sides, and the flow rows,
// checks the work was really done (it returns an error otherwise), and
// drops its tables.
func TestBench_TinyRunMeasuresBothSides(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bench.db")
	var out bytes.Buffer
	rep, err := runBench(t.Context(), &out, benchOptions{Database: cmdline.Database{DB: path}, Items: 150, Batch: 20, Workers: 3, Pickups: 5, Flow: true, Ceiling: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	checkTinyRun(t, rep, out.String())
	checkCeiling(t, rep, out.String(), 3, 20)
	checkLatency(t, rep, out.String(), sqlite.Dialect(), 5)
	checkFlow(t, rep, out.String(), 5)
	if rep.Dialect != sqlite.Name || rep.Path != path || !strings.Contains(out.String(), path) {
		t.Errorf("report names %s at %q, want sqlite at %s; output:\n%s", rep.Dialect, rep.Path, path, out.String())
	}

	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%d tables left behind in %s", tables, path)
	}
}

// The same on the database the environment names (see envBenchDialect): the
// baseline's SQL is correct there, and the run leaves no table behind.
func TestBench_TinyRunOnEnvDialect(t *testing.T) {
	t.Parallel()
	name, dsn := envBenchTarget(t)
	var out bytes.Buffer
	rep, err := runBench(t.Context(), &out, benchOptions{Database: cmdline.Database{Dialect: name, DSN: dsn}, Items: 150, Batch: 20, Workers: 3, Pickups: 5, Flow: true, Ceiling: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	checkTinyRun(t, rep, out.String())
	checkCeiling(t, rep, out.String(), 3, 20)
	db, d, err := cmdline.OpenDialect(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	checkLatency(t, rep, out.String(), d, 5)
	checkFlow(t, rep, out.String(), 5)
	defer db.Close()
	checkDropped(t, db, rep)
}

// limitedSQLite is SQLite dressed as a database with tight bind and
// statement-size limits and no UPDATE ... RETURNING, so that the
// baseline's chunking runs. Its Rebind records the largest statements of
// the baseline's tables.
type limitedSQLite struct {
	dialect.Dialect
	bindParams, statementBytes int // the limits it claims

	mu                  sync.Mutex
	maxParams, maxBytes int // of any baseline statement
	insertParams        int // most placeholders of one baseline INSERT
}

func (d *limitedSQLite) Capabilities() dialect.Capabilities {
	c := d.Dialect.Capabilities()
	c.ReturningUpdate = false
	c.MaxBindParams = d.bindParams
	c.MaxStatementBytes = d.statementBytes
	return c
}

func (d *limitedSQLite) Rebind(q string) string {
	if strings.Contains(q, " base_") {
		n := strings.Count(q, "?")
		d.mu.Lock()
		d.maxParams, d.maxBytes = max(d.maxParams, n), max(d.maxBytes, len(q))
		if strings.HasPrefix(q, "INSERT INTO base_") && strings.Contains(q, "_items ") {
			d.insertParams = max(d.insertParams, n)
		}
		d.mu.Unlock()
	}
	return d.Dialect.Rebind(q)
}

// The baseline keeps every statement within the dialect's bind-parameter
// and statement-size limits, still inserting many rows per statement, and
// its claims fit the IN list of the completion that follows.
func TestBench_BaselineKeepsToDialectLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                       string
		bindParams, statementBytes int
	}{
		{"bind parameters", 60, 0},
		// Far below the statement that the bind limit alone would allow.
		{"statement bytes", 60000, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bench.db")
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			d := &limitedSQLite{Dialect: sqlite.Dialect(), bindParams: tc.bindParams, statementBytes: tc.statementBytes}
			var out bytes.Buffer
			// A batch above the bind limit: claims must shrink to fit.
			o := benchOptions{Items: 300, Batch: min(2*tc.bindParams, 200), Workers: 2}
			rep, err := benchOn(t.Context(), &out, db, d, path, o)
			if err != nil {
				t.Fatalf("benchOn: %v\n%s", err, out.String())
			}
			checkTinyRun(t, rep, out.String())
			t.Logf("baseline statements: at most %d parameters, %d bytes; inserts up to %d parameters", d.maxParams, d.maxBytes, d.insertParams)
			if d.maxParams > tc.bindParams || (tc.statementBytes > 0 && d.maxBytes > tc.statementBytes) {
				t.Errorf("a baseline statement had %d parameters and %d bytes; limits %d and %d", d.maxParams, d.maxBytes, tc.bindParams, tc.statementBytes)
			}
			if d.insertParams <= baseArgsPerRow {
				t.Errorf("baseline inserts carried at most %d parameters: one row per statement", d.insertParams)
			}
		})
	}
}

// flaky is SQLite whose Classify calls errFlaky retryable, so that a test
// can fail transactions as a serialization failure would.
type flaky struct{ dialect.Dialect }

var errFlaky = errors.New("flaky: could not serialize access")

func (f flaky) Classify(err error) dialect.ErrorClass {
	if errors.Is(err, errFlaky) {
		return dialect.Retryable
	}
	return f.Dialect.Classify(err)
}

// The baseline runs a transaction that failed with a retryable error again,
// after rolling it back, counts each retry, gives up after baseMaxAttempts
// tries, and never retries any other error.
func TestBench_BaselineRetriesRetryableTransactions(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Short of a test timeout: a transaction left open would hold SQLite's
	// writer queue until its own timeout, try after try.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	b := newBaseline(db, flaky{sqlite.Dialect()}, migrations.NamesFor("retry_"), 10, bareShape{})
	s := &bareSession{b: b}
	if _, err := db.ExecContext(ctx, "CREATE TABLE retry_n (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	// Each try writes a row before failing: only a rollback keeps the
	// failed tries from counting, and an open transaction would keep the
	// next one from beginning at all.
	tries := 0
	err = s.tx(ctx, func(tx bareTx) error {
		tries++
		if _, err := tx.exec(ctx, "INSERT INTO retry_n VALUES (1)"); err != nil {
			return err
		}
		if tries < 3 {
			return fmt.Errorf("write: %w", errFlaky)
		}
		return nil
	})
	var rows int
	if qerr := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM retry_n").Scan(&rows); qerr != nil {
		t.Fatal(qerr)
	}
	if err != nil || tries != 3 || b.retries.Load() != 2 || rows != 1 {
		t.Fatalf("err %v, %d tries, %d retries counted, %d rows; want nil, 3, 2, 1", err, tries, b.retries.Load(), rows)
	}

	tries = 0
	err = s.tx(ctx, func(bareTx) error { tries++; return errFlaky })
	if !errors.Is(err, errFlaky) || tries != baseMaxAttempts {
		t.Errorf("always retryable: err %v after %d tries; want errFlaky after %d", err, tries, baseMaxAttempts)
	}

	other := errors.New("syntax error")
	tries = 0
	err = s.tx(ctx, func(bareTx) error { tries++; return other })
	if !errors.Is(err, other) || tries != 1 {
		t.Errorf("not retryable: err %v after %d tries; want it after 1", err, tries)
	}
}

// The checkpoint bench runs between measurements is the one the dialect
// registered: SQLite's, and none for a server database or a name nobody
// registered.
func TestBench_CheckpointFromTheRegistry(t *testing.T) {
	t.Parallel()
	if checkpointFor(sqlite.Dialect()) == nil {
		t.Error("sqlite: no checkpoint, want the one sqlite registers")
	}
	if c := checkpointFor(postgres.Dialect()); c != nil {
		t.Error("postgres: a checkpoint, want none")
	}
	if c := checkpointFor(renamed{Dialect: sqlite.Dialect()}); c != nil {
		t.Error("an unregistered dialect got a checkpoint")
	}
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := checkpointFor(sqlite.Dialect())(t.Context(), db); err != nil {
		t.Errorf("sqlite checkpoint: %v", err)
	}
}

type renamed struct{ dialect.Dialect }

func (renamed) Name() string { return "renamed" }

// --db is another spelling of --dsn for dialects whose DSN is a file, and
// a usage error elsewhere; a server dialect needs --dsn.
func TestBench_DBAndDSNFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		o       benchOptions
		want    string
		wantErr bool
	}{
		{"sqlite, nothing", benchOptions{}, "", false},
		{"sqlite, --db", benchOptions{Database: cmdline.Database{DB: "a.db"}}, "a.db", false},
		{"sqlite, --dsn", benchOptions{Database: cmdline.Database{DSN: "a.db"}}, "a.db", false},
		{"sqlite, both alike", benchOptions{Database: cmdline.Database{DB: "a.db", DSN: "a.db"}}, "a.db", false},
		{"sqlite, both differ", benchOptions{Database: cmdline.Database{DB: "a.db", DSN: "b.db"}}, "", true},
		{"server, --dsn", benchOptions{Database: cmdline.Database{Dialect: "server", DSN: "host=x"}}, "host=x", false},
		{"server, nothing", benchOptions{Database: cmdline.Database{Dialect: "server"}}, "", true},
		{"server, --db", benchOptions{Database: cmdline.Database{Dialect: "server", DB: "a.db"}}, "", true},
	} {
		r, err := dialect.Registered(sqlite.Name)
		if err != nil {
			t.Fatal(err)
		}
		if tc.o.Dialect == "server" {
			r = dialect.Registration{Dialect: renamed{Dialect: sqlite.Dialect()}, DSN: dialect.DSNForm{Example: "host=x"}}
		}
		got, err := cmdline.DSNOrDB(r, tc.o.DSN, tc.o.DB)
		var ue *cmdline.UsageError
		if tc.wantErr {
			if !errors.As(err, &ue) {
				t.Errorf("%s: got %q, %v; want a usage error", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// BenchmarkHotPathVsBareSQL runs the bench's three measurements, Plenum and
// the bare-SQL baseline on the same database in the same run, and reports
// Plenum's rates and its ratio to the baseline (above 1: Plenum is faster),
// on a temporary SQLite file and, when PLENUM_BENCH_DIALECT and
// PLENUM_BENCH_DSN name one, on that database too.
// Run: go test ./internal/cmd/bench -run '^$' -bench HotPath -benchtime 3x
func BenchmarkHotPathVsBareSQL(b *testing.B) {
	b.Run(sqlite.Name, func(b *testing.B) {
		benchHotPath(b, benchOptions{Database: cmdline.Database{DB: filepath.Join(b.TempDir(), "bench.db")}})
	})
	name := os.Getenv(envBenchDialect)
	if name == "" {
		name = "env"
	}
	b.Run(name, func(b *testing.B) {
		name, dsn := envBenchTarget(b)
		benchHotPath(b, benchOptions{Database: cmdline.Database{Dialect: name, DSN: dsn}})
	})
}

func benchHotPath(b *testing.B, o benchOptions) {
	o.Items, o.Batch, o.Workers = 5000, 100, 4
	sums := map[string][2]float64{}
	var names []string
	runs := 0
	var retries [2]uint64
	for b.Loop() {
		rep, err := runBench(b.Context(), io.Discard, o)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Rows {
			if _, ok := sums[r.Name]; !ok {
				names = append(names, r.Name)
			}
			s := sums[r.Name]
			sums[r.Name] = [2]float64{s[0] + r.Plenum, s[1] + r.Baseline}
		}
		retries[0] += rep.TxRetries
		retries[1] += rep.BaseRetries
		runs++
	}
	for _, name := range names {
		s := sums[name]
		unit := strings.ReplaceAll(name, " ", "-")
		b.ReportMetric(s[0]/float64(runs), unit+"/s")
		b.ReportMetric(s[0]/s[1], unit+"-ratio")
	}
	b.ReportMetric(float64(retries[0])/float64(runs), "plenum-retries/run")
	b.ReportMetric(float64(retries[1])/float64(runs), "bare-retries/run")
}
