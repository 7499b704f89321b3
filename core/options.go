package core

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"time"
)

// Options configure a Store. The zero value of every field means its
// documented default.
type Options struct {
	// Prefix is put before every table name. Default "plenum_". It must be
	// a safe identifier: see migrations.ValidatePrefix.
	Prefix string

	// Logger receives the store's few log lines (retries, reaps). Default:
	// discard.
	Logger *slog.Logger

	// Retry bounds how transactions that fail with a transient error
	// (serialization failure, deadlock, lock timeout, SQLITE_BUSY) are run
	// again.
	Retry RetryPolicy

	// MaxPayloadBytes bounds every payload and result. Default 1 MiB
	// (DefaultMaxPayloadBytes); the hard ceiling is 64 MiB. Negative is
	// refused at Open.
	MaxPayloadBytes int

	// DefaultMaxAttempts applies to items enqueued without MaxAttempts.
	// Default 20; at most MaxAttemptsCeiling. Negative is refused at Open.
	DefaultMaxAttempts int

	// Backoff computes the delay before a failed attempt runs again, from
	// the attempt number (1 for the first). The delay is added to the
	// database clock; a delay outside [0, MaxDelay] is taken as the nearer
	// bound. Default: exponential from 1 s, doubling, capped at 1 h, with
	// ±25% jitter.
	Backoff func(attempt int) time.Duration

	// Migrate applies pending schema migrations at Open (migrations.Apply),
	// under a lock so that processes starting together cannot collide. Where
	// the dialect takes that lock on a connection of its own (every dialect
	// but SQLite), the pool must allow two open connections. Then it proves
	// that the claim skips the rows another session holds, and Open fails
	// with a *dialect.SkipLockedError where it does not (see
	// Store.ProveSkipLocked).
	Migrate bool

	// DisableNotify turns off the dialect's notifications across processes
	// (dialect.Notifier: PostgreSQL's NOTIFY and LISTEN) for this store:
	// its transactions send none, and Subscribe listens for none, so items
	// from other processes are found by polling alone. Wake-ups within
	// the process (Subscribe, Wake) work as ever. Set it behind a pooler
	// in transaction mode (PgBouncer's pool_mode=transaction), where LISTEN
	// does not work, or when enqueues are so frequent that the cost of
	// notifying matters: PostgreSQL serializes the commits of
	// transactions that sent a notification. Default false.
	DisableNotify bool

	// OnEnqueue, when set, is called for every item the store inserts,
	// with the inserting call's context, and may add metadata entries to
	// it (see EnqueueHook): the seam through which tracing carries the
	// enqueuer's trace context to the handler. It is an option of the
	// store, not of a context (as WithTrace is), because it must see the
	// enqueues of every caller, the runtime's and pipelines' included,
	// without each one marking its context. Default: none.
	OnEnqueue EnqueueHook

	// ClockOffset shifts the database clock expression the store uses. It
	// exists so that tests can move time forward on the database side
	// (leases expire, heartbeats go stale) without touching any host's
	// clock. Leave it zero in production.
	ClockOffset time.Duration
}

// RetryPolicy bounds the retries of transient errors.
type RetryPolicy struct {
	// MaxAttempts is the number of times a transaction is tried in all.
	// Default: the dialect's Capabilities.RetryAttempts, else 10.
	MaxAttempts int
	// BaseDelay is the backoff before the second try; it doubles after
	// each, with full jitter. Default 2 ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. Default 250 ms.
	MaxDelay time.Duration
	// MaxLostFor bounds the retries of a lost connection (ErrorClass
	// ConnectionLost) in time: no new try starts once this long has
	// passed since the first began. A server restarting answers again
	// within it; a server cut off by the network fails each try only
	// after the dialect's bound on a half-open connection (20 s on
	// PostgreSQL and MySQL), and MaxAttempts such tries would hold the
	// caller for minutes. Default 5 s.
	MaxLostFor time.Duration
}

// Defaults and limits.
const (
	DefaultPrefix          = "plenum_"
	DefaultMaxPayloadBytes = 1 << 20
	MaxPayloadCeiling      = 64 << 20
	DefaultMaxAttempts     = 20
	DefaultMaxCrashes      = 3

	// MinLease is the shortest lease a claim or an extension (Extend,
	// ExtendMany) may ask for; a heartbeat moves no lease, it only keeps
	// its owner alive. It is far above every dialect's clock resolution.
	// A dialect whose nodes' clocks may disagree raises it
	// (Store.MinLease).
	MinLease = time.Second
	// MaxLease is the longest.
	MaxLease = 7 * 24 * time.Hour
	// MaxClaimLimit bounds how many items one claim may take.
	MaxClaimLimit = 10000
	// MaxDelay bounds the delay of an enqueued item or a retry.
	MaxDelay = 10 * 365 * 24 * time.Hour
	// MaxAttemptsCeiling bounds every MaxAttempts (items, children, joins,
	// Options.DefaultMaxAttempts) and ReapParams.MaxCrashes: the attempt
	// and crash counters are 32-bit signed columns on every database.
	MaxAttemptsCeiling = math.MaxInt32
	// MaxPriority bounds Priority both ways (±2^30), within the 32-bit
	// signed column every database gives it.
	MaxPriority = 1 << 30
)

// validate refuses options no database could honour, before defaults
// are applied (zero means the default; negative means nothing).
func (o Options) validate() error {
	switch {
	case o.MaxPayloadBytes < 0 || o.MaxPayloadBytes > MaxPayloadCeiling:
		return invalid("MaxPayloadBytes", "%d is outside [0, %d] (0 for the default)", o.MaxPayloadBytes, MaxPayloadCeiling)
	case o.DefaultMaxAttempts < 0 || o.DefaultMaxAttempts > MaxAttemptsCeiling:
		return invalid("DefaultMaxAttempts", "%d is outside [0, %d] (0 for the default)", o.DefaultMaxAttempts, MaxAttemptsCeiling)
	case o.ClockOffset < -MaxDelay || o.ClockOffset > MaxDelay:
		return invalid("ClockOffset", "%v is outside ±%v", o.ClockOffset, MaxDelay)
	}
	return nil
}

// backoff is Options.Backoff kept within [0, MaxDelay]: the delay is
// bound as microseconds added to a database timestamp.
func (o Options) backoff(attempt int) time.Duration {
	return min(max(o.Backoff(attempt), 0), MaxDelay)
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Retry.MaxAttempts <= 0 {
		o.Retry.MaxAttempts = 10
	}
	if o.Retry.BaseDelay <= 0 {
		o.Retry.BaseDelay = 2 * time.Millisecond
	}
	if o.Retry.MaxDelay <= 0 {
		o.Retry.MaxDelay = 250 * time.Millisecond
	}
	if o.Retry.MaxLostFor <= 0 {
		o.Retry.MaxLostFor = 5 * time.Second
	}
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if o.DefaultMaxAttempts <= 0 {
		o.DefaultMaxAttempts = DefaultMaxAttempts
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	return o
}

// DefaultBackoff is exponential from one second, doubling per attempt,
// capped at one hour, with ±25% jitter so that items that failed together
// do not retry together.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := time.Hour
	if attempt <= 12 {
		d = min(time.Second<<(attempt-1), time.Hour)
	}
	jitter := time.Duration(rand.Int64N(int64(d/2)+1)) - d/4
	return d + jitter
}

func (p RetryPolicy) delay(attempt int) time.Duration {
	d := p.BaseDelay << min(attempt-1, 20)
	if d <= 0 || d > p.MaxDelay {
		d = p.MaxDelay
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}
