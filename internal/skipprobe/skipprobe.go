// Package skipprobe proves, on a live database, that a dialect's claim
// passes over the rows another session holds and does not wait for them:
// what FOR UPDATE SKIP LOCKED promises, and what some databases that
// accept the words do not do (see dialect.SkipLockedError). The migrator
// and the core run it; its statements are in the core's catalog.
//
// The probe writes two rows of its own in the items table, in the queue
// Queue, at a priority drawn afresh for each run (so that probes of other
// processes at the same moment claim only their own rows), available only
// a century from now, so that no worker's claim can take them; a first
// session claims one of them and keeps its transaction open; a second
// session's claim must then answer at once without the held row. Both
// transactions are rolled back and the rows deleted, whatever happened.
// A process killed mid-probe leaves its two rows behind: every probe
// first deletes the rows of probes that began over LeftoverAge ago, which
// no probe still running can own.
package skipprobe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Wait bounds the second session's claim. A claim that skips a held row
// answers in milliseconds; one that waits for it never answers while the
// first session holds it. The bound is generous so that a loaded server
// is not taken for a waiting one.
const Wait = 10 * time.Second

// attempts bounds the runs of the probe when a database error is
// transient (a connection lost, a serialization failure).
const attempts = 5

// pause is the longest wait before a run after a transient error, drawn
// afresh each time: probes of several processes that failed together on
// a serializable database would fail together again if each ran at once.
const pause = 250 * time.Millisecond

// ahead is how far in the future the probe's rows become available:
// never, for any claim that compares available_at with the clock.
const ahead = 100 * 365 * 24 * time.Hour

// Kind is the kind of the probe's rows, so that one left behind by a
// process killed mid-probe says what it is.
const Kind = "plenum.probe"

// Queue is the queue of the probe's rows.
const Queue = "plenum.probe"

// LeftoverAge is the age, on the database clock, past which a probe row is
// a leftover of a process killed mid-probe: a probe takes at most a few
// times Wait, so no probe still running owns a row this old.
const LeftoverAge = 10 * time.Minute

// maxLeftovers bounds the leftovers one probe deletes: each killed probe
// leaves two, and the next probe removes the rest.
const maxLeftovers = 20

// priorities is the range the probe draws its rows' priority from:
// within the 32-bit column, far from the priorities items are given.
const priorities = 1 << 30

// Insert returns the statement, rebound, that writes one probe row into
// table, with three arguments: its id, its priority and the microseconds
// until it is available.
func Insert(d dialect.Dialect, table string) string {
	return d.Rebind("INSERT INTO " + table + " (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at)" +
		" VALUES (?, '" + Queue + "', '" + Kind + "', ?, 'available', " + d.AddMicros(d.Now(0)) + ", 0, 1, 0, " + d.Now(0) + ")")
}

// Delete returns the statement, rebound, that removes the probe's two
// rows from table, by id.
func Delete(d dialect.Dialect, table string) string {
	return d.Rebind("DELETE FROM " + table + " WHERE id IN (?, ?)")
}

// Leftovers returns the statement, rebound, that reads the ids of the
// probe rows in table that are older than a bound number of
// microseconds: those of probes whose process was killed. It locks
// nothing, so a probe running in another process is never waited on.
func Leftovers(d dialect.Dialect, table string) string {
	return d.Rebind("SELECT id FROM " + table + " WHERE queue = '" + Queue + "' AND state = 'available' AND created_at < " +
		d.AddMicros(d.Now(0)) + " ORDER BY id" + d.Limit(maxLeftovers))
}

// DeleteLeftover returns the statement, rebound, that deletes one
// leftover probe row of table by id, if it is still one.
func DeleteLeftover(d dialect.Dialect, table string) string {
	return d.Rebind("DELETE FROM " + table + " WHERE id = ? AND queue = '" + Queue + "' AND kind = '" + Kind + "' AND state = 'available'")
}

