package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// baseline does the same work as Plenum with the SQL a strong engineer
// would write by hand for the database, on tables of the same shape: it
// claims in claim order, passing over locked rows, under a claim token;
// completes only the rows that still hold that token; returns what a
// worker needs (id, kind, payload, attempt, barrier). It has no owners, no
// pauses, no history: what it lacks is what Plenum adds. Transactions begin
// as the dialect begins them (the same isolation level), on the same
// *sql.DB (the same session settings and durability), and are run again,
// like Plenum's, when the database reports a conflict worth retrying.
type baseline struct {
	db    *sql.DB
	d     dialect.Dialect
	names migrations.Names
	shape bareShape
	// batch is the claim limit: the --batch flag, fitted to the statements
	// of the shape.
	batch int
	// now, later and json are the dialect's clock expression, the clock
	// plus a bound number of microseconds, and the placeholder of a JSON
	// value.
	now, later, json string
	// maxRows and maxBytes bound one multi-row INSERT: the bind-parameter
	// limit over the parameters of a row, and the statement size limit
	// (0: none).
	maxRows, maxBytes int
	// writer, on a single-writer database, makes the baseline's write
	// transactions take turns, as Plenum's do (for SQLite the dialect's
	// Begin queues the writers of one *sql.DB too): concurrent writers
	// would otherwise wait in the database's busy handler, whose sleeps
	// would make the baseline look slower than it is. Nil elsewhere, where
	// writers run side by side and row locks keep them apart.
	writer *sync.Mutex
	// retries counts transactions run again after a retryable error.
	retries atomic.Uint64
	// count counts the baseline's statements and transactions.
	count stmtCounter

	// prepared holds the statements prepared on db, by text, for a shape
	// that prepares (they are prepared once per connection, lazily).
	mu       sync.Mutex
	prepared map[string]*sql.Stmt
}

// Bounds of the baseline's retries: Plenum's defaults (core.RetryPolicy),
// so that neither side wins by giving up sooner or waiting less.
const (
	baseMaxAttempts = 10
	baseRetryDelay  = 2 * time.Millisecond
	baseMaxDelay    = 250 * time.Millisecond
)

// Per-row cost of the baseline's INSERT: its bind parameters (id, queue,
// key, payload, barrier) and a bound on its bytes besides the payload, as
// Plenum's enqueue counts them for statement size limits.
const (
	baseArgsPerRow  = 5
	baseRowOverhead = 256
)

// baseLease is the lease the baseline's claims set, in microseconds: an
// hour, as Plenum's side asks for.
const baseLease = int64(time.Hour / time.Microsecond)

// newBaseline returns the baseline of shape on db; a zero shape is the
// dialect's best known one (bestShape).
func newBaseline(db *sql.DB, d dialect.Dialect, names migrations.Names, batch int, shape bareShape) *baseline {
	caps := d.Capabilities()
	now := d.Now(0)
	b := &baseline{
		db:       db,
		d:        d,
		names:    names,
		now:      now,
		later:    d.AddMicros(now),
		json:     d.Param(dialect.JSON),
		maxRows:  max(1, caps.MaxBindParams/baseArgsPerRow),
		maxBytes: caps.MaxStatementBytes,
		prepared: map[string]*sql.Stmt{},
	}
	if shape.sql == nil {
		shape = bestShape(b)
	}
	b.shape = shape
	// The completion binds an id per item, next to the token and the
	// result.
	b.batch = min(batch, inListMax(caps, 3))
	if caps.SingleWriter {
		b.writer = new(sync.Mutex)
	}
	return b
}

// close releases the statements the baseline prepared.
func (b *baseline) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, st := range b.prepared {
		st.Close()
	}
	b.prepared = map[string]*sql.Stmt{}
}

// inListMax is the most values an IN list may carry next to extra other
// bind parameters.
func inListMax(caps dialect.Capabilities, extra int) int {
	n := caps.MaxBindParams - extra
	if caps.MaxInList > 0 {
		n = min(n, caps.MaxInList)
	}
	return max(1, n)
}

// baseBarrier is the baseline's fan-in: a counter row and its children.
type baseBarrier struct {
	id    uuid.UUID
	fired atomic.Int64
}

