package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// TableProber is an optional interface a dialect may implement so that
// Version can tell a missing migrations table from a query that failed for
// another reason. The sqlite dialect implements it.
type TableProber interface {
	// TableExists reports whether table exists.
	TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error)
}

// IndexProber is an optional interface for a dialect whose DDL is not
// transactional and that cannot say CREATE INDEX IF NOT EXISTS (MySQL 8):
// the statement-by-statement migrator asks it whether an index exists, and
// skips that index's statements when it does, so that running Apply again
// completes a migration that failed half way. The mysql dialect implements
// it.
type IndexProber interface {
	// IndexExists reports whether table has an index named index.
	IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error)
}

// maxAttempts bounds the retries of a migration transaction that failed
// with a retryable error (SQLITE_BUSY, a serialization failure).
const maxAttempts = 5

// Apply brings the schema under prefix up to LatestVersion and returns the
// versions it applied, oldest first (none when the schema was current).
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
// Oracle: DDL commits on its own) each statement runs on its own, outside a
// transaction; every statement is idempotent (IF NOT EXISTS; where the
// dialect cannot say that for an index, it implements IndexProber and an
// index that exists is skipped), and a version's row is written only after
// all its statements succeeded, so a migration that failed half way is
// completed by running Apply again.
func Apply(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (applied []int, err error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if db == nil || d == nil {
		return nil, errors.New("migrations: apply: nil database or dialect")
	}
	caps := d.Capabilities()
	if caps.SingleWriter && caps.TransactionalDDL {
		// The migration's own write transaction excludes every other
		// writer, other migrators included: no separate lock, and so no
		// second connection (a pool of one connection works).
		return applyWithRetry(ctx, db, d, prefix)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: apply: %w", err)
	}
	defer conn.Close()
	unlock, err := d.Lock(ctx, conn, prefix+"migrate")
	if err != nil {
		return nil, fmt.Errorf("migrations: apply: lock: %w", err)
	}
	defer func() {
		// Release even when ctx is done.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if uerr := unlock(uctx); uerr != nil && err == nil {
			err = fmt.Errorf("migrations: apply: unlock: %w", uerr)
		}
	}()

	if !caps.TransactionalDDL {
		return applyEach(ctx, conn, d, prefix)
	}
	return applyWithRetry(ctx, db, d, prefix)
}

// applyWithRetry runs applyInTx, again after a retryable error.
func applyWithRetry(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (applied []int, err error) {
	for attempt := 1; ; attempt++ {
		applied, err = applyInTx(ctx, db, d, prefix)
		if err == nil || attempt == maxAttempts || d.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			return applied, err
		}
		backoff := time.Duration(attempt) * (20*time.Millisecond + rand.N(30*time.Millisecond))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, fmt.Errorf("migrations: apply: %w (after %v)", ctx.Err(), err)
		}
	}
}

// applyInTx applies every pending version in one transaction.
func applyInTx(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) ([]int, error) {
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return nil, fmt.Errorf("migrations: apply: %w", err)
	}
	defer tx.Rollback()
	applied, err := applyPending(ctx, tx, d, prefix, false)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrations: apply: commit: %w", err)
	}
	return applied, nil
}

// applyEach applies every pending version statement by statement, for
// databases whose DDL commits on its own.
func applyEach(ctx context.Context, conn *sql.Conn, d dialect.Dialect, prefix string) ([]int, error) {
	return applyPending(ctx, conn, d, prefix, true)
}