// Spec is the claim of one probe row of priority in table: the shape of
// the core's claim (the same index, the same order), over the probe's
// rows alone. seek is the index that serves the core's claim at the
// schema's version, or nil: the filter holds its condition (from version
// 8 on, flow_key IS NULL, a column older versions lack), so that a
// partial index serves the probe as it serves the claim.
func Spec(d dialect.Dialect, table string, seek *dialect.Index, priority int) dialect.ClaimSpec {
	where := "state = 'available'"
	if seek != nil && len(seek.Where) > 0 {
		where = sqlkit.Condition(seek.Where)
	}
	return dialect.ClaimSpec{
		Table:      table,
		Key:        "id",
		Filter:     "queue = ? AND " + where + " AND priority = ?",
		FilterArgs: []any{Queue, priority},
		OrderBy:    "priority, available_at, id",
		Limit:      1,
		Set:        "state = 'claimed', attempt = attempt + 1",
		Returning:  []string{"id"},
		Seek:       seek,
	}
}

// Run proves that d's claim, in a second session, passes over the row a
// first session's claim holds without waiting for it.
// It returns nil when it does, or at once for a database of one writer
// (Capabilities.SingleWriter), where no two claims are ever open
// together; a *dialect.SkipLockedError saying what was seen when it does
// not; another error when the probe could not run. table is the items
// table, at schema version 1 or later.
func Run(ctx context.Context, db *sql.DB, d dialect.Dialect, table string, seek *dialect.Index) error {
	if d.Capabilities().SingleWriter {
		return nil
	}
	if n := db.Stats().MaxOpenConnections; n == 1 {
		return fmt.Errorf("%s: proving that claims skip locked rows takes two sessions at once, and the pool allows one connection (SetMaxOpenConns(1))", d.Name())
	}
	done, err := turn(ctx, db)
	if err != nil {
		return fmt.Errorf("%s: skip-locked probe: waiting for another probe on the same pool: %w", d.Name(), err)
	}
	defer done()
	for attempt := 1; attempt <= attempts; attempt++ {
		err = once(ctx, db, d, table, seek)
		var failed claimFailed
		switch {
		case err == nil:
			return nil
		case errors.As(err, &failed) && attempt == attempts:
			// The database's own lock wait timeout ends a claim that
			// waits with an error it calls transient; every run ended so.
			return &dialect.SkipLockedError{Dialect: d.Name(), Seen: fmt.Sprintf("a claim in a second session failed each of %d times while a first session held one of two rows (last: %v): a claim that waits for the held row ends so when the database's lock wait timeout passes", attempts, failed.err)}
		case errors.As(err, &failed), errors.As(err, new(firstMissed)) && ctx.Err() == nil:
		case ctx.Err() != nil || !transient(d, err):
			return err
		}
		if attempt < attempts {
			if werr := sleep(ctx, rand.N(pause)); werr != nil {
				return err
			}
		}
	}
	return err
}

// claimFailed is the second session's claim ending with an error the
// dialect calls transient (a lock wait timeout, a deadlock, a
// serialization failure).
type claimFailed struct{ err error }

func (c claimFailed) Error() string { return "the second session's claim: " + c.err.Error() }
func (c claimFailed) Unwrap() error { return c.err }

// firstMissed is the first session's claim not taking one of the two
// free rows: run again, in case a passing quirk of the database's made it
// pass over rows no one held.
type firstMissed struct{ error }

func (f firstMissed) Unwrap() error { return f.error }

