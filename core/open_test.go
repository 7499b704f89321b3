package core_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// flakyCheck is SQLite whose Check first fails failures times with err
// (wrapped as a dialect wraps a driver's error), then runs the real one.
type flakyCheck struct {
	dialect.Dialect
	err      error
	failures atomic.Int64
	checks   atomic.Int64
}

func (f *flakyCheck) Check(ctx context.Context, db *sql.DB) error {
	f.checks.Add(1)
	if f.failures.Add(-1) >= 0 {
		return fmt.Errorf("sqlite: check: PRAGMA busy_timeout: %w", f.err)
	}
	return f.Dialect.Check(ctx, db)
}

func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "open.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A connection lost inside Check is a database error: Open tries again,
// and if it keeps failing reports the database error, never invalid input
// or a missing setting.
func TestOpen_TransientCheckFailureIsADatabaseError(t *testing.T) {
	t.Parallel()
	fast := core.Options{Migrate: true, Retry: core.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}}

	blip := &flakyCheck{Dialect: sqlite.Dialect(), err: driver.ErrBadConn}
	blip.failures.Store(1)
	if _, err := core.Open(t.Context(), openSQLite(t), blip, fast); err != nil {
		t.Fatalf("Open after one lost connection in Check: %v, want it to check again and succeed", err)
	}
	if n := blip.checks.Load(); n != 2 {
		t.Errorf("Check ran %d times, want 2", n)
	}

	down := &flakyCheck{Dialect: sqlite.Dialect(), err: driver.ErrBadConn}
	down.failures.Store(1 << 30)
	_, err := core.Open(t.Context(), openSQLite(t), down, fast)
	switch {
	case err == nil:
		t.Fatal("Open succeeded with every Check failing")
	case errors.Is(err, core.ErrInvalidInput), errors.Is(err, core.ErrMisconfigured):
		t.Errorf("a lost connection in Check: %v, matches ErrInvalidInput or ErrMisconfigured; want a database error", err)
	case !errors.Is(err, driver.ErrBadConn):
		t.Errorf("a lost connection in Check: %v, does not wrap the driver's error", err)
	case !strings.Contains(err.Error(), "connection-lost"):
		t.Errorf("a lost connection in Check: %q does not say what it is", err)
	}
	if n := down.checks.Load(); n < 2 || n > 3 {
		t.Errorf("Check ran %d times against a lost connection, want 2 or 3", n)
	}

	// What the dialect does not call transient is its refusal: one Check,
	// a *SettingError.
	refused := &flakyCheck{Dialect: sqlite.Dialect(), err: errors.New("journal_mode is \"delete\", not wal")}
	refused.failures.Store(1 << 30)
	_, err = core.Open(t.Context(), openSQLite(t), refused, fast)
	var se *core.SettingError
	if !errors.As(err, &se) || se.Dialect != "sqlite" || !errors.Is(err, core.ErrMisconfigured) {
		t.Errorf("a refusing Check: %v, want a *SettingError matching ErrMisconfigured", err)
	}
	if n := refused.checks.Load(); n != 1 {
		t.Errorf("a refusing Check ran %d times, want 1", n)
	}
}

// A connection without a setting the dialect needs gets its own error,
// naming the setting, not "invalid input".
func TestOpen_MissingSettingIsMisconfigured(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rollback.db")
	db, err := sql.Open(sqlite.DriverName, "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Migrate: true})
	if !errors.Is(err, core.ErrMisconfigured) || errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("Open without WAL: %v, want ErrMisconfigured and not ErrInvalidInput", err)
	}
	msg := err.Error()
	for _, want := range []string{"sqlite connection lacks a setting", "journal_mode", "_pragma=journal_mode(WAL)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Open without WAL: %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "invalid input") {
		t.Errorf("Open without WAL: %q still says invalid input", msg)
	}
}

// The schema-outdated error names the ways to migrate.
func TestOpen_OutdatedSchemaNamesTheFix(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	if _, err := migrations.Up(t.Context(), db, sqlite.Dialect(), "app_", 1); err != nil {
		t.Fatal(err)
	}
	_, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Prefix: "app_"})
	if !errors.Is(err, core.ErrSchemaOutdated) || errors.Is(err, core.ErrNoTables) {
		t.Fatalf("Open of tables at version 1 without Migrate: %v, want ErrSchemaOutdated and not ErrNoTables", err)
	}
	for _, want := range []string{"version 1", "Options{Migrate: true}", "plenum migrate up --dialect sqlite", "--prefix app_", "migrations.Apply"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// A prefix with no tables at all is most often a wrong prefix: the error
// asks about it first, rather than only offering to migrate, which would
// make a second set of tables beside the ones meant.
func TestOpen_NoTablesUnderPrefixAsksIfPrefixIsRight(t *testing.T) {
	t.Parallel()
	db := openSQLite(t)
	if _, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Prefix: "app_", Migrate: true}); err != nil {
		t.Fatal(err)
	}
	_, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Prefix: "apps_"})
	if !errors.Is(err, core.ErrNoTables) || !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("Open under a prefix with no tables: %v, want ErrNoTables (and ErrSchemaOutdated)", err)
	}
	if want := "plenum: no Plenum tables under prefix apps_ (is Prefix right?)"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%q does not start with %q", err, want)
	}
}
