package worker

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Config configures a Worker. The zero value of every field but Queues
// means its documented default.
type Config struct {
	// Queues are the queues to claim from, each with its own concurrency
	// limit. Required: at least one.
	Queues map[string]QueueConfig

	// PollInterval is how often a queue that was found empty is asked
	// again (sooner when a wake-up comes, see PollOnly, and, for a queue
	// with flow keys, at their next turn: see core.Store.NextClaimSince),
	// and how often the worker checks whether the items its handlers run
	// on were cancelled (each handler from one interval after its claim
	// on: within two intervals of its start, within one after that).
	// Default DefaultPollInterval (1 s).
	PollInterval time.Duration

	// PollOnly makes the worker find new items by polling alone. By
	// default each queue's claim loop also wakes at once on the store's
	// wake-ups (core.Store.Subscribe): an enqueue through the same store
	// in this process and, where the dialect notifies (PostgreSQL),
	// enqueues from other processes. Wake-ups never replace polling: one
	// that is lost costs at most a poll interval. Default false.
	PollOnly bool

	// ProgressInterval is the least time between two writes of one
	// job's progress (Job.SetProgress): a handler may report as often as
	// it likes, and the worker writes the latest report at most once per
	// interval, and the last one before the item's outcome. Default
	// DefaultProgressInterval (1 s).
	ProgressInterval time.Duration

	// HeartbeatInterval is how often the worker tells the store it is
	// alive. Default DefaultHeartbeatInterval (5 s).
	HeartbeatInterval time.Duration

	// StaleAfter is how long an owner may go without a heartbeat before a
	// reaper counts it dead. It must be the same in every process sharing
	// the tables, and at least three heartbeat intervals: a worker whose
	// heartbeats fail for StaleAfter minus two intervals stops itself
	// first. Default DefaultStaleAfter (30 s).
	StaleAfter time.Duration

	// ReapInterval is how often this worker runs a reaper pass; negative
	// runs none (another process must). Any number of processes may reap
	// at once. Default DefaultReapInterval (10 s).
	ReapInterval time.Duration

	// RetainFor is how long finished items (completed, dead, cancelled)
	// and fired barriers are kept before the maintenance loop deletes them
	// (core.Store.Purge, which keeps whatever a barrier still needs);
	// negative keeps everything. It runs with the reaper, so not at all
	// when ReapInterval is negative. Default DefaultRetainFor (24 h).
	//
	// The items and barriers of a run that is halted or waiting are kept
	// whatever their age, and so are the dead items of a running run: a
	// halted run can be revived however long it has been halted. Once the
	// run completes or is cancelled, they go at the first pass that finds
	// them older than RetainFor (by when each finished, not when the run
	// did).
	RetainFor time.Duration

	// Periodic are schedules this worker enqueues the ticks of (interval
	// or cron; see core.ScheduleSpec), every PeriodicInterval. Any number
	// of processes may run the same schedules: each tick is enqueued once
	// (core.Store.EnqueueDue). A tick's item goes to its Item.Queue, which
	// any worker claiming that queue runs. Default: none.
	Periodic []PeriodicJob

	// StoredSchedules, when true, has the worker enqueue the ticks of the
	// schedules kept in the database (core.Store.SetSchedule, plenum
	// schedules, the dashboard) every PeriodicInterval as well
	// (core.Store.EnqueueStoredDue): a schedule set, changed, paused or
	// deleted while the worker runs takes effect at its next look. Any
	// number of processes may run them: each tick is enqueued once.
	// Default: false.
	StoredSchedules bool

	// PeriodicInterval is how often the worker looks for due ticks: a
	// tick's item is enqueued within about this long of its time. Default
	// DefaultPeriodicInterval (1 s).
	PeriodicInterval time.Duration

	// MaxCrashes dead-letters an item whose owners died this many times
	// while holding it (core.ReapParams.MaxCrashes). Default
	// DefaultMaxCrashes (3).
	MaxCrashes int

	// DefaultKind applies to kinds registered without a KindConfig, and
	// fills the zero fields of those registered with one. Its own zero
	// fields take KindConfig's defaults: a Timeout of DefaultTimeout
	// (60 s), the item's own MaxAttempts, the store's Backoff.
	DefaultKind KindConfig

	// DeadlineMargin is how long before a claim's lease ends its handler's
	// context is cancelled, so that the outcome is recorded while the
	// claim still holds. Default DefaultDeadlineMargin (1 s); at most a
	// quarter of a kind's Timeout, whatever it is set to.
	DeadlineMargin time.Duration

	// CompleteBatch bounds how many completions one CompleteMany carries.
	// Handlers' completions are batched as they come: a batch goes once
	// no other run is on its way to the completer outside its handler
	// (so that a claim of fast handlers completes in one statement), once
	// they stop arriving for a moment while the rest are in their
	// handlers, after 20 ms at most, or at once when full; while two
	// batches are being completed the next one keeps gathering, so that
	// under load the batches grow towards this bound and each item costs
	// a smaller share of a statement. Default DefaultCompleteBatch
	// (1,000).
	CompleteBatch int

	// Host names this process in the owners table. Default os.Hostname().
	Host string

	// Name labels the worker's owner (core.RegisterOwnerParams.Name), such as the
	// service it runs in, for people reading the owners: Store.Owners, the
	// dashboard, plenum inspect. Up to core.MaxOwnerNameLen characters of
	// valid UTF-8 without NUL bytes. Default: none.
	Name string

	// Logger receives the worker's log lines. Default: discard.
	Logger *slog.Logger

	// Hooks receive the worker's events. Default: none.
	Hooks Hooks

	// Middleware wraps every handler's call, the first outermost (see
	// Middleware). Default: none, and handlers are called directly.
	Middleware []Middleware
}

