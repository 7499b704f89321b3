package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// Store is Plenum's storage layer on one database: claims, fences, owners,
// the reaper and fan-in barriers. It is safe for concurrent use by any number
// of goroutines, and any number of stores in any number of processes may
// share the same tables.
type Store struct {
	db    *sql.DB
	d     dialect.Dialect
	caps  dialect.Capabilities
	opts  Options
	log   *slog.Logger
	names migrations.Names
	// seek is the index that serves the claim, for ClaimSpec.Seek.
	seek *dialect.Index
	// lister binds a batch's ids as one parameter, where the dialect can.
	lister dialect.UUIDLister
	// keys reads the first items of several lanes in one query whose
	// text does not grow with them, where the dialect can (lanefuse.go).
	keys dialect.KeyLister
	// locker locks the lanes a claim takes without writing them, where
	// the dialect can (laneclaim.go).
	locker dialect.RowLocker
	// purger deletes a retention batch in one statement, where the
	// dialect can.
	purger dialect.Purger

	expand *strings.Replacer
	// claimFilter and claimSet are the claim's condition and assignments,
	// expanded once.
	claimFilter, claimSet string
	// keyLocks reads several keys' first rows locking them, where the
	// dialect can.
	keyLocks dialect.KeyLockLister
	// nextKeysSQL is qNextKeys for the dialect, built once.
	nextKeysSQL string
	cache       sync.Map // raw statement -> rebound statement
	// inserts holds item INSERTs by row shape and size (insertSQL): the
	// full size, and the first few other sizes met (a fan-out's page),
	// insertSizes counting those.
	inserts sync.Map
	// lanesSeen holds the queues in which this store has claimed from
	// lanes, each with its *laneHint: their claims take lanes first
	// (claim.go).
	lanesSeen   sync.Map
	insertSizes atomic.Int32

	retries      atomic.Uint64
	exhausted    atomic.Uint64
	mostAttempts atomic.Int64

	// hub routes wake-ups to subscriptions (wake.go); notifier is the
	// dialect's, unless Options.DisableNotify, and channel the name it
	// notifies on.
	hub      wakeHub
	notifier dialect.Notifier
	channel  string
	listens  atomic.Uint64

	// skipsLocked is set once ProveSkipLocked has succeeded.
	skipsLocked atomic.Bool
	// ownsDB is set on a store OpenDSN opened: Close closes db.
	ownsDB bool
	// handle is what the store's keyset reads, and the packages beside
	// core that read its tables, go through (internal/storesql).
	handle *storesql.Handle
	// claims records what the dialect's Claim sends: set on the statement
	// catalog's stand-in store only (templates.go).
	claims storesql.ClaimRecorder
}

