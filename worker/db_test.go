package worker_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// database is one database the runtime's tests run on.
type database struct {
	name string
	d    dialect.Dialect
	open func(t *testing.T) *sql.DB
}

// databases are SQLite in a temp dir, and the PostgreSQL and MySQL/MariaDB
// servers the environment names (conformance's harness: a skip, or a
// failure where PLENUM_REQUIRE lists the database).
var databases = []database{
	{"sqlite", sqlite.Dialect(), func(t *testing.T) *sql.DB {
		return opened(t)(sqlite.Open(filepath.Join(t.TempDir(), "worker.db")))
	}},
	{"postgres", postgres.Dialect(), func(t *testing.T) *sql.DB {
		return opened(t)(postgres.Open(conformance.DSN(t, "postgres")))
	}},
	{"mysql", mysql.Dialect(), func(t *testing.T) *sql.DB {
		return opened(t)(mysql.Open(conformance.DSN(t, "mysql")))
	}},
}

func opened(t *testing.T) func(*sql.DB, error) *sql.DB {
	return func(db *sql.DB, err error) *sql.DB {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// env is one test's tables on one database.
type env struct {
	t      *testing.T
	ctx    context.Context
	db     *sql.DB
	d      dialect.Dialect
	prefix string
	store  *core.Store
}

// eachDatabase runs body as a parallel subtest on every database, each
// under its own random table prefix, dropped at the end.
func eachDatabase(t *testing.T, body func(e *env)) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.name, func(t *testing.T) {
			t.Parallel()
			db := dbase.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			t.Cleanup(cancel)
			e := &env{t: t, ctx: ctx, db: db, d: dbase.d, prefix: fmt.Sprintf("pw%08x_", rand.Uint32())}
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, dbase.d, e.prefix); err != nil {
					t.Errorf("drop tables %s*: %v", e.prefix, err)
				}
			})
			e.store = e.open(0)
			body(e)
		})
	}
}

// open opens a store on the test's tables with its clock shifted by
// offset.
func (e *env) open(offset time.Duration) *core.Store {
	e.t.Helper()
	s, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.prefix, Migrate: true, ClockOffset: offset})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) enqueue(specs ...core.ItemSpec) []uuid.UUID {
	e.t.Helper()
	out, err := e.store.Enqueue(e.ctx, specs...)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(out))
	for i, o := range out {
		ids[i] = o.ID
	}
	return ids
}

func (e *env) get(id uuid.UUID) core.Item {
	e.t.Helper()
	it, err := e.store.Get(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return it
}

// waitFor polls until ok holds for every id, or fails after within.
func (e *env) waitFor(within time.Duration, what string, ok func(core.Item) bool, ids ...uuid.UUID) {
	e.t.Helper()
	end := time.Now().Add(within)
	for {
		var bad *core.Item
		for _, id := range ids {
			if it := e.get(id); !ok(it) {
				bad = &it
				break
			}
		}
		if bad == nil {
			return
		}
		if time.Now().After(end) {
			e.t.Fatalf("after %v: item %s (%s) is %s, attempt %d, error %q: want %s", within, bad.ID, bad.Kind, bad.State, bad.Attempt, bad.LastError, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// auditTable creates a table of the test's own for effects written inside
// fences, dropped at the end.
func (e *env) auditTable() string {
	e.t.Helper()
	name := e.prefix + "audit"
	e.t.Cleanup(func() {
		for _, stmt := range e.d.DropTable(name) {
			_, _ = e.db.ExecContext(context.Background(), stmt)
		}
	})
	if _, err := e.db.ExecContext(e.ctx, "CREATE TABLE "+name+" (id VARCHAR(64) PRIMARY KEY)"); err != nil {
		e.t.Fatal(err)
	}
	return name
}

func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// fast are settings that make a test's worker quick: polls of 50 ms,
// heartbeats every 400 ms, stale after 3 s.
func fast(queues map[string]int) worker.Config {
	cfg := worker.Config{
		Queues:            map[string]worker.QueueConfig{},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: 400 * time.Millisecond,
		StaleAfter:        3 * time.Second,
		ReapInterval:      time.Second,
	}
	for q, n := range queues {
		cfg.Queues[q] = worker.QueueConfig{MaxWorkers: n}
	}
	return cfg
}

// start makes, lets setup register handlers on, and starts a worker; it is
// stopped at the end of the test if it still runs.
func (e *env) start(cfg worker.Config, setup func(w *worker.Worker)) *worker.Worker {
	e.t.Helper()
	w, err := worker.New(e.store, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	setup(w)
	if err := w.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return w
}
