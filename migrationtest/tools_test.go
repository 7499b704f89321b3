package migrationtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/golang-migrate/migrate/v4"
	migratedb "github.com/golang-migrate/migrate/v4/database"
	migratemysql "github.com/golang-migrate/migrate/v4/database/mysql"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/pressly/goose/v3"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// target is one database the tools run on.
type target struct {
	name    string
	dialect dialect.Dialect
	// open returns a new pool on the database; multi asks for the
	// setting golang-migrate's MySQL driver needs (multiStatements).
	open func(t *testing.T, multi bool) *sql.DB
	// goose is goose's name for the database.
	goose goose.Dialect
	// migrate wraps a pool in golang-migrate's driver.
	migrate func(db *sql.DB, table string) (migratedb.Driver, error)
}

func targets(t *testing.T) []target {
	path := filepath.Join(t.TempDir(), "tools.db")
	return []target{
		{
			name: "sqlite", dialect: sqlite.Dialect(), goose: goose.DialectSQLite3,
			open: func(t *testing.T, _ bool) *sql.DB {
				return must(t, func() (*sql.DB, error) { return sqlite.Open(path) })
			},
			migrate: func(db *sql.DB, table string) (migratedb.Driver, error) {
				return migratesqlite.WithInstance(db, &migratesqlite.Config{MigrationsTable: table})
			},
		},
		{
			name: "postgres", dialect: postgres.Dialect(), goose: goose.DialectPostgres,
			open: func(t *testing.T, _ bool) *sql.DB {
				dsn := conformance.Harness{Name: "postgres"}.DSN(t)
				return must(t, func() (*sql.DB, error) { return postgres.Open(dsn) })
			},
			migrate: func(db *sql.DB, table string) (migratedb.Driver, error) {
				return migratepgx.WithInstance(db, &migratepgx.Config{MigrationsTable: table})
			},
		},
		{
			name: "mysql", dialect: mysql.Dialect(), goose: goose.DialectMySQL,
			open: func(t *testing.T, multi bool) *sql.DB {
				dsn := conformance.Harness{Name: "mysql"}.DSN(t)
				if multi {
					cfg, err := gomysql.ParseDSN(dsn)
					if err != nil {
						t.Fatal(err)
					}
					cfg.MultiStatements = true
					dsn = cfg.FormatDSN()
				}
				return must(t, func() (*sql.DB, error) { return mysql.Open(dsn) })
			},
			migrate: func(db *sql.DB, table string) (migratedb.Driver, error) {
				return migratemysql.WithInstance(db, &migratemysql.Config{MigrationsTable: table})
			},
		},
	}
}

func must(t *testing.T, open func() (*sql.DB, error)) *sql.DB {
	t.Helper()
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// files renders the migration files of d under prefix in format, as
// "plenum migrations gen" writes them.
func files(t *testing.T, d dialect.Dialect, prefix, format string) fs.FS {
	t.Helper()
	rendered, err := migrations.Render(d, prefix, format)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, f := range rendered {
		fsys[f.Name] = &fstest.MapFile{Data: f.Content}
	}
	return fsys
}

// newPrefix returns a random table prefix and drops Plenum's tables under
// it, and the tool's version table, when t ends.
func newPrefix(t *testing.T, db *sql.DB, d dialect.Dialect, toolTable string) string {
	p := fmt.Sprintf("mt%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, p); err != nil {
			t.Errorf("drop %s*: %v", p, err)
		}
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+p+toolTable); err != nil {
			t.Errorf("drop %s%s: %v", p, toolTable, err)
		}
	})
	return p
}

// checkApplied checks that every version is recorded and that a store
// opened without migrating works: enqueue, claim, complete.
func checkApplied(t *testing.T, db *sql.DB, d dialect.Dialect, p string) {
	t.Helper()
	ctx := t.Context()
	st, err := migrations.Status(ctx, db, d, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.State != migrations.Applied {
			t.Fatalf("version %d is %s after the tool's up", s.Version, s.State)
		}
	}
	s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
	if err != nil {
		t.Fatalf("core.Open without Migrate: %v", err)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte(`{"user":42}`)}); err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("Claim = %d items, %v", len(cs), err)
	}
	if err := s.Complete(ctx, cs[0], []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
}

