package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/seal"
)

// Job is one run of a handler on a claimed item, with its payload decoded
// into Args.
type Job[T any] struct {
	// Args is the item's payload decoded from JSON (the zero T for an item
	// without one), opened first when the kind has a KindConfig.Codec.
	Args T
	r    *run
}

// Item returns the item as it was claimed: its id, kind, attempt (1 for
// the first), crash count, key and raw payload.
func (j *Job[T]) Item() core.Item { return j.r.claim.Item }

// Claim returns the claim this run holds, for the store calls that take
// one (Store.Expand to fan out, for instance). It carries the run's
// deadline, core.Claim.Within: the kind's Timeout less the
// DeadlineMargin, counted from the claim on the database clock, when the
// handler's context ends. Past it, every store call that writes with this
// claim is refused with core.ErrPastDeadline and changes nothing, whatever
// context it is given. Store.Extend moves the claim's lease (how long a
// reaper leaves the item alone), not the run's deadline: a handler gets
// no more time than its kind's Timeout.
func (j *Job[T]) Claim() core.Claim {
	c := *j.r.claim
	c.Within = j.r.within
	return c
}

// ID returns the item's id.
func (j *Job[T]) ID() uuid.UUID { return j.r.claim.ID }

// Attempt returns the attempt this run is, 1 for the first.
func (j *Job[T]) Attempt() int { return j.r.claim.Attempt }

// IdempotencyKey is the key to give to other systems for this item's
// external side effects: the item's id, as text. Every run of the item
// (after a retry, a timeout or a crash) has the same key, and no other
// item has it, so a system that keeps the keys it has seen makes the
// effect happen once under at-least-once delivery. (The claim token would
// not do: it changes with every claim.)
func (j *Job[T]) IdempotencyKey() string { return j.r.claim.ID.String() }

// SetResult records v, marshalled as JSON, as the item's result when the
// handler succeeds. Call it before Fence: the fence completes the item.
//
// With the kind's KindConfig.Codec, the result is sealed here, bound to
// the kind (ResultAAD): readers open it with OpenResult.
func (j *Job[T]) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("plenum/worker: result of %s: %w", j.r.claim.ID, err)
	}
	if c := j.r.codec(); c != nil {
		if b, err = c.Seal(ResultAAD(j.r.claim.Kind), b); err != nil {
			return fmt.Errorf("plenum/worker: seal the result of %s: %w", j.r.claim.ID, err)
		}
	}
	j.r.result = b
	return nil
}

// Fence runs fn in one transaction that holds the item's row lock, only
// while this run still holds the item's claim, and completes the item
// (with the result set by SetResult) in that same transaction when fn
// returns nil, with the last progress report not yet written
// (SetProgress): what fn writes through f commits together with the
// completion, or not at all. Use it for the handler's own database writes
// that must happen exactly once. fn may run again if the transaction is
// retried after a transient error, so it must touch nothing but f.
//
// Fence returns an error wrapping core.ErrClaimLost when the claim is no
// longer held (the item was cancelled, or timed out and was reaped): fn
// did not run, and the handler should return. A fence past the run's
// deadline (see Claim), whatever ctx is, is refused in its own
// transaction, on the database clock: it returns an error wrapping
// ErrDeadline and core.ErrPastDeadline, nothing fn wrote commits, and the
// attempt counts as a timeout whatever the handler returns. After a Fence
// that returned nil the item is completed, whatever the handler returns.
// Inside fn, call f, never the store: a store call with fn's context
// returns core.ErrInsideFence.
func (j *Job[T]) Fence(ctx context.Context, fn func(ctx context.Context, f *core.Fenced) error) error {
	if j.r.fenced {
		return fmt.Errorf("plenum/worker: %s: fenced already: %w", j.r.claim.ID, core.ErrFinished)
	}
	last := j.r.progress.take()
	held, err := j.r.w.store.Fence(ctx, j.Claim(), func(ctx context.Context, f *core.Fenced) error {
		if err := fn(ctx, f); err != nil {
			return err
		}
		if err := lastProgress(ctx, f, last); err != nil {
			return err
		}
		return f.Complete(ctx, j.r.result)
	})
	if err != nil {
		j.r.progress.reopen(j.r, last)
		return j.late("fence", err)
	}
	if !held {
		return fmt.Errorf("plenum/worker: fence %s: %w", j.r.claim.ID, core.ErrClaimLost)
	}
	j.r.fenced = true
	return nil
}