// PeriodicJob is a schedule whose ticks the worker enqueues: a name
// shared by every process that runs it, an interval (Every) or a cron
// expression (Cron, five fields, UTC), the item each tick enqueues (its
// key is core.TickKey(Name, tick)), and MaxCatchUp, how many missed ticks
// are enqueued after downtime (0 or 1: the latest only).
type PeriodicJob = core.ScheduleSpec

// QueueConfig configures one queue.
type QueueConfig struct {
	// MaxWorkers is how many of the queue's handlers run at once: the
	// worker claims, in one batch, as many items as it has free slots.
	// Required (no default): 1 to core.MaxClaimLimit.
	MaxWorkers int
}

// KindConfig configures the handling of one kind.
type KindConfig struct {
	// Timeout is the handler's deadline, counted from when its claim was
	// requested: its context ends DeadlineMargin before, and a result
	// after that is refused (a timeout: the attempt counts). So is a late
	// Job.Fence or Job.Settle, and any store call that writes with
	// Job.Claim, whatever context it is given: the database refuses it in
	// the write's own transaction, on its clock, once Timeout less
	// DeadlineMargin has passed since the claim, and nothing it would have
	// written commits. Store.Extend moves the claim's lease, not this
	// deadline. A claim takes
	// items of any kind, so its lease is the longest Timeout among the
	// worker's kinds (and DefaultKind's): a reaper times out a handler that
	// hangs in a live worker after that. Keep it above StaleAfter plus
	// HeartbeatInterval, or the claims of a worker that died could be
	// counted as timeouts rather than crashes (New and Handle refuse
	// less). Default: DefaultKind's, whose own default is DefaultTimeout
	// (60 s).
	Timeout time.Duration
	// MaxAttempts dead-letters the item after this many failed attempts,
	// or the item's own MaxAttempts where that is lower: the lower of the
	// two applies. Default: DefaultKind's, whose own default is none (the
	// item's own, core.ItemSpec.MaxAttempts, or the store's
	// core.Options.DefaultMaxAttempts when the enqueue left it 0). The
	// worker's claim stores the lower of the two on each item it takes
	// (core.ClaimParams.MaxAttempts), so that the item's MaxAttempts, which
	// Get, plenum inspect and the dashboard show, is the limit that applies
	// from its first claim on; an item no worker of this kind claimed yet
	// still shows the enqueue's. A worker where more kinds set it than one
	// claim carries (core.MaxClaimKinds) leaves the stored values the
	// enqueue's, and still dead-letters at this limit.
	MaxAttempts int
	// Backoff is the delay before a failed attempt runs again, from the
	// attempt number (1 for the first), added to the database clock.
	// The first that is set applies: this kind's, then DefaultKind's, then
	// the store's (core.Options.Backoff, whose default is
	// core.DefaultBackoff). The delay is when the item becomes claimable,
	// not when it runs: no wake-up is sent for a delayed item, so it runs
	// at the first poll after it (Config.PollInterval, 1 s by default):
	// between the delay and the delay plus PollInterval after the failure,
	// 500 ms to 1.5 s for a delay of 500 ms.
	Backoff func(attempt int) time.Duration
	// ForItem, when set, tunes the run of each claimed item of the kind,
	// from the item as claimed (its payload, say): the fields of the
	// ItemConfig it returns that are set replace the kind's for that run.
	// It is called in the claim loop, once per claimed item, so it must be
	// quick. Default: none.
	ForItem func(item core.Item) ItemConfig
	// Codec, when set, opens the kind's payloads before they are decoded
	// into the handler's args, and seals the results the handler sets
	// (Job.SetResult), bound to the kind's name (PayloadAAD, ResultAAD).
	// A *seal.Keyring is one. A payload that does not open (not sealed,
	// sealed with a key id the codec does not hold, tampered with, or
	// sealed for another kind) dead-letters its item at once with the
	// codec's error, as a payload that does not decode does: retrying
	// cannot open it, and once the missing key is back in the ring the
	// item can be revived (core.Store.Revive). ForItem and middleware
	// see the payload as stored, sealed. Kind.Handle sets it from the
	// kind's KindOptions.Codec when it is nil here. DefaultKind's is not
	// used: a kind is sealed only where it says so, since one worker
	// handles kinds of several engines (a pipeline seals its own items'
	// data, through pipeline.EngineOptions.Codec). Default: none, the
	// payloads and results are stored as they are; a payload that is
	// sealed all the same (seal.Inspect) dead-letters its item at once,
	// rather than be decoded as the args.
	Codec Codec
}

