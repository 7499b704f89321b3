package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// The commit ceiling is the server's physical limit for the bench's
// settings: how many transactions a second commit when each of --workers
// sessions updates one row of its own and commits, again and again. A
// server flushes its log for a transaction that wrote something (for
// none that wrote nothing), so this is the rate of durable commits the
// bench's settings allow at its concurrency, less what the server can
// group into one flush. Each batch of claim+complete commits twice (the
// claim, then the completion), so the ceiling over two, times the batch,
// is as many items a second as any client could drain one batch per
// commit at that concurrency.

// ceilingTable is the commit ceiling's table, under the baseline's
// prefix.
func ceilingTable(prefix string) string { return prefix + "ceiling" }

// ceilingReport is what the commit ceiling measured.
type ceilingReport struct {
	Sessions int
	Took     time.Duration
	Commits  int64
}

// PerSecond is the commits a second.
func (c ceilingReport) PerSecond() float64 { return perSecond(int(c.Commits), c.Took) }

// ItemsPerSecond is the most items a second that batches of batch, one
// commit for the claim and one for the completion, could drain at that
// rate of commits.
func (c ceilingReport) ItemsPerSecond(batch int) float64 { return c.PerSecond() * float64(batch) / 2 }

// measureCeiling measures the commit ceiling on db for about took: sessions
// goroutines, each on a row of its own of a new table under prefix
// (dropped afterwards), begin a transaction as the dialect begins them,
// update their row and commit, until the time is up.
func measureCeiling(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, sessions int, took time.Duration) (rep ceilingReport, err error) {
	table := ceilingTable(prefix)
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id INTEGER NOT NULL PRIMARY KEY, n INTEGER NOT NULL)"); err != nil {
		return rep, fmt.Errorf("commit ceiling: %w", err)
	}
	defer func() {
		for _, q := range d.DropTable(table) {
			if _, derr := db.ExecContext(context.WithoutCancel(ctx), q); derr != nil {
				err = errors.Join(err, fmt.Errorf("commit ceiling: drop %s: %w", table, derr))
			}
		}
	}()
	insert := d.Rebind("INSERT INTO " + table + " (id, n) VALUES (?, 0)")
	for i := range sessions {
		if _, err := db.ExecContext(ctx, insert, i); err != nil {
			return rep, fmt.Errorf("commit ceiling: %w", err)
		}
	}
	update := d.Rebind("UPDATE " + table + " SET n = n + 1 WHERE id = ?")
	var commits atomic.Int64
	start := time.Now()
	deadline := start.Add(took)
	var i atomic.Int64
	err = fanWorkers(ctx, sessions, func(ctx context.Context) error {
		row := i.Add(1) - 1
		for time.Now().Before(deadline) {
			tx, err := d.Begin(ctx, db, dialect.TxOptions{})
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, update, row); err != nil {
				_ = tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			commits.Add(1)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("commit ceiling: %w", err)
	}
	return ceilingReport{Sessions: sessions, Took: time.Since(start), Commits: commits.Load()}, nil
}

// ceilingLine is the line that states the commit ceiling and what it
// means for items a second at batches of batch.
func ceilingLine(c ceilingReport, batch int) string {
	return fmt.Sprintf("commit ceiling: %s commits/s (%s, each updating a row of its own and committing, for %v): at two commits per batch of %d (claim, completion), at most %s items/s",
		cmdline.Commas(int64(c.PerSecond())), cmdline.Plural(c.Sessions, "session"), c.Took.Round(time.Millisecond), batch, cmdline.Commas(int64(c.ItemsPerSecond(batch))))
}