// Settle runs fn in one transaction that holds the item's row lock, only
// while this run still holds the item's claim, as Fence does, but leaves
// the item's outcome to fn: fn completes, fails or puts back the item
// through f (f.Complete, f.Fail, or a core primitive that parks it), and
// the worker records no outcome of its own once Settle returned nil,
// whatever the handler returns. It is for engines built on the runtime
// whose steps decide their item's fate in the same transaction as their
// other writes (a pipeline halting its run, a step that waits). An error
// wrapping core.ErrClaimLost means the claim is no longer held and fn's
// writes did not commit. Past the run's deadline, Settle is refused as
// Fence is: an error wrapping ErrDeadline and core.ErrPastDeadline,
// nothing committed, and the attempt counts as a timeout.
func (j *Job[T]) Settle(ctx context.Context, fn func(ctx context.Context, f *core.Fenced) error) error {
	if j.r.fenced {
		return fmt.Errorf("plenum/worker: %s: fenced already: %w", j.r.claim.ID, core.ErrFinished)
	}
	last := j.r.progress.take()
	held, err := j.r.w.store.Fence(ctx, j.Claim(), func(ctx context.Context, f *core.Fenced) error {
		if err := lastProgress(ctx, f, last); err != nil {
			return err
		}
		return fn(ctx, f)
	})
	if err != nil {
		j.r.progress.reopen(j.r, last)
		return j.late("settle", err)
	}
	if !held {
		return fmt.Errorf("plenum/worker: settle %s: %w", j.r.claim.ID, core.ErrClaimLost)
	}
	j.r.fenced, j.r.settled = true, true
	return nil
}

// lastProgress writes the run's last progress report not yet written,
// if any, in the fence that settles its item.
func lastProgress(ctx context.Context, f *core.Fenced, p *core.Progress) error {
	if p == nil {
		return nil
	}
	return f.SetProgress(ctx, *p)
}

// late returns err, the error of the run's fence (op), and when the
// database refused it past the run's deadline, records that the run is a
// timeout and says so with ErrDeadline.
func (j *Job[T]) late(op string, err error) error {
	if !errors.Is(err, core.ErrPastDeadline) {
		return err
	}
	j.r.late = true
	return fmt.Errorf("plenum/worker: %s %s: %w: %w", op, j.r.claim.ID, ErrDeadline, err)
}

// Succeed sets the job's outcome to success: the item completes (with
// the result SetResult set) whatever error the handler returns. With
// Retry, Dead and Snooze, it is how a batch handler (HandleBatch) gives
// each of its items its own outcome; the last of these calls on a job
// decides, and a job on which none was called takes the outcome of the
// error the handler returns. A single item's handler may use them too,
// in place of its returned error. Safe for concurrent use.
func (j *Job[T]) Succeed() { j.r.outcome.Store(&outcome{}) }

// Retry sets the job's outcome to a failed attempt with err, as if its
// handler had returned err: the item runs again after its backoff, or is
// dead once its attempts are used up. A nil err gives a generic reason.
func (j *Job[T]) Retry(err error) {
	if err == nil {
		err = errors.New("retry asked by its handler")
	}
	j.r.outcome.Store(&outcome{err: err})
}

// Dead sets the job's outcome to dead at once with err, whatever
// attempts it has left, as if its handler had returned Discard(err).
func (j *Job[T]) Dead(err error) { j.r.outcome.Store(&outcome{err: Discard(err)}) }

// Snooze sets the job's outcome to run again after d without using an
// attempt, as if its handler had returned Snooze(d).
func (j *Job[T]) Snooze(d time.Duration) { j.r.outcome.Store(&outcome{err: Snooze(d)}) }