// ItemConfig tunes the run of one item (KindConfig.ForItem). Zero fields
// keep the kind's.
type ItemConfig struct {
	// Timeout, above zero, is the item's deadline in place of the kind's
	// Timeout, and means what that does, on the database clock too. The
	// kind's Timeout caps it: the claim's lease is set from the kinds'
	// Timeouts, so a kind whose items may take longer must say so there.
	Timeout time.Duration
	// Backoff, when set, is the delay before a failed attempt of the item
	// runs again (after a timeout too) in place of the kind's Backoff.
	Backoff func(attempt int) time.Duration
}

// The defaults of Config's and KindConfig's zero fields.
const (
	// DefaultPollInterval is Config.PollInterval's default.
	DefaultPollInterval = time.Second
	// DefaultProgressInterval is Config.ProgressInterval's default.
	DefaultProgressInterval = time.Second
	// DefaultHeartbeatInterval is Config.HeartbeatInterval's default.
	DefaultHeartbeatInterval = 5 * time.Second
	// DefaultStaleAfter is Config.StaleAfter's default.
	DefaultStaleAfter = 30 * time.Second
	// DefaultReapInterval is Config.ReapInterval's default.
	DefaultReapInterval = 10 * time.Second
	// DefaultRetainFor is Config.RetainFor's default.
	DefaultRetainFor = 24 * time.Hour
	// DefaultPeriodicInterval is Config.PeriodicInterval's default.
	DefaultPeriodicInterval = time.Second
	// DefaultMaxCrashes is Config.MaxCrashes's default, the store's
	// (core.DefaultMaxCrashes).
	DefaultMaxCrashes = core.DefaultMaxCrashes
	// DefaultDeadlineMargin is Config.DeadlineMargin's default.
	DefaultDeadlineMargin = time.Second
	// DefaultCompleteBatch is Config.CompleteBatch's default.
	DefaultCompleteBatch = 1000
	// DefaultTimeout is the default of Config.DefaultKind.Timeout, and so
	// of every kind's KindConfig.Timeout.
	DefaultTimeout = 60 * time.Second
)