// once runs the probe once, on a queue and rows of its own.
func once(ctx context.Context, db *sql.DB, d dialect.Dialect, table string, seek *dialect.Index) (err error) {
	if err := removeLeftovers(ctx, db, d, table); err != nil {
		return err
	}
	priority := rand.IntN(2*priorities) - priorities
	rows := []uuid.UUID{uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())}
	defer func() {
		// Both sessions have rolled back by now (their defers ran
		// first); the rows go even when ctx has ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, derr := db.ExecContext(cctx, Delete(d, table), d.UUID(rows[0]), d.UUID(rows[1])); derr != nil && err == nil {
			err = fmt.Errorf("%s: remove the skip-locked probe's rows: %w", d.Name(), derr)
		}
	}()
	insert := Insert(d, table)
	for _, id := range rows {
		if _, err := db.ExecContext(ctx, insert, d.UUID(id), priority, ahead.Microseconds()); err != nil {
			return fmt.Errorf("%s: write the skip-locked probe's rows: %w", d.Name(), err)
		}
	}
	spec := Spec(d, table, seek, priority)

	first, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return fmt.Errorf("%s: skip-locked probe: begin the first session: %w", d.Name(), err)
	}
	defer first.Rollback()
	held, err := claimIDs(ctx, d, first, spec)
	if err != nil {
		return fmt.Errorf("%s: skip-locked probe: the first session's claim: %w", d.Name(), err)
	}
	if len(held) != 1 || held[0] != rows[0] && held[0] != rows[1] {
		return firstMissed{fmt.Errorf("%s: skip-locked probe: the first session's claim of one of two free rows took %v", d.Name(), held)}
	}
	free := rows[0]
	if held[0] == free {
		free = rows[1]
	}

	// The second session gets Wait, from its begin to its claim's last
	// row: a claim that waits for the held row never answers before the
	// first session ends.
	wctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	second, err := d.Begin(wctx, db, dialect.TxOptions{})
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			st := db.Stats()
			return fmt.Errorf("%s: skip-locked probe: a second session did not begin within %v while the first was open (the pool: %d connections open, %d in use, at most %d): the probe needs two at once: %w", d.Name(), Wait, st.OpenConnections, st.InUse, st.MaxOpenConnections, err)
		}
		return fmt.Errorf("%s: skip-locked probe: begin the second session: %w", d.Name(), err)
	}
	defer second.Rollback()
	took, err := claimIDs(wctx, d, second, spec)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%s: skip-locked probe: %w", d.Name(), err)
	case err != nil && wctx.Err() != nil:
		return &dialect.SkipLockedError{Dialect: d.Name(), Seen: fmt.Sprintf("a claim in a second session did not answer within %v while a first session held one of two rows: it waits for the held row instead of passing over it", Wait)}
	case err != nil && d.Classify(err) == dialect.Retryable:
		return claimFailed{err}
	case err != nil:
		return fmt.Errorf("%s: skip-locked probe: the second session's claim: %w", d.Name(), err)
	case len(took) == 1 && took[0] == free, len(took) == 0:
		// Nothing taken, promptly, is no danger: the held row was passed
		// over, not waited for. That a free row was passed over too is
		// for Claim_LocksOnlyRowsItTakes in the conformance suite to show
		// (some databases lock more than a claim takes, or skip rows no
		// one holds, under plans a small probe cannot reproduce).
		return nil
	case len(took) == 1 && took[0] == held[0]:
		return &dialect.SkipLockedError{Dialect: d.Name(), Seen: fmt.Sprintf("a claim in a second session took row %s, which a first session's open claim holds: the claim locks nothing, and two workers would run the same item", took[0])}
	}
	return fmt.Errorf("%s: skip-locked probe: the second session's claim of one row took %v", d.Name(), took)
}

// removeLeftovers deletes the rows that probes of processes killed
// mid-probe left behind: read without a lock, then deleted by id, so that
// the rows a probe running elsewhere holds are never waited on.
func removeLeftovers(ctx context.Context, db *sql.DB, d dialect.Dialect, table string) error {
	rows, err := db.QueryContext(ctx, Leftovers(d, table), (-LeftoverAge).Microseconds())
	if err != nil {
		return fmt.Errorf("%s: skip-locked probe: read the rows of earlier probes: %w", d.Name(), err)
	}
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("%s: skip-locked probe: read the rows of earlier probes: %w", d.Name(), err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: skip-locked probe: read the rows of earlier probes: %w", d.Name(), err)
	}
	for _, id := range ids {
		if _, err := db.ExecContext(ctx, DeleteLeftover(d, table), d.UUID(id)); err != nil {
			return fmt.Errorf("%s: skip-locked probe: delete a row an earlier probe left: %w", d.Name(), err)
		}
	}
	return nil
}

// claimIDs runs d's claim of spec on q and returns the ids it took.
func claimIDs(ctx context.Context, d dialect.Dialect, q dialect.Querier, spec dialect.ClaimSpec) ([]uuid.UUID, error) {
	rows, err := d.Claim(ctx, q, spec)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// transient reports an error after which the probe may run again.
func transient(d dialect.Dialect, err error) bool {
	switch d.Classify(err) {
	case dialect.Retryable, dialect.ConnectionLost:
		return true
	}
	return false
}