// checkGone checks that nothing of Plenum's is left under p.
func checkGone(t *testing.T, db *sql.DB, d dialect.Dialect, p string) {
	t.Helper()
	if v, err := migrations.Version(t.Context(), db, d, p); err != nil || v != 0 {
		t.Fatalf("version after the tool's down = %d, %v; want 0", v, err)
	}
	n := migrations.NamesFor(p)
	for _, table := range []string{n.Items, n.Processes, n.Barriers, n.Attempts, n.Queues, n.Schedules, n.Migrations} {
		if _, err := db.ExecContext(t.Context(), "SELECT 1 FROM "+table); err == nil {
			t.Errorf("%s is still there after the tool's down", table)
		}
	}
}

func TestGoose_UpDownUp(t *testing.T) {
	t.Parallel()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := tg.open(t, false)
			p := newPrefix(t, db, tg.dialect, "goose_db_version")
			provider, err := goose.NewProvider(tg.goose, db, files(t, tg.dialect, p, migrations.FormatGoose),
				goose.WithTableName(p+"goose_db_version"), goose.WithDisableGlobalRegistry(true))
			if err != nil {
				t.Fatal(err)
			}
			for round := 1; round <= 2; round++ {
				res, err := provider.Up(ctx)
				if err != nil || len(res) != migrations.LatestVersion {
					t.Fatalf("round %d: goose up = %v, %v", round, res, err)
				}
				checkApplied(t, db, tg.dialect, p)
				if round == 2 {
					break
				}
				res, err = provider.DownTo(ctx, 0)
				if err != nil || len(res) != migrations.LatestVersion {
					t.Fatalf("goose down to 0 = %v, %v", res, err)
				}
				checkGone(t, db, tg.dialect, p)
			}
		})
	}
}

func TestGolangMigrate_UpDownUp(t *testing.T) {
	t.Parallel()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			db := tg.open(t, false)
			p := newPrefix(t, db, tg.dialect, "schema_migrations")
			// golang-migrate closes the pool it is given: one of its own.
			driver, err := tg.migrate(tg.open(t, true), p+"schema_migrations")
			if err != nil {
				t.Fatal(err)
			}
			src, err := iofs.New(files(t, tg.dialect, p, migrations.FormatGolangMigrate), ".")
			if err != nil {
				t.Fatal(err)
			}
			m, err := migrate.NewWithInstance("iofs", src, tg.name, driver)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			for round := 1; round <= 2; round++ {
				if err := m.Up(); err != nil {
					t.Fatalf("round %d: golang-migrate up: %v", round, err)
				}
				if v, dirty, err := m.Version(); err != nil || dirty || v != migrations.LatestVersion {
					t.Fatalf("round %d: golang-migrate version %d, dirty %v, %v", round, v, dirty, err)
				}
				checkApplied(t, db, tg.dialect, p)
				if round == 2 {
					break
				}
				if err := m.Down(); err != nil {
					t.Fatalf("golang-migrate down: %v", err)
				}
				checkGone(t, db, tg.dialect, p)
			}
		})
	}
}

// Without multiStatements=true, golang-migrate cannot run the MySQL files
// (each is sent whole): what the files' header and "plenum migrations
// gen" warn about.
func TestGolangMigrate_MySQLNeedsMultiStatements(t *testing.T) {
	t.Parallel()
	tg := targets(t)[2]
	db := tg.open(t, false)
	p := newPrefix(t, db, tg.dialect, "schema_migrations")
	driver, err := tg.migrate(tg.open(t, false), p+"schema_migrations")
	if err != nil {
		t.Fatal(err)
	}
	src, err := iofs.New(files(t, tg.dialect, p, migrations.FormatGolangMigrate), ".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithInstance("iofs", src, tg.name, driver)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = m.Up()
	var me migrate.ErrDirty
	if err == nil || errors.As(err, &me) {
		t.Fatalf("golang-migrate up without multiStatements = %v, want a syntax error", err)
	}
	t.Logf("as expected: %v", err)
}
