package conformance

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// Runs: an item names a run that exists, or is not enqueued. Every path
// that takes an ItemSpec's Run refuses one that names no run with
// ErrNotFound naming the field, in its own transaction, and writes
// nothing; a run created earlier in the same transaction counts.
func testEnqueueNoRun(e *env) {
	const queue, other = "norun", "norun-other"
	ctx := e.ctx
	rc, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: "norun"}, core.ItemSpec{Queue: queue})
	if err != nil {
		e.t.Fatal(err)
	}
	o := e.owner(e.s)
	c := e.claimOne(e.s, o, queue)
	missing := uuid.Must(uuid.NewV7())
	fence := func(fn func(ctx context.Context, f *core.Fenced) error) error {
		held, err := e.s.Fence(ctx, c, fn)
		if !held && err == nil {
			return errors.New("fence not held")
		}
		return err
	}
	inTx := func(fn func(tx dialect.Tx) error) error {
		tx, err := e.s.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return fn(tx)
	}
	for _, tc := range []struct {
		where, field string
		err          error
	}{
		{"Enqueue", "specs[0].Run", func() error {
			_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: other, Run: missing})
			return err
		}()},
		{"Enqueue (bulk, among items of a real run)", "specs[2].Run", func() error {
			_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: other, Run: rc.ID}, core.ItemSpec{Queue: other},
				core.ItemSpec{Queue: other, Run: missing}, core.ItemSpec{Queue: other, Run: rc.ID})
			return err
		}()},
		{"EnqueueTx", "specs[0].Run", inTx(func(tx dialect.Tx) error {
			_, err := e.s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: other, Run: missing})
			return err
		})},
		{"Fenced.Enqueue", "specs[1].Run", fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Enqueue(ctx, core.ItemSpec{Queue: other}, core.ItemSpec{Queue: other, Run: missing})
			return err
		})},
		{"Fenced.Then", "next.Run", fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Then(ctx, core.ItemSpec{Queue: other, Run: missing}, nil)
			return err
		})},
		{"EnqueueDue", "Item.Run", func() error {
			sp := core.ScheduleSpec{Name: "norun", Every: time.Hour, Item: core.ItemSpec{Queue: other, Run: missing}}
			if _, err := e.s.EnqueueDue(ctx, sp); err != nil { // a first call opens the schedule, enqueuing nothing
				return err
			}
			_, err := e.at(2*time.Hour).EnqueueDue(ctx, sp) // a tick is due
			return err
		}()},
	} {
		if !errors.Is(tc.err, core.ErrNotFound) || !strings.Contains(tc.err.Error(), tc.field) || !strings.Contains(tc.err.Error(), missing.String()) {
			e.t.Errorf("%s naming no run = %v, want ErrNotFound naming %s and the run", tc.where, tc.err, tc.field)
		}
	}
	if n := e.total(other); n != 0 {
		e.t.Errorf("refused enqueues left %d items", n)
	}
	if st := e.get(c.ID).State; st != core.StateClaimed {
		e.t.Errorf("fenced item after the refused Then is %s, want claimed", st)
	}

	// A run created earlier in the same transaction is found there.
	if err := inTx(func(tx dialect.Tx) error {
		r, _, err := e.s.CreateRunTx(ctx, tx, core.RunSpec{Name: "norun-tx"})
		if err != nil {
			return err
		}
		_, err = e.s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: other, Run: r.ID})
		return err
	}); err != nil {
		e.t.Errorf("EnqueueTx into a run created in the same transaction: %v", err)
	}
	// Items of real runs, and of none, go in as before.
	enq, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: other, Run: rc.ID}, core.ItemSpec{Queue: other})
	if err != nil {
		e.t.Fatalf("Enqueue into an existing run: %v", err)
	}
	if got := e.get(enq[0].ID).Run; got != rc.ID {
		e.t.Errorf("item's run = %s, want %s", got, rc.ID)
	}
	if held, err := e.s.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Then(ctx, core.ItemSpec{Queue: other, Run: rc.ID}, nil)
		return err
	}); !held || err != nil {
		e.t.Errorf("Then into an existing run: held %v, %v", held, err)
	}
}
