package core

import (
	"context"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// Trace holds functions the store calls on events of the operations run
// with a context carrying it (WithTrace), as net/http/httptrace does for
// requests: the caller that wants to observe, say a worker, marks its own
// context, and only its own operations report to it.
type Trace struct {
	// BarrierFired is called once per barrier that a transaction fired,
	// after that transaction committed, in the goroutine that called the
	// store: by Complete, CompleteMany, Fail, Cancel, Reap, and the Fenced
	// handle's Complete, Fail and Seal. A transaction that was rolled back
	// (and tried again) reports nothing; one whose commit is unknown
	// (ErrCommitUnknown) reports nothing either.
	BarrierFired func(ctx context.Context, b FiredBarrier)
}

// FiredBarrier describes a barrier at the moment it fired.
type FiredBarrier struct {
	// ID is the barrier; OwnerID the item that opened it; Name its name.
	ID, OwnerID uuid.UUID
	Name        string
	// Expected, Arrived and Failed are its counts when it fired (Arrived
	// + Failed == Expected).
	Expected, Arrived, Failed int64
	// JoinItemID is the join item the firing enqueued, in JoinQueue with
	// JoinKind; JoinDead says the join was created dead (FailBarrier with
	// failed children).
	JoinItemID uuid.UUID
	JoinQueue  string
	JoinKind   string
	JoinDead   bool
}

type traceKey struct{}

// WithTrace returns ctx carrying t: the store operations run with it (or
// with a context derived from it) call t's functions. A trace already on
// ctx keeps being called too, after t's.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if t == nil {
		return ctx
	}
	if old := traceFrom(ctx); old != nil {
		t = &Trace{BarrierFired: chain(t.BarrierFired, old.BarrierFired)}
	}
	return context.WithValue(ctx, traceKey{}, t)
}

func traceFrom(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

func chain(a, b func(context.Context, FiredBarrier)) func(context.Context, FiredBarrier) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ctx context.Context, f FiredBarrier) { a(ctx, f); b(ctx, f) }
}

// noteFired records that tx fired b, for the trace to hear after commit.
func noteFired(tx dialect.Querier, b FiredBarrier) {
	if t, ok := tx.(*storeTx); ok {
		t.fired = append(t.fired, b)
	}
}

// reportCommitted tells ctx's trace what the committed tx did.
func reportCommitted(ctx context.Context, t *storeTx) {
	tr := traceFrom(ctx)
	if tr == nil || tr.BarrierFired == nil || len(t.fired) == 0 {
		return
	}
	for _, b := range t.fired {
		tr.BarrierFired(ctx, b)
	}
}
