package sqlcheck

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// TestRecorded_Cockroach runs the whole conformance suite with the
// cockroach dialect against PostgreSQL at SERIALIZABLE, and then the
// dialect's paths the suite does not take (the CLI's inspect, the
// dialect's own drop; bench, as the postgres dialect renders it, is
// recorded apart), through a Recorder, and checks every distinct
// statement that reached the server with CockroachDB's grammar. At least
// one of them must be a claim, and every claim must lock FOR UPDATE SKIP
// LOCKED.
func TestRecorded_Cockroach(t *testing.T) {
	t.Parallel()
	s := newPGSetup(t)
	if s == nil {
		return
	}
	d := newStandIn()
	open := conformance.Opener(postgres.DriverName, s.dsn)

	t.Run("Suite", func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			Dialect:       d,
			Open:          open,
			Misconfigured: conformance.Opener(postgres.DriverName, s.withParam("default_transaction_read_only", "on")),
			Scale:         suiteScale,
		})
	})
	t.Run("OwnPaths", func(t *testing.T) {
		db := open(t)
		prefix := storeWithWork(t, db, d)
		out := runCLI(t, "inspect", "--dialect", cockroach.Name, "--dsn", s.dsn, "--prefix", prefix)
		if !strings.Contains(out, prefix) {
			t.Errorf("inspect printed no tables %s*:\n%s", prefix, out)
		}
		// The dialect's own drop (the tables were created by the
		// stand-in's DDL, but dropping is the same statement).
		if err := migrations.Drop(t.Context(), db, cockroach.Dialect(), prefix); err != nil {
			t.Fatal(err)
		}
	})
	// plenum bench cannot run with the cockroach dialect here: it creates
	// its tables with the dialect's DDL, USING HASH, which PostgreSQL
	// refuses. Its statements are built from dialect methods that the
	// cockroach dialect takes from the postgres one unchanged (Rebind, Now,
	// Claim, InsertIgnore); only Begin's isolation and the core's fence
	// lock strength differ. So bench runs with the postgres dialect,
	// through a Recorder of its own, and what it sent is checked with
	// CockroachDB's grammar apart from the cockroach dialect's record.
	t.Run("BenchAsPostgres", func(t *testing.T) {
		rec := record(t, s.target, PostgreSQL)
		out := runCLI(t, "bench", "--dialect", postgres.Name, "--dsn", s.through(rec), "--items", "200", "--batch", "20", "--workers", "2")
		if !strings.Contains(out, "claim") {
			t.Errorf("bench printed no claim figures:\n%s", out)
		}
		// The postgres dialect's notifier (pg_notify in enqueues, LISTEN
		// for the pickup latency) is PostgreSQL's alone: the cockroach
		// dialect is no dialect.Notifier (CockroachDB has neither), so
		// those statements never reach a CockroachDB.
		if _, ok := cockroach.Dialect().(dialect.Notifier); ok {
			t.Fatal("the cockroach dialect is a dialect.Notifier: its notifier's statements must be checked here")
		}
		claims, notifier := 0, 0
		checkRecorded(t, rec, func(stmt string) error {
			if strings.HasPrefix(stmt, "LISTEN ") || strings.HasPrefix(stmt, "SELECT pg_notify(") {
				notifier++
				return nil
			}
			// The bench vacuums its tables between measurements on
			// PostgreSQL alone (the postgres registration's Settle; the
			// cockroach one has none): CockroachDB, which has no VACUUM,
			// never gets one.
			if strings.HasPrefix(stmt, "VACUUM ") {
				return nil
			}
			claim, err := CheckCockroach(stmt)
			if claim {
				claims++
			}
			return err
		})
		if claims < 2 {
			t.Errorf("%d claim shapes recorded from bench, want Plenum's and the baseline's", claims)
		}
		if notifier != 2 {
			t.Errorf("%d shapes of the postgres notifier recorded from bench, want LISTEN and pg_notify", notifier)
		}
	})

	claims := 0
	shapes := checkRecorded(t, s.rec, func(stmt string) error {
		claim, err := CheckCockroach(stmt)
		if claim {
			claims++
		}
		return err
	})
	if claims == 0 {
		t.Error("no claim statement was recorded: the run or the claim detection is broken")
	}
	t.Logf("claims among them: %d", claims)
	// Every statement of the core reached the server as a catalog entry.
	checkRecordedInCatalog(t, s.rec, d)
	// The dialect's own paths were taken: its Check to the end, its
	// Begin (through pgx), its lock's session and table.
	wantRecorded(t, shapes,
		"SELECT version()",
		"SELECT current_schema(), current_setting('search_path'), current_setting('default_transaction_read_only')",
		"begin isolation level serializable",
		"SET lock_timeout = 0",
		"CREATE TABLE IF NOT EXISTS plenum_locks ",
		"INSERT INTO plenum_locks (name) VALUES ($1)",
		"DROP TABLE IF EXISTS plenum_items",
		"SELECT queue, state, COUNT(*) FROM plenum_items",
	)
}

