package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
)

// maxAttempts bounds the retries of a migration transaction, or of a run
// outside one, that failed with a retryable error (SQLITE_BUSY, a
// serialization failure, a deadlock).
const maxAttempts = 5

// Apply brings the schema under prefix up to LatestVersion and returns the
// versions it applied, oldest first (none when the schema was current). It
// is Up(ctx, db, d, prefix, LatestVersion).
//
// It holds the dialect's migration lock (Lock, named prefix+"migrate") on a
// connection of its own for the whole run, so applications that migrate at
// start-up cannot collide; db must then allow at least two open
// connections. A single-writer database with transactional DDL (SQLite)
// needs no separate lock: the migration's write transaction is the lock,
// and one connection is enough.
//
// Where DDL is transactional (Capabilities.TransactionalDDL: SQLite,
// PostgreSQL), the migrations table, every statement of every pending
// version and each version's row are written in one transaction that
// commits once: a failure leaves the schema as it was. Elsewhere (MySQL,
// Oracle, CockroachDB: DDL commits on its own) each statement runs on its
// own, outside a transaction, and a version is marked as started (a row
// with its version negated) before its first statement and recorded only
// after its last: a migration that failed half way shows in Status as
// partly applied, is not taken as applied by Version, and is completed by
// running Apply again, which skips what is done (IF NOT EXISTS, or the
// dialect's probers: dialect.TableProber, IndexProber, ColumnProber). A
// statement that fails with an error the dialect calls retryable (a
// deadlock, a serialization failure) changed nothing, and Apply resumes by
// itself, a bounded number of times.
func Apply(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (applied []int, err error) {
	return Up(ctx, db, d, prefix, LatestVersion)
}

// Up applies the pending versions up to and including version to (1 to
// LatestVersion), oldest first, and returns those it applied. A version
// left partly applied or partly rolled back by a run that failed is
// completed. See Apply for the lock and the transactions.
//
// Then, the schema current or not, it proves that the dialect's claim
// skips the rows another session holds, in two sessions of its own, on
// two rows of its own that no worker can claim, which it deletes again
// (a database of one writer, Capabilities.SingleWriter, is not probed).
// Where the claim does not, it returns a *dialect.SkipLockedError saying
// what was seen, with the versions it applied: a database that parses FOR
// UPDATE SKIP LOCKED and ignores it would hand one item to two workers.
// The probe needs two connections at once and write access to the items
// table, and gives the second session's claim ten seconds before it
// calls the claim one that waits.
func Up(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, to int) ([]int, error) {
	if to < 1 || to > LatestVersion {
		return nil, fmt.Errorf("migrations: up: version %d: this build knows versions 1 to %d", to, LatestVersion)
	}
	applied, err := migrate(ctx, db, d, prefix, to, false)
	if err != nil {
		return applied, err
	}
	// After the lock is released: the probe's two sessions and the lock's
	// would otherwise need three connections.
	// At the version the schema is at, which may be above to: the claim's
	// index, and the columns its condition names, are that version's.
	v, err := Version(ctx, db, d, prefix)
	if err != nil {
		return applied, fmt.Errorf("migrations: apply: %w", err)
	}
	if err := skipprobe.Run(ctx, db, d, NamesFor(prefix).Items, claimIndexAt(prefix, v)); err != nil {
		return applied, fmt.Errorf("migrations: apply: %w", err)
	}
	return applied, nil
}

// Down rolls back, newest first, every applied version above version to
// (0 to LatestVersion) and returns those it rolled back. Down to 0 drops
// every table of Plenum's under prefix, with its data, and the migrations
// table last. A version that was partly applied or partly rolled back is
// rolled back too. It refuses to roll back a version this build does not
// know (applied by a newer Plenum). It takes the same lock as Apply, and
// runs in one transaction where DDL is transactional; elsewhere a version
// is marked before its first statement and its row deleted after its last,
// so that a rollback that failed half way shows in Status and is completed
// by running Down again.
func Down(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, to int) ([]int, error) {
	if to < 0 || to > LatestVersion {
		return nil, fmt.Errorf("migrations: down: version %d: this build knows versions 0 to %d", to, LatestVersion)
	}
	return migrate(ctx, db, d, prefix, to, true)
}

// migrate takes the lock and runs up (or down) to version to.
func migrate(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, to int, down bool) (done []int, err error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if db == nil || d == nil {
		return nil, fmt.Errorf("migrations: %s: nil database or dialect", verb(down))
	}
	caps := d.Capabilities()
	if caps.SingleWriter && caps.TransactionalDDL {
		// The migration's own write transaction excludes every other
		// writer, other migrators included: no separate lock, and so no
		// second connection (a pool of one connection works).
		return runWithRetry(ctx, db, d, prefix, to, down)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: %s: %w", verb(down), err)
	}
	defer conn.Close()
	unlock, err := d.Lock(ctx, conn, prefix+"migrate")
	if err != nil {
		return nil, fmt.Errorf("migrations: %s: lock: %w", verb(down), err)
	}
	defer func() {
		// Release even when ctx is done.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if uerr := unlock(uctx); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: %s: unlock: %w", verb(down), uerr)
		}
	}()

	if !caps.TransactionalDDL {
		return runResumable(ctx, conn, d, prefix, to, down)
	}
	return runWithRetry(ctx, db, d, prefix, to, down)
}