// applyPending creates the migrations table if needed and applies, in
// order, every version not recorded there, recording each after its
// statements. resumable says that the statements run outside a
// transaction, where a version may have been applied in part: a failed
// version's error then says to run Apply again, and an index that already
// exists is skipped when the dialect is an IndexProber.
func applyPending(ctx context.Context, q dialect.Querier, d dialect.Dialect, prefix string, resumable bool) ([]int, error) {
	hint := ""
	if resumable {
		hint = " (run Apply again to complete it)"
	}
	if err := execAll(ctx, q, d.CreateTable(MigrationsTable(prefix))); err != nil {
		return nil, fmt.Errorf("migrations: apply: create %s: %w", NamesFor(prefix).Migrations, err)
	}
	done, err := appliedVersions(ctx, q, prefix)
	if err != nil {
		return nil, err
	}
	var applied []int
	for _, m := range All(prefix) {
		if done[m.Version] {
			continue
		}
		up, err := pendingStatements(ctx, q, d, m, resumable)
		if err == nil {
			err = execAll(ctx, q, up)
		}
		if err != nil {
			return applied, fmt.Errorf("migrations: apply version %d (%s): %w%s", m.Version, m.Name, err, hint)
		}
		if _, err := q.ExecContext(ctx, insertVersion(d, prefix), m.Version, m.Name); err != nil {
			return applied, fmt.Errorf("migrations: apply version %d (%s): record: %w", m.Version, m.Name, err)
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

// pendingStatements returns the up statements of m, without those of the
// indexes that already exist when resumable is set and d is an
// IndexProber.
func pendingStatements(ctx context.Context, q dialect.Querier, d dialect.Dialect, m Migration, resumable bool) ([]string, error) {
	p, ok := d.(IndexProber)
	if !resumable || !ok {
		up, _ := Statements(d, m)
		return up, nil
	}
	var up []string
	for _, c := range m.Changes {
		if c.Index != nil {
			exists, err := p.IndexExists(ctx, q, c.IndexTable, c.Index.Name)
			if err != nil {
				return nil, fmt.Errorf("checking for index %s: %w", c.Index.Name, err)
			}
			if exists {
				continue
			}
		}
		// One change at a time, rendered as Statements renders it.
		stmts, _ := Statements(d, Migration{Version: m.Version, Name: m.Name, Changes: []Change{c}})
		up = append(up, stmts...)
	}
	return up, nil
}

func execAll(ctx context.Context, q dialect.Querier, stmts []string) error {
	for i, s := range stmts {
		if _, err := q.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("statement %d of %d: %w", i+1, len(stmts), err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, q dialect.Querier, prefix string) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT version FROM "+NamesFor(prefix).Migrations)
	if err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrations: read applied versions: %w", err)
		}
		done[int(v)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrations: read applied versions: %w", err)
	}
	return done, nil
}

// Version returns the highest schema version applied under prefix, and 0
// when the migrations table does not exist.
//
// No query tells a missing table apart on every database without parsing
// error messages, so Version asks for the version first and, only when that
// fails, finds out why: through the dialect's TableProber when it has one;
// otherwise by pinging the database, taking a failure on a reachable
// database as a missing table. Without a prober, a table that exists but
// cannot be read (a missing grant) also reads as 0; Apply then fails
// loudly when it reads the applied versions, so nothing is silently
// skipped.
func Version(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (int, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	if db == nil || d == nil {
		return 0, errors.New("migrations: version: nil database or dialect")
	}
	table := NamesFor(prefix).Migrations
	var v sql.NullInt64
	err := db.QueryRowContext(ctx, "SELECT MAX(version) FROM "+table).Scan(&v)
	if err == nil {
		return int(v.Int64), nil // NULL: an empty table
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("migrations: version: %w", err)
	}
	if p, ok := d.(TableProber); ok {
		exists, perr := p.TableExists(ctx, db, table)
		if perr != nil {
			return 0, fmt.Errorf("migrations: version: %w (and checking for %s: %v)", err, table, perr)
		}
		if !exists {
			return 0, nil
		}
		return 0, fmt.Errorf("migrations: version: %w", err)
	}
	if d.Classify(err) == dialect.ConnectionLost {
		return 0, fmt.Errorf("migrations: version: %w", err)
	}
	if perr := db.PingContext(ctx); perr != nil {
		return 0, fmt.Errorf("migrations: version: %w", err)
	}
	return 0, nil
}

// Drop drops every table of Plenum's under prefix (items, processes,
// barriers and the migrations table) if they exist, with their data and
// indexes. It touches no other table. Tests use it to clean up.
func Drop(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	if db == nil || d == nil {
		return errors.New("migrations: drop: nil database or dialect")
	}
	var stmts []string
	all := All(prefix)
	for i := len(all) - 1; i >= 0; i-- {
		_, down := Statements(d, all[i])
		stmts = append(stmts, down...)
	}
	stmts = append(stmts, d.DropTable(NamesFor(prefix).Migrations)...)

	if !d.Capabilities().TransactionalDDL {
		if err := execAll(ctx, db, stmts); err != nil {
			return fmt.Errorf("migrations: drop: %w", err)
		}
		return nil
	}
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return fmt.Errorf("migrations: drop: %w", err)
	}
	defer tx.Rollback()
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("migrations: drop: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: drop: commit: %w", err)
	}
	return nil
}
