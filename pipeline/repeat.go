package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// CatchUp is what a RepeatUntil does with the repetitions that fell due
// while nothing ran it (every worker down, or the queue busy).
type CatchUp int

const (
	// RunMissed runs every scheduled repetition, in order, each once:
	// after a downtime the missed ones run back to back, each with its
	// own scheduled time, until the schedule is caught up. The default.
	RunMissed CatchUp = iota
	// SkipToLatest runs only the latest repetition that is due: a
	// repetition found running late, with later ones already due, gives
	// its place to the latest of them, and the ones in between never run
	// (Repetition.Missed counts them).
	SkipToLatest
)

// OnError is what a RepeatUntil does once a repetition has failed for
// good: its attempts used up, or a Permanent error.
type OnError int

const (
	// HaltOnError halts the run, as a step's last failed attempt does
	// (ReasonAttemptsExhausted). The default.
	HaltOnError OnError = iota
	// ContinueOnError records the failure in the repetition's item
	// result and goes on with the next repetition; nothing the failed
	// repetition gave Fence commits.
	ContinueOnError
)

// RepeatOptions tune a RepeatUntil.
type RepeatOptions struct {
	// StepOptions tune each repetition as a step's: MaxAttempts bounds
	// its attempts, Timeout bounds one, Backoff spaces its retries,
	// Delay postpones the first repetition (and so the whole schedule),
	// FlowKey keys every repetition's item.
	StepOptions
	// Every is the interval of the schedule: repetition k is due Every*k
	// after the step's start (when its item was made, plus its Delay),
	// on the database clock, however late the ones before it ran.
	// Required: above zero, at most core.MaxDelay.
	Every time.Duration
	// Until ends the schedule, counted from the step's start: the last
	// repetition is the last one due at or before it, and the step ends
	// after it even when the body never said done. Default (0): no end;
	// the step repeats until the body says done.
	Until time.Duration
	// CatchUp is the rule for the repetitions missed by a downtime.
	// Default: RunMissed.
	CatchUp CatchUp
	// OnError is what a repetition that failed for good does to the
	// step. Default: HaltOnError.
	OnError OnError
}

// Repetition is one scheduled run of a RepeatUntil's body.
type Repetition struct {
	// Index numbers the repetitions of the step from 0.
	Index int
	// At is when the repetition was due, on the database clock: the
	// step's start plus Index times Every. It names the repetition: every
	// attempt of it sees the same At, and no other repetition does.
	At time.Time
	// Missed is how many repetitions SkipToLatest skipped to reach this
	// one; always 0 under RunMissed.
	Missed int
	// Last says no repetition is scheduled after this one (its next
	// would be past RepeatOptions.Until): the step ends with its output.
	Last bool
}

// RepeatUntil is a step that runs body on its input every opts.Every,
// each repetition as its own claimed item, until body says done or
// opts.Until has passed; the step's output is the output of the
// repetition that ended it. Between repetitions nothing holds a worker
// slot: each repetition's item, as it completes, makes the next one's,
// claimable at its scheduled time on the database clock.
//
// Each repetition takes effect once: what body gives Fence commits in
// the transaction that completes the repetition and schedules the next,
// so a worker that dies in the middle of a repetition leaves nothing of
// it, and the repetition runs again (it is the same one: same Index, same
// At) on another worker. body's effects outside the database should be
// made idempotent by the repetition, with Info(ctx).IdempotencyKey, which
// names it. A failed attempt runs again after opts.Backoff while
// opts.MaxAttempts allows; then opts.OnError decides. opts.CatchUp
// decides what runs after a downtime; a repetition whose workers die
// the worker's Config.MaxCrashes times halts the run whatever OnError.
// When the schedule ends after a
// repetition that failed (ContinueOnError), the step's output is the
// last one a repetition gave, or the zero O if none did.
func RepeatUntil[I, O any](name string, body func(ctx context.Context, in I, rep Repetition) (out O, done bool, err error), opts RepeatOptions) Flow[I, O] {
	n := &node{kind: kindRepeat, name: name, opts: opts.StepOptions,
		interval: opts.Every, until: opts.Until, catchUp: opts.CatchUp, onError: opts.OnError}
	if body != nil {
		n.repeat = func(ctx context.Context, raw json.RawMessage, rep Repetition) (json.RawMessage, bool, error) {
			in, err := decode[I](raw)
			if err != nil {
				return nil, false, Permanent(fmt.Errorf("repeat %q: decode its input as %T: %w", name, in, err))
			}
			out, done, err := body(ctx, in, rep)
			if err != nil {
				return nil, false, err
			}
			b, err := encode(name, out)
			return b, done, err
		}
	}
	return Flow[I, O]{n}
}

// repeatState is the schedule's place, in the envelope of each
// repetition's item after the first: the repetition it runs, and the
// output of the last one that succeeded.
type repeatState struct {
	Index int             `json:"i"`
	At    time.Time       `json:"at"`
	Out   json.RawMessage `json:"out,omitempty"`
}

// repeatResult is the result of a repetition's item that the next one
// took over from.
type repeatResult struct {
	Repetition int       `json:"repetition"`
	At         time.Time `json:"at"`
	Missed     int       `json:"missed,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// extraAttempts is how many attempts n's item gets beyond its step's: a
// repetition that continues on error keeps one to move on after its last
// attempt timed out, which left the handler nothing it could commit.
func extraAttempts(n *node) int {
	if n != nil && n.kind == kindRepeat && n.onError == ContinueOnError {
		return 1
	}
	return 0
}