// Open returns a Store on db, which must be a database of dialect d (a
// *sqlx.DB's embedded *sql.DB works as well). It checks that the connection
// works and has the settings the dialect depends on, applies migrations when
// opts.Migrate is set, and refuses a schema older than this build needs.
func Open(ctx context.Context, db *sql.DB, d dialect.Dialect, opts Options) (*Store, error) {
	if db == nil {
		return nil, invalid("db", "nil *sql.DB")
	}
	if d == nil {
		return nil, invalid("dialect", "nil dialect: pass one, e.g. sqlite.Dialect()")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Retry.MaxAttempts <= 0 {
		opts.Retry.MaxAttempts = d.Capabilities().RetryAttempts
	}
	opts = opts.withDefaults()
	if err := migrations.ValidatePrefix(opts.Prefix); err != nil {
		return nil, &InputError{Field: "Prefix", Reason: err.Error()}
	}
	if err := db.PingContext(ctx); err != nil {
		return nil, wrapDBError("open", err)
	}
	if err := checkConnection(ctx, db, d, opts.Retry); err != nil {
		return nil, err
	}
	if opts.Migrate {
		if _, err := migrations.Apply(ctx, db, d, opts.Prefix); err != nil {
			return nil, fmt.Errorf("plenum: migrate: %w", err)
		}
	}

	s := &Store{db: db, d: d, caps: d.Capabilities(), opts: opts, log: opts.Logger, names: migrations.NamesFor(opts.Prefix)}
	if err := fault.Hit(ctx, fault.OpenBeforeVersion); err != nil {
		return nil, err
	}
	// A read like any other: retried on a transient error or a lost
	// connection (a pool's idle connection the server has ended).
	var v int
	if err := s.read(ctx, "read schema version", func() (err error) {
		v, err = migrations.Version(ctx, db, d, opts.Prefix)
		return err
	}); err != nil {
		return nil, err
	}
	if v == 0 {
		return nil, &noTablesError{prefix: opts.Prefix, dialect: d.Name()}
	}
	if v < migrations.LatestVersion {
		return nil, fmt.Errorf("%w: tables %q* are at version %d, this build needs %d: migrate them with core.Options{Migrate: true}, \"plenum migrate up --dialect %s --dsn DSN --prefix %s\", or migrations.Apply",
			ErrSchemaOutdated, opts.Prefix, v, migrations.LatestVersion, d.Name(), opts.Prefix)
	}

	s.seek = migrations.ClaimIndex(opts.Prefix)
	s.lister, _ = dialect.As[dialect.UUIDLister](d)
	s.keys, _ = dialect.As[dialect.KeyLister](d)
	s.keyLocks, _ = dialect.As[dialect.KeyLockLister](d)
	s.locker, _ = dialect.As[dialect.RowLocker](d)
	s.purger, _ = dialect.As[dialect.Purger](d)
	s.expand = strings.NewReplacer(expansions(d, s.names, opts.ClockOffset)...)
	s.claimFilter, s.claimSet = s.expand.Replace(claimFilter), s.expand.Replace(claimSet)
	s.nextKeysSQL = qNextKeys(s.d)
	s.handle = &storesql.Handle{DB: db, Dialect: d, SQL: s.sql, Read: s.read}
	if n, ok := d.(dialect.Notifier); ok && !opts.DisableNotify {
		// One channel per set of tables: stores on other prefixes are not
		// woken by these items.
		s.notifier, s.channel = n, s.names.Items
	}
	return s, nil
}

// checkAttempts bounds how many times Open runs the dialect's Check when it
// fails with a transient database error: enough to ride out a blip, not an
// outage.
const checkAttempts = 3

// checkConnection runs the dialect's Check. A refusal is a *SettingError
// (ErrMisconfigured); a database error on the way (a connection lost, a
// deadlock: what the dialect classifies as transient) is tried again a few
// times and then returned as the database error it is; a closed database
// is ErrClosed.
func checkConnection(ctx context.Context, db *sql.DB, d dialect.Dialect, retry RetryPolicy) error {
	for attempt := 1; ; attempt++ {
		err := d.Check(ctx, db)
		switch {
		case err == nil:
			return nil
		case isClosed(err):
			return wrapDBError("open", err)
		case ctx.Err() != nil:
			return fmt.Errorf("plenum: open: checking the %s connection: %w (%w)", d.Name(), ctx.Err(), err)
		}
		class := d.Classify(err)
		if class != dialect.Retryable && class != dialect.ConnectionLost {
			return &SettingError{Dialect: d.Name(), Err: err}
		}
		if attempt >= min(checkAttempts, retry.MaxAttempts) {
			return fmt.Errorf("plenum: open: checking the %s connection failed (%s database error, %d attempts): %w", d.Name(), class, attempt, err)
		}
		t := time.NewTimer(retry.delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("plenum: open: checking the %s connection: %w (%w)", d.Name(), ctx.Err(), err)
		case <-t.C:
		}
	}
}

// DB returns the database handle the store works on.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the store's dialect.
func (s *Store) Dialect() dialect.Dialect { return s.d }

// Prefix returns the table prefix.
func (s *Store) Prefix() string { return s.opts.Prefix }

// Stats are counters of what the store has done since it was opened.
type Stats struct {
	// Retries counts transactions run again after a transient error.
	Retries uint64
	// Exhausted counts transactions that still failed with a transient
	// error on the last attempt Options.Retry allowed. If it grows, the
	// budget is too small for the contention the store meets.
	Exhausted uint64
	// MostAttempts is the most attempts one transaction has taken, whether
	// it succeeded or not: how close the store came to its retry budget.
	MostAttempts int
	// Listens counts the times the store's listener for wake-ups from
	// other processes began listening: once per Subscribe after none was
	// open, plus once per reconnection (see Subscribe). Always 0 where
	// the dialect is no dialect.Notifier or Options.DisableNotify is set.
	Listens uint64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Retries: s.retries.Load(), Exhausted: s.exhausted.Load(), MostAttempts: int(s.mostAttempts.Load()), Listens: s.listens.Load()}
}

// noteAttempts raises the high-water mark of attempts to n.
func (s *Store) noteAttempts(n int) {
	for {
		old := s.mostAttempts.Load()
		if int64(n) <= old || s.mostAttempts.CompareAndSwap(old, int64(n)) {
			return
		}
	}
}

// Now returns the database clock, the only clock that gates anything in
// Plenum (shifted by Options.ClockOffset, if set).
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	v := timeValue{d: s.d}
	err := s.read(ctx, "now", func() error {
		return s.db.QueryRowContext(ctx, s.sql(s.nowSQL())).Scan(&v)
	})
	if err != nil {
		return time.Time{}, err
	}
	return v.t, nil
}