// TestRecorded_MySQL8 runs the whole conformance suite with the mysql
// dialect against the local MariaDB, and then the paths the suite does
// not take (the CLI's bench, inspect and migrations up), through a
// Recorder, and checks
// every distinct statement that reached the server with MySQL 8's
// grammar and rules: MariaDB accepts what MySQL 8 refuses (RETURNING,
// tx_isolation, some 1093 subqueries), so its passing the suite proves
// nothing about them.
func TestRecorded_MySQL8(t *testing.T) {
	t.Parallel()
	s := newMySQLSetup(t)
	if s == nil {
		return
	}
	d := mysql.Dialect()
	open := conformance.Opener(mysql.DriverName, s.dsn)
	bare := *s.cfg
	bare.ParseTime = false

	t.Run("Suite", func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			Dialect:       mysqlWrapped{d},
			Open:          open,
			Misconfigured: conformance.Opener(mysql.DriverName, bare.FormatDSN()),
			Scale:         suiteScale,
		})
	})
	t.Run("OwnPaths", func(t *testing.T) {
		db := open(t)
		prefix := storeWithWork(t, db, d)
		out := runCLI(t, "inspect", "--dialect", mysql.Name, "--dsn", s.dsn, "--prefix", prefix)
		if !strings.Contains(out, prefix) {
			t.Errorf("inspect printed no tables %s*:\n%s", prefix, out)
		}
		out = runCLI(t, "bench", "--dialect", mysql.Name, "--dsn", s.dsn, "--items", "200", "--batch", "20", "--workers", "2")
		if !strings.Contains(out, "claim") {
			t.Errorf("bench printed no claim figures:\n%s", out)
		}
		// The CLI's migrator, applying and then finding nothing to apply.
		fresh := fmt.Sprintf("pq%08x_", rand.Uint32())
		t.Cleanup(func() {
			if err := migrations.Drop(context.Background(), db, d, fresh); err != nil {
				t.Errorf("drop the tables of prefix %q: %v", fresh, err)
			}
		})
		for _, want := range []string{"applied version", "nothing to apply"} {
			if out := runCLI(t, "migrations", "up", "--dialect", mysql.Name, "--dsn", s.dsn, "--prefix", fresh); !strings.Contains(out, want) {
				t.Errorf("migrations up printed %q, want %q", out, want)
			}
		}
	})

	claims := 0
	shapes := checkRecorded(t, s.rec, func(stmt string) error {
		claim, err := CheckMySQL8(stmt)
		if claim {
			claims++
		}
		return err
	})
	if claims == 0 {
		t.Error("no claim statement was recorded: the run or the claim detection is broken")
	}
	t.Logf("claims among them: %d", claims)
	checkRecordedInCatalog(t, s.rec, d)
	// The dialect's own paths were taken: its Check to the end, its
	// Begin (through the driver), its lock, bench's baseline, inspect.
	wantRecorded(t, shapes,
		"SELECT VERSION(), DATABASE()",
		"SELECT @@SESSION.binlog_format",
		"UPDATE plenum_check_probe SET v = 1 WHERE id = 1",
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"START TRANSACTION",
		"SELECT GET_LOCK(?, ?)",
		"SELECT RELEASE_LOCK(?)",
		"SELECT COUNT(*) FROM information_schema.STATISTICS ",
		"UPDATE plenum_barriers SET arrived = arrived + ? WHERE id = ?",
		"SELECT queue, state, COUNT(*) FROM plenum_items",
	)
}

// wantRecorded fails t for each prefix that begins no recorded shape.
func wantRecorded(t *testing.T, shapes map[string]int, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		found := false
		for s := range shapes {
			if strings.HasPrefix(s, p) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no recorded statement begins %q: a path meant to be checked did not run through the recorder", p)
		}
	}
}

// mysqlWrapped passes the migrator's optional interfaces and the
// claim's (dialect.RowLocker) through, as the dialect itself has them:
// without the latter, claims of lanes would send statements no user's
// store sends, which the catalog rightly does not have.
type mysqlWrapped struct{ dialect.Dialect }

func (w mysqlWrapped) LockRows(spec dialect.ClaimSpec) (string, []any, error) {
	return w.Dialect.(dialect.RowLocker).LockRows(spec)
}

func (w mysqlWrapped) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return w.Dialect.(dialect.TableProber).TableExists(ctx, q, table)
}

func (w mysqlWrapped) IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error) {
	return w.Dialect.(dialect.IndexProber).IndexExists(ctx, q, table, index)
}

// storeWithWork opens a store under a new prefix on db and leaves work in
// it for inspect to show: items in two states and an owner. It returns
// the prefix, whose tables are dropped when t ends.
func storeWithWork(t *testing.T, db *sql.DB, d dialect.Dialect) string {
	t.Helper()
	ctx := t.Context()
	prefix := fmt.Sprintf("pq%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, prefix); err != nil {
			t.Errorf("drop the tables of prefix %q: %v", prefix, err)
		}
	})
	st, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := st.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte(`{}`), Key: fmt.Sprint("k", i)}); err != nil {
			t.Fatal(err)
		}
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 2, Lease: 30 * time.Second})
	if err != nil || len(claims) != 2 {
		t.Fatalf("claim: %d claims, %v", len(claims), err)
	}
	return prefix
}

// checkRecorded normalises the statements rec recorded, dedupes them, and
// checks each distinct one with check, failing t for each it refuses. It
// logs how many were sent, distinct, and checked, and, with -v, each
// statement checked. It returns the shapes, with how often each was sent.
func checkRecorded(t *testing.T, rec *Recorder, check func(string) error) map[string]int {
	t.Helper()
	raw := rec.Statements()
	shapes := map[string]int{}
	sent := 0
	for s, n := range raw {
		sent += n
		shapes[Normalize(s)] += n
	}
	if len(shapes) < 20 {
		t.Fatalf("only %d distinct statements were recorded: the run did not go through the recorder", len(shapes))
	}
	start := time.Now()
	failed := 0
	for _, s := range Sorted(shapes) {
		if testing.Verbose() {
			t.Logf("%6d× %s", shapes[s], s)
		}
		if err := check(s); err != nil {
			failed++
			t.Errorf("refused: %v\n%s", err, s)
		}
	}
	t.Logf("%d statements sent, %d distinct texts, %d distinct shapes checked in %v, %d refused",
		sent, len(raw), len(shapes), time.Since(start).Round(time.Millisecond), failed)
	return shapes
}
