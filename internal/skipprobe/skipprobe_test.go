package skipprobe_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/internal/testkit/plantedclaim"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// servers are the databases with row locks, each with the session setting
// that makes the server itself give up waiting for a lock after a second.
var servers = []struct {
	name, lockWait string
	d              dialect.Dialect
	open           func(string) (*sql.DB, error)
}{
	{"postgres", "lock_timeout=1000", postgres.Dialect(), postgres.Open},
	{"mysql", "innodb_lock_wait_timeout=1", mysql.Dialect(), mysql.Open},
}

// open opens the named server's test database with param added to its
// DSN, or returns nil where there is none (the test is skipped).
func open(t *testing.T, name, param string, openDSN func(string) (*sql.DB, error)) *sql.DB {
	t.Helper()
	dsn := conformance.DSN(t, name)
	if dsn == "" {
		return nil
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := openDSN(dsn + sep + param)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A claim that waits is told apart when the database's own lock wait
// timeout ends it before the probe's bound does: the error it calls
// transient, every time, is a refusal that says so, not a hang or a
// retry without end.
func TestRun_ADatabaseLockWaitTimeoutIsAWait(t *testing.T) {
	t.Parallel()
	for _, c := range servers {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, c.name, c.lockWait, c.open)
			if db == nil {
				return
			}
			p := plantedclaim.Prefix(t, db, c.d)
			if _, err := migrations.Apply(t.Context(), db, c.d, p); err != nil {
				t.Fatal(err)
			}
			err := skipprobe.Run(t.Context(), db, plantedclaim.Waits(c.d), migrations.NamesFor(p).Items, migrations.ClaimIndex(p))
			var sl *dialect.SkipLockedError
			if !errors.As(err, &sl) || !strings.Contains(sl.Seen, "lock wait timeout passes") {
				t.Fatalf("Run = %v, want a *dialect.SkipLockedError for a claim the lock wait timeout ended", err)
			}
			t.Log(err)
		})
	}
}

// The probe needs two sessions at once: a pool of one is refused at once,
// saying so, rather than taken for a claim that waits.
func TestRun_APoolOfOneIsRefusedSayingSo(t *testing.T) {
	t.Parallel()
	c := servers[0]
	db := open(t, c.name, "application_name=skipprobe", c.open)
	if db == nil {
		return
	}
	db.SetMaxOpenConns(1)
	err := skipprobe.Run(t.Context(), db, c.d, "no_such_items", nil)
	if err == nil || !strings.Contains(err.Error(), "two sessions at once") || errors.As(err, new(*dialect.SkipLockedError)) {
		t.Fatalf("Run on a pool of one = %v, want an error saying it needs two sessions", err)
	}
}

// Probes started together on a pool just big enough for one (workers
// starting at once) take turns, instead of each holding one connection
// and waiting for a second until the probe gives up.
func TestRun_ProbesStartedTogetherShareASmallPool(t *testing.T) {
	t.Parallel()
	for _, c := range servers {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, c.name, c.lockWait, c.open)
			if db == nil {
				return
			}
			p := plantedclaim.Prefix(t, db, c.d)
			if _, err := migrations.Apply(t.Context(), db, c.d, p); err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(2)
			const probes = 4
			errs := make(chan error, probes)
			for range probes {
				go func() {
					errs <- skipprobe.Run(t.Context(), db, c.d, migrations.NamesFor(p).Items, migrations.ClaimIndex(p))
				}()
			}
			for range probes {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// A process killed mid-probe leaves its two rows behind. The next probe on
// the same tables removes those that are older than LeftoverAge, and
// leaves younger ones alone: they may be a probe's still running in
// another process.
func TestRun_RemovesTheRowsOfKilledProbes(t *testing.T) {
	t.Parallel()
	for _, c := range servers {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, c.name, c.lockWait, c.open)
			if db == nil {
				return
			}
			p := plantedclaim.Prefix(t, db, c.d)
			if _, err := migrations.Apply(t.Context(), db, c.d, p); err != nil {
				t.Fatal(err)
			}
			items := migrations.NamesFor(p).Items
			// Two rows as a killed probe leaves them, one of them
			// backdated past LeftoverAge.
			old, young := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
			for _, id := range []uuid.UUID{old, young} {
				if _, err := db.ExecContext(t.Context(), skipprobe.Insert(c.d, items), c.d.UUID(id), 7, time.Hour.Microseconds()); err != nil {
					t.Fatal(err)
				}
			}
			backdate := c.d.Rebind("UPDATE " + items + " SET created_at = " + c.d.AddMicros(c.d.Now(0)) + " WHERE id = ?")
			if _, err := db.ExecContext(t.Context(), backdate, (-2 * skipprobe.LeftoverAge).Microseconds(), c.d.UUID(old)); err != nil {
				t.Fatal(err)
			}
			if err := skipprobe.Run(t.Context(), db, c.d, items, migrations.ClaimIndex(p)); err != nil {
				t.Fatal(err)
			}
			var left []string
			rows, err := db.QueryContext(t.Context(), "SELECT id FROM "+items+" WHERE kind = '"+skipprobe.Kind+"'")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id uuid.UUID
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				left = append(left, id.String())
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(left) != 1 || left[0] != young.String() {
				t.Fatalf("probe rows after a probe: %v, want only the young leftover %s (the old one %s removed)", left, young, old)
			}
		})
	}
}