// maxCachedStatement bounds the statements sql remembers: long ones carry
// IN lists whose length varies from call to call, and remembering every
// length would grow without bound.
const maxCachedStatement = 2048

// sql expands the table and clock placeholders of a statement written with
// '?' and rebinds it to the dialect's style, once per distinct text.
func (s *Store) sql(raw string) string {
	if len(raw) > maxCachedStatement {
		return s.d.Rebind(s.expand.Replace(raw))
	}
	if q, ok := s.cache.Load(raw); ok {
		return q.(string)
	}
	q := s.d.Rebind(s.expand.Replace(raw))
	s.cache.Store(raw, q)
	return q
}

// micros converts a duration to the microseconds bound for {now+?}.
func micros(d time.Duration) int64 { return d.Microseconds() }

// inTx runs fn in a transaction begun by the dialect, and runs it again from
// the start, after a jittered backoff, when it fails with a transient error.
// A connection lost while committing gives ErrCommitUnknown.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx dialect.Tx) error) error {
	return s.inTxWith(ctx, op, dialect.TxOptions{}, fn)
}

// inTxWith is inTx with the options the dialect begins the transaction
// with.
func (s *Store) inTxWith(ctx context.Context, op string, opts dialect.TxOptions, fn func(tx dialect.Tx) error) error {
	if err := s.insideFence(ctx, op); err != nil {
		return err
	}
	return s.retry(ctx, op, func() error { return s.tryTx(ctx, opts, fn) })
}

// read runs fn, a read outside any transaction, and runs it again after a
// jittered backoff when it fails with a transient error: a serializable
// database (CockroachDB, or PostgreSQL at SERIALIZABLE) may abort a plain
// read as well. fn must set its results afresh on every call.
func (s *Store) read(ctx context.Context, op string, fn func() error) error {
	return s.retry(ctx, op, fn)
}

// retry runs try until it succeeds, fails with an error that is not
// transient, or uses the store's retry budget: MaxAttempts tries, and no
// try after a lost connection once MaxLostFor has passed.
func (s *Store) retry(ctx context.Context, op string, try func() error) error {
	began := time.Now()
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			s.noteAttempts(attempt)
			return nil
		}
		if errors.Is(err, ErrCommitUnknown) || !s.transient(err) || ctx.Err() != nil {
			s.noteAttempts(attempt)
			return wrapDBError(op, err)
		}
		lostTooLong := s.d.Classify(err) == dialect.ConnectionLost && time.Since(began) >= s.opts.Retry.MaxLostFor
		if attempt >= s.opts.Retry.MaxAttempts || lostTooLong {
			s.noteAttempts(attempt)
			s.exhausted.Add(1)
			s.log.WarnContext(ctx, "plenum: transaction used its retry budget", "op", op, "attempts", attempt, "err", err)
			return wrapDBError(op, err)
		}
		s.retries.Add(1)
		s.log.DebugContext(ctx, "plenum: retrying transaction", "op", op, "attempt", attempt, "err", err)
		t := time.NewTimer(s.opts.Retry.delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return wrapDBError(op, ctx.Err())
		case <-t.C:
		}
	}
}

func (s *Store) tryTx(ctx context.Context, opts dialect.TxOptions, fn func(tx dialect.Tx) error) (err error) {
	raw, err := s.d.Begin(ctx, s.db, opts)
	if err != nil {
		return err
	}
	tx := &storeTx{Tx: raw}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
		if p := recover(); p != nil {
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		if s.d.Classify(err) == dialect.ConnectionLost {
			// It may have committed: a wake-up too many costs a claim.
			s.hub.wake(tx.queues)
			return fmt.Errorf("%w: %v", ErrCommitUnknown, err)
		}
		return err
	}
	s.hub.wake(tx.queues)
	reportCommitted(ctx, tx)
	return nil
}

// transient reports whether err, from anywhere inside a transaction, means
// the transaction was rolled back and may run again.
func (s *Store) transient(err error) bool {
	switch s.d.Classify(err) {
	case dialect.Retryable, dialect.ConnectionLost:
		return true
	}
	return false
}

// wrapDBError adds the operation to err and maps a closed database to
// ErrClosed. Plenum's own sentinels pass through with the operation added.
func wrapDBError(op string, err error) error {
	if err == nil {
		return nil
	}
	if isClosed(err) {
		return fmt.Errorf("plenum: %s: %w (%v)", op, ErrClosed, err)
	}
	if strings.HasPrefix(err.Error(), "plenum: ") {
		return err
	}
	return fmt.Errorf("plenum: %s: %w", op, err)
}

// isClosed reports whether err says the *sql.DB was closed. database/sql
// does not export that error, so its text is matched.
func isClosed(err error) bool {
	return errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "sql: database is closed")
}