// outcome is what Succeed, Retry, Dead or Snooze set: err as a handler's
// returned error (nil for success).
type outcome struct{ err error }

// handler is a registered kind's handler, payload decoding included.
type handler struct {
	kind string
	cfg  KindConfig
	call func(ctx context.Context, r *run) error
	// batch is set for a kind registered with HandleBatch, whose items
	// are handled in batches (call is then nil).
	batch *batchHandler
}

// Handle registers fn as the handler of kind, with the kind's settings in
// cfg (at most one; the Config's DefaultKind fills what it leaves zero).
// Payloads are decoded from JSON into T; one that does not decode
// dead-letters its item at once. Register every kind before Start: a
// registration that is refused (a kind registered twice, after Start, or
// with invalid settings) makes Start return the error.
func Handle[T any](w *Worker, kind string, fn func(ctx context.Context, job *Job[T]) error, cfg ...KindConfig) {
	w.register(kind, fn != nil, cfg, nil, func(ctx context.Context, r *run) error {
		job, err := newJob[T](r)
		if err != nil {
			return err
		}
		return fn(ctx, job)
	})
}

// newJob is r's Job, its payload decoded; an error (a Discard) when it
// does not decode.
func newJob[T any](r *run) (*Job[T], error) {
	job := &Job[T]{r: r}
	p := r.claim.Payload
	if c := r.codec(); c != nil && len(p) > 0 {
		plain, err := c.Open(PayloadAAD(r.claim.Kind), p)
		if err != nil {
			return nil, Discard(fmt.Errorf("open the sealed payload of %s (kind %q): %w", r.claim.ID, r.claim.Kind, err))
		}
		p = plain
	} else if id, sealed := seal.Inspect(p); sealed {
		// Decoding the envelope as the args would run the handler on
		// zero values.
		return nil, Discard(fmt.Errorf("the payload of %s is sealed (key id %q), and kind %q has no KindConfig.Codec to open it", r.claim.ID, id, r.claim.Kind))
	}
	if raw, ok := any(&job.Args).(*json.RawMessage); ok {
		// The payload is JSON already (checked when it was enqueued):
		// decoding it into a RawMessage would only copy it.
		*raw = p
	} else if len(p) > 0 {
		if err := json.Unmarshal(p, &job.Args); err != nil {
			return nil, Discard(fmt.Errorf("decode the payload of %s as %T: %w", r.claim.ID, job.Args, err))
		}
	}
	return job, nil
}

// HandleFunc registers fn, which takes the payload undecoded, as the
// handler of kind: the untyped form of Handle.
func (w *Worker) HandleFunc(kind string, fn func(ctx context.Context, job *Job[json.RawMessage]) error, cfg ...KindConfig) {
	Handle(w, kind, fn, cfg...)
}

func (w *Worker) register(kind string, ok bool, cfg []KindConfig, batch *batchHandler, call func(ctx context.Context, r *run) error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	field := "handler[" + kind + "]"
	var err error
	switch {
	case w.started:
		err = configErr(field, "registered after Start")
	case kind == "":
		err = configErr("handler", "empty kind")
	case !ok:
		err = configErr(field, "nil function")
	case len(cfg) > 1:
		err = configErr(field, "%d KindConfigs, want at most one", len(cfg))
	case w.handlers[kind] != nil:
		err = configErr(field, "kind registered twice")
	}
	if err != nil {
		w.regErrs = append(w.regErrs, err)
		return
	}
	var k KindConfig
	if len(cfg) == 1 {
		k = cfg[0]
	}
	k = w.cfg.kindConfig(k)
	if err := w.cfg.validKind(field, k, w.store); err != nil {
		w.regErrs = append(w.regErrs, err)
		return
	}
	if batch != nil {
		if err := batch.valid(field, k); err != nil {
			w.regErrs = append(w.regErrs, err)
			return
		}
	}
	w.handlers[kind] = &handler{kind: kind, cfg: k, call: call, batch: batch}
}