// withDefaults returns c with its zero fields, DefaultKind's included,
// set to their defaults; the kinds registered take theirs from
// DefaultKind (kindConfig).
func (c Config) withDefaults() Config {
	c.PollInterval = cmp.Or(c.PollInterval, DefaultPollInterval)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.ProgressInterval = cmp.Or(c.ProgressInterval, DefaultProgressInterval)
	c.StaleAfter = cmp.Or(c.StaleAfter, DefaultStaleAfter)
	c.ReapInterval = cmp.Or(c.ReapInterval, DefaultReapInterval)
	c.RetainFor = cmp.Or(c.RetainFor, DefaultRetainFor)
	c.PeriodicInterval = cmp.Or(c.PeriodicInterval, DefaultPeriodicInterval)
	c.MaxCrashes = cmp.Or(c.MaxCrashes, DefaultMaxCrashes)
	c.DeadlineMargin = cmp.Or(c.DeadlineMargin, DefaultDeadlineMargin)
	c.CompleteBatch = cmp.Or(c.CompleteBatch, DefaultCompleteBatch)
	c.DefaultKind.Timeout = cmp.Or(c.DefaultKind.Timeout, DefaultTimeout)
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate(s *core.Store) error {
	if len(c.Queues) == 0 {
		return configErr("Queues", "none: name at least one queue to claim from")
	}
	for name, q := range c.Queues {
		if name == "" {
			return configErr("Queues", "empty queue name")
		}
		if q.MaxWorkers < 1 || q.MaxWorkers > core.MaxClaimLimit {
			return configErr("Queues["+name+"].MaxWorkers", "%d is outside [1, %d]", q.MaxWorkers, core.MaxClaimLimit)
		}
	}
	switch {
	case c.PollInterval < 0:
		return configErr("PollInterval", "%v is negative", c.PollInterval)
	case c.ProgressInterval < 0:
		return configErr("ProgressInterval", "%v is negative", c.ProgressInterval)
	case c.HeartbeatInterval < 0:
		return configErr("HeartbeatInterval", "%v is negative", c.HeartbeatInterval)
	case c.StaleAfter < 2*s.MinLease() || c.StaleAfter > core.MaxLease:
		return configErr("StaleAfter", "%v is outside [%v, %v]", c.StaleAfter, 2*s.MinLease(), core.MaxLease)
	case c.StaleAfter < 3*c.HeartbeatInterval:
		return configErr("StaleAfter", "%v is less than three heartbeat intervals (%v)", c.StaleAfter, c.HeartbeatInterval)
	case c.RetainFor > 0 && (c.RetainFor < s.MinLease() || c.RetainFor > core.MaxDelay):
		return configErr("RetainFor", "%v is outside [%v, %v]", c.RetainFor, s.MinLease(), core.MaxDelay)
	case c.MaxCrashes < 1:
		return configErr("MaxCrashes", "%d is below 1", c.MaxCrashes)
	case c.DeadlineMargin < 0:
		return configErr("DeadlineMargin", "%v is negative", c.DeadlineMargin)
	case c.CompleteBatch < 1:
		return configErr("CompleteBatch", "%d is below 1", c.CompleteBatch)
	case c.PeriodicInterval < 0:
		return configErr("PeriodicInterval", "%v is negative", c.PeriodicInterval)
	}
	for i, m := range c.Middleware {
		if m.Wrap == nil {
			return configErr(fmt.Sprintf("Middleware[%d].Wrap", i), "nil function")
		}
	}
	// The owner's own rules, so that a bad name fails New, not Start.
	var bad *core.InputError
	if err := (core.RegisterOwnerParams{Name: c.Name, Host: c.Host}).Validate(); errors.As(err, &bad) {
		return configErr(bad.Field, "%s", bad.Reason)
	}
	if len(c.Periodic) > 0 {
		if err := s.CheckSchedules(c.Periodic...); err != nil {
			return &ConfigError{Field: "Periodic", Reason: err.Error()}
		}
	}
	return c.validKind("DefaultKind", c.DefaultKind, s)
}

// validKind checks a kind's settings, with the defaults applied.
func (c Config) validKind(field string, k KindConfig, s *core.Store) error {
	if k.Timeout < s.MinLease() || k.Timeout > core.MaxLease {
		return configErr(field+".Timeout", "%v is outside [%v, %v]", k.Timeout, s.MinLease(), core.MaxLease)
	}
	if min := c.StaleAfter + c.HeartbeatInterval; k.Timeout < min {
		return configErr(field+".Timeout", "%v is below StaleAfter plus HeartbeatInterval (%v): a dead worker's claims would be counted as timeouts", k.Timeout, min)
	}
	if k.MaxAttempts < 0 {
		return configErr(field+".MaxAttempts", "%d is negative", k.MaxAttempts)
	}
	return nil
}

// kindConfig fills k's zero fields from the default kind.
func (c Config) kindConfig(k KindConfig) KindConfig {
	k.Timeout = cmp.Or(k.Timeout, c.DefaultKind.Timeout)
	k.MaxAttempts = cmp.Or(k.MaxAttempts, c.DefaultKind.MaxAttempts)
	if k.Backoff == nil {
		k.Backoff = c.DefaultKind.Backoff
	}
	if k.ForItem == nil {
		k.ForItem = c.DefaultKind.ForItem
	}
	return k
}

// margin is the deadline margin for a kind with timeout t.
func (c Config) margin(t time.Duration) time.Duration {
	return min(c.DeadlineMargin, t/4)
}