// bareTx runs the baseline's statements in one transaction, counting
// them, and, for a shape that prepares, through statements prepared once
// per connection.
type bareTx struct {
	q dialect.Querier
	c *stmtCounter
	// stmt, when set, returns text prepared for this transaction.
	stmt func(ctx context.Context, text string) (*sql.Stmt, error)
}

func (t bareTx) exec(ctx context.Context, text string, args ...any) (sql.Result, error) {
	t.c.ran(text)
	if t.stmt != nil {
		st, err := t.stmt(ctx, text)
		if err != nil {
			return nil, err
		}
		return st.ExecContext(ctx, args...)
	}
	return t.q.ExecContext(ctx, text, args...)
}

func (t bareTx) query(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	t.c.ran(text)
	if t.stmt != nil {
		st, err := t.stmt(ctx, text)
		if err != nil {
			return nil, err
		}
		return st.QueryContext(ctx, args...)
	}
	return t.q.QueryContext(ctx, text, args...)
}

// bareSession is one worker's way into the database: the dialect's Begin
// on the pool, or, for a shape with its own BEGIN, one connection the
// worker keeps, with its statements prepared on it.
type bareSession struct {
	b     *baseline
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

func (b *baseline) session(ctx context.Context) (*bareSession, error) {
	s := &bareSession{b: b}
	if b.shape.begin != "" {
		conn, err := b.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		s.conn, s.stmts = conn, map[string]*sql.Stmt{}
	}
	return s, nil
}

func (s *bareSession) close() {
	for _, st := range s.stmts {
		st.Close()
	}
	if s.conn != nil {
		s.conn.Close()
	}
}

// tx runs f in a write transaction, and runs it again, after a jittered
// backoff, when it fails with an error the dialect calls Retryable: a
// serialization failure, a deadlock victim, a busy database. Bare SQL on
// such a database has to do the same. f must start from scratch on each
// call.
func (s *bareSession) tx(ctx context.Context, f func(bareTx) error) error {
	b := s.b
	for attempt := 1; ; attempt++ {
		err := s.try(ctx, f)
		if err == nil || b.d.Classify(err) != dialect.Retryable || attempt >= baseMaxAttempts || ctx.Err() != nil {
			return err
		}
		b.retries.Add(1)
		delay := min(baseRetryDelay<<(attempt-1), baseMaxDelay)
		t := time.NewTimer(time.Duration(mrand.Int64N(int64(delay) + 1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// try runs f in one transaction, rolled back if f fails. The writer mutex,
// where there is one, is held for the transaction only, not for a retry's
// backoff.
func (s *bareSession) try(ctx context.Context, f func(bareTx) error) error {
	b := s.b
	if b.writer != nil {
		b.writer.Lock()
		defer b.writer.Unlock()
	}
	b.count.txs.Add(1)
	if b.shape.oneStatement {
		// f runs one statement, its own transaction.
		return f(bareTx{q: b.db, c: &b.count})
	}
	if s.conn != nil {
		return s.tryOnConn(ctx, f)
	}
	tx, err := b.d.Begin(ctx, b.db, dialect.TxOptions{})
	if err != nil {
		return err
	}
	btx := bareTx{q: tx, c: &b.count}
	if sqlTx, ok := tx.(*sql.Tx); ok && b.shape.prepared {
		btx.stmt = func(ctx context.Context, text string) (*sql.Stmt, error) {
			st, err := b.prepare(ctx, text)
			if err != nil {
				return nil, err
			}
			// Reuses the statement where it was already prepared on the
			// transaction's connection.
			return sqlTx.StmtContext(ctx, st), nil
		}
	}
	if err := f(btx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// tryOnConn runs f in one transaction on the session's own connection,
// begun with the shape's BEGIN, its statements prepared on the connection.
func (s *bareSession) tryOnConn(ctx context.Context, f func(bareTx) error) error {
	if _, err := s.conn.ExecContext(ctx, s.b.shape.begin); err != nil {
		return err
	}
	btx := bareTx{q: s.conn, c: &s.b.count, stmt: func(ctx context.Context, text string) (*sql.Stmt, error) {
		if st, ok := s.stmts[text]; ok {
			return st, nil
		}
		st, err := s.conn.PrepareContext(ctx, text)
		if err != nil {
			return nil, err
		}
		s.stmts[text] = st
		return st, nil
	}}
	if err := f(btx); err != nil {
		_, _ = s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := s.conn.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}

// prepare returns text prepared on the baseline's database.
func (b *baseline) prepare(ctx context.Context, text string) (*sql.Stmt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.prepared[text]; ok {
		return st, nil
	}
	st, err := b.db.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	b.prepared[text] = st
	return st, nil
}

// enqueue inserts n items into queue, benchChunk per transaction, in
// multi-row INSERTs as large as the dialect's limits allow; with a barrier
// other than uuid.Nil, as its children, each with an idempotency key of
// its own (the barrier's id and its index), inserted with the database's
// insert-or-ignore (insertIgnore), as a fan-out that may run again after
// a crash must be: the same uniqueness as Plenum's children.
func (b *baseline) enqueue(ctx context.Context, queue string, n int, barrier uuid.UUID) error {
	key, head, tail := "NULL", "INSERT INTO ", ""
	var bar any // NULL unless the items are a barrier's children
	keyed := false
	if barrier != uuid.Nil {
		bar = b.d.UUID(barrier)
		head, tail, keyed = insertIgnore(b.d.Name())
	}
	perRow := baseArgsPerRow - 1
	if keyed {
		key, perRow = "?", baseArgsPerRow
	}
	row := "(?, ?, 'bench', " + key + ", " + b.json + ", 0, 'available', " + b.now + ", 0, 20, 0, ?, " + b.now + ")"
	head += b.names.Items + " (id, queue, kind, unique_key, payload, priority, state, available_at, attempt, max_attempts, crash_count, barrier_id, created_at) VALUES "
	type stmt struct {
		text string
		args []any
	}
	s := &bareSession{b: b}
	var stmts []stmt
	for i := 0; i < n; i += benchChunk {
		// Statements are built before the transaction begins, so that a
		// retry runs the same ones and a single-writer database is not held
		// while they are.
		stmts = stmts[:0]
		var (
			q     strings.Builder
			args  []any
			bytes int
		)
		flush := func() {
			stmts = append(stmts, stmt{b.d.Rebind(q.String() + tail), args})
			q.Reset()
			args, bytes = nil, 0
		}
		for j := i; j < min(i+benchChunk, n); j++ {
			payload := fmt.Appendf(nil, `{"n":%d}`, j)
			size := len(row) + len(queue) + len(payload) + baseRowOverhead
			rows := len(args) / perRow
			if rows == b.maxRows || (b.maxBytes > 0 && rows > 0 && len(head)+bytes+size > b.maxBytes) {
				flush()
				rows = 0
			}
			if rows == 0 {
				q.WriteString(head)
			} else {
				q.WriteString(", ")
			}
			q.WriteString(row)
			bytes += size
			args = append(args, b.d.UUID(uuid.Must(uuid.NewV7())), queue)
			if keyed {
				args = append(args, fmt.Sprintf("%s/%d", barrier, j))
			}
			args = append(args, b.d.JSON(payload), bar)
		}
		flush()
		err := s.tx(ctx, func(tx bareTx) error {
			for _, s := range stmts {
				if _, err := tx.exec(ctx, s.text, s.args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// insertIgnore is the start and the end of a multi-row INSERT that skips
// the rows whose unique key exists, as written by hand on each database:
// ON CONFLICT DO NOTHING where the database has it, INSERT IGNORE on
// MySQL and MariaDB; ok is false on a database without either (Oracle),
// whose children then go without keys.
func insertIgnore(database string) (head, tail string, ok bool) {
	switch database {
	case "mysql":
		return "INSERT IGNORE INTO ", "", true
	case "postgres", "sqlite", "cockroach":
		return "INSERT INTO ", " ON CONFLICT DO NOTHING", true
	}
	return "INSERT INTO ", "", false
}

// fanOut creates a sealed counter row expecting n children, and the
// children.
func (b *baseline) fanOut(ctx context.Context, queue string, n int) (*baseBarrier, error) {
	bb := &baseBarrier{id: uuid.Must(uuid.NewV7())}
	owner := uuid.Must(uuid.NewV7())
	insert := b.d.Rebind("INSERT INTO " + b.names.Barriers + " (id, owner_id, name, expected, arrived, failed, sealed, join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at) " +
		"VALUES (?, ?, 'bench', ?, 0, 0, ?, ?, 'join', 0, 20, 'join', " + b.now + ")")
	s := &bareSession{b: b}
	err := s.tx(ctx, func(tx bareTx) error {
		_, err := tx.exec(ctx, insert, b.d.UUID(bb.id), b.d.UUID(owner), int64(n), b.d.Bool(true), queue+".join")
		return err
	})
	if err != nil {
		return nil, err
	}
	return bb, b.enqueue(ctx, queue, n, bb.id)
}

// bareItem is what the baseline's claim returns of an item that the
// bench goes on to use: its id and the barrier it reports to.
type bareItem struct {
	id      uuid.UUID
	barrier uuid.NullUUID
}

// bareClaim is one claim the baseline makes.
type bareClaim struct {
	queue         string
	limit         int
	token, worker uuid.UUID
}

// errBareLost says a completion matched fewer rows than it was given:
// with no reaper running, a defect of the baseline's SQL.
var errBareLost = errors.New("the baseline's completion lost claims with no reaper running")

// drain claims and completes everything in queue with n workers, each
// batch in two transactions (claim, complete), as Plenum's side does; the
// children of a barrier add their batch's count to it with one update per
// barrier per batch, in the completion's transaction, and the barrier
// fires when the count is complete. Rows are locked in a fixed order:
// items, then barriers by id.
func (b *baseline) drain(ctx context.Context, queue string, n int, bb *baseBarrier) error {
	arrive := b.d.Rebind("UPDATE " + b.names.Barriers + " SET arrived = arrived + ? WHERE id = ?")
	// fired_at IS NULL makes a matching update always change a value, so
	// its row count is the same on databases that count changed rows
	// (MySQL) as on those that count matched ones.
	fire := b.d.Rebind("UPDATE " + b.names.Barriers + " SET fired_at = " + b.now +
		" WHERE id = ? AND fired_at IS NULL AND sealed = ? AND arrived + failed = expected")
	sealed := b.d.Bool(true)
	arriver, oneArrival := b.shape.sql.(bareArriver)
	if b.shape.oneStatement && bb != nil && !oneArrival {
		return fmt.Errorf("shape %q runs without transactions and cannot count a fan-in in one statement", b.shape.name)
	}
	return fanWorkers(ctx, n, func(ctx context.Context) error {
		s, err := b.session(ctx)
		if err != nil {
			return err
		}
		defer s.close()
		worker := uuid.Must(uuid.NewV7())
		ids := make([]uuid.UUID, 0, b.batch)
		for {
			c := bareClaim{queue: queue, limit: b.batch, token: uuid.Must(uuid.NewV7()), worker: worker}
			var items []bareItem
			err := s.tx(ctx, func(tx bareTx) error {
				var err error
				items, err = b.shape.sql.claim(ctx, b, tx, c)
				return err
			})
			if err != nil || len(items) == 0 {
				return err
			}
			ids = ids[:0]
			arrivals := map[uuid.UUID]int64{}
			for _, it := range items {
				ids = append(ids, it.id)
				if it.barrier.Valid {
					arrivals[it.barrier.UUID]++
				}
			}
			barriers := make([]uuid.UUID, 0, len(arrivals))
			for id := range arrivals {
				barriers = append(barriers, id)
			}
			slices.SortFunc(barriers, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			fired := 0
			err = s.tx(ctx, func(tx bareTx) error {
				fired = 0
				if b.shape.oneStatement && len(barriers) > 0 {
					done, f, err := arriver.completeArrive(ctx, b, tx, ids, c.token)
					if err != nil {
						return err
					}
					if done != int64(len(ids)) {
						return fmt.Errorf("%w: %d of %d", errBareLost, done, len(ids))
					}
					fired = int(f)
					return nil
				}
				done, err := b.shape.sql.complete(ctx, b, tx, ids, c.token)
				if err != nil {
					return err
				}
				if done != int64(len(ids)) {
					return fmt.Errorf("%w: %d of %d", errBareLost, done, len(ids))
				}
				for _, id := range barriers {
					if _, err := tx.exec(ctx, arrive, arrivals[id], b.d.UUID(id)); err != nil {
						return err
					}
					res, err := tx.exec(ctx, fire, b.d.UUID(id), sealed)
					if err != nil {
						return err
					}
					if n, err := res.RowsAffected(); err != nil {
						return err
					} else if n == 1 {
						fired++
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			// Counted once committed: a transaction run again must not
			// count twice.
			if bb != nil {
				bb.fired.Add(int64(fired))
			}
		}
	})
}