// runResumable runs run outside a transaction, again after a retryable
// error: each statement there commits alone, so one that failed as
// retryable (a serialization failure of CockroachDB's, say) changed
// nothing, and run resumes the version it stopped in, as a user running
// Apply again would. done holds every version a pass completed.
func runResumable(ctx context.Context, q dialect.Querier, d dialect.Dialect, prefix string, to int, down bool) (done []int, err error) {
	for attempt := 1; ; attempt++ {
		var pass []int
		pass, err = run(ctx, q, d, prefix, to, down, true)
		done = append(done, pass...)
		if err == nil || attempt == maxAttempts || d.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			return done, err
		}
		if perr := retryPause(ctx, attempt); perr != nil {
			return done, fmt.Errorf("migrations: %s: %w (after %v)", verb(down), perr, err)
		}
	}
}

// retryPause waits before attempt+1: longer after each attempt, jittered
// so that migrators retrying together spread out.
func retryPause(ctx context.Context, attempt int) error {
	backoff := time.Duration(attempt) * (20*time.Millisecond + rand.N(30*time.Millisecond))
	select {
	case <-time.After(backoff):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func verb(down bool) string {
	if down {
		return "down"
	}
	return "apply"
}

// runWithRetry runs runInTx, again after a retryable error.
func runWithRetry(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, to int, down bool) (done []int, err error) {
	for attempt := 1; ; attempt++ {
		done, err = runInTx(ctx, db, d, prefix, to, down)
		if err == nil || attempt == maxAttempts || d.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			return done, err
		}
		if perr := retryPause(ctx, attempt); perr != nil {
			return nil, fmt.Errorf("migrations: %s: %w (after %v)", verb(down), perr, err)
		}
	}
}

// runInTx runs every pending version in one transaction.
func runInTx(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, to int, down bool) ([]int, error) {
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return nil, fmt.Errorf("migrations: %s: %w", verb(down), err)
	}
	defer tx.Rollback()
	done, err := run(ctx, tx, d, prefix, to, down, false)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrations: %s: commit: %w", verb(down), err)
	}
	return done, nil
}

// run creates the migrations table if needed, then applies (or rolls
// back) the versions that need it, in order. resumable says that the
// statements run outside a transaction, where a version may be left half
// done: each version is then marked as started before its first statement
// (its number negated), and unmarked after its last.
func run(ctx context.Context, q dialect.Querier, d dialect.Dialect, prefix string, to int, down, resumable bool) ([]int, error) {
	table := NamesFor(prefix).Migrations
	if err := execAll(ctx, q, d.CreateTable(MigrationsTable(prefix))); err != nil {
		return nil, fmt.Errorf("migrations: %s: create %s: %w", verb(down), table, err)
	}
	rows, err := readVersions(ctx, q, prefix)
	if err != nil {
		return nil, err
	}
	applied, started := map[int]bool{}, map[int]bool{}
	for _, r := range rows {
		if r.version < 0 {
			started[-r.version] = true
		} else {
			applied[r.version] = true
			if down && r.version > to && r.version > LatestVersion {
				return nil, fmt.Errorf("migrations: down: version %d (%s) was applied by a newer build of Plenum, which this one (versions 1 to %d) cannot roll back", r.version, r.name, LatestVersion)
			}
		}
	}
	hint := ""
	if resumable {
		hint = " (left partly applied: run Apply, or plenum migrate up, again to complete it)"
		if down {
			hint = " (left partly rolled back: run Down, or plenum migrate down, again to complete it)"
		}
	}
	all := All(prefix)
	if down {
		slices.Reverse(all)
	}
	var done []int
	for _, m := range all {
		if down && (m.Version <= to || !applied[m.Version] && !started[m.Version]) ||
			!down && (m.Version > to || applied[m.Version] && !started[m.Version]) {
			continue
		}
		if resumable && !started[m.Version] {
			if _, err := q.ExecContext(ctx, insertVersion(d, prefix), -m.Version, m.Name); err != nil {
				return done, fmt.Errorf("migrations: %s version %d (%s): mark as started: %w", verb(down), m.Version, m.Name, err)
			}
		}
		if err := runChanges(ctx, q, d, m, down, resumable); err != nil {
			return done, fmt.Errorf("migrations: %s version %d (%s): %w%s", verb(down), m.Version, m.Name, err, hint)
		}
		var record error
		switch {
		case down:
			_, record = q.ExecContext(ctx, deleteVersion(d, prefix), m.Version)
		case !applied[m.Version]:
			_, record = q.ExecContext(ctx, insertVersion(d, prefix), m.Version, m.Name)
		}
		if record == nil && (resumable || started[m.Version]) {
			_, record = q.ExecContext(ctx, deleteVersion(d, prefix), -m.Version)
		}
		if record != nil {
			return done, fmt.Errorf("migrations: %s version %d (%s): record: %w%s", verb(down), m.Version, m.Name, record, hint)
		}
		done = append(done, m.Version)
	}
	if down && to == 0 {
		if err := execAll(ctx, q, d.DropTable(table)); err != nil {
			return done, fmt.Errorf("migrations: down: drop %s: %w", table, err)
		}
	}
	return done, nil
}

// versionRow is one row of the migrations table.
type versionRow struct {
	version   int
	name      string
	appliedAt any
}

func readVersions(ctx context.Context, q dialect.Querier, prefix string) ([]versionRow, error) {
	rows, err := q.QueryContext(ctx, "SELECT version, name, applied_at FROM "+NamesFor(prefix).Migrations+" ORDER BY version")
	if err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	defer rows.Close()
	var out []versionRow
	for rows.Next() {
		var v int64
		var r versionRow
		if err := rows.Scan(&v, &r.name, &r.appliedAt); err != nil {
			return nil, fmt.Errorf("migrations: read applied versions: %w", err)
		}
		r.version = int(v)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	return out, nil
}
