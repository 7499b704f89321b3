package conformance

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 4: every timestamp that gates visibility is the database's,
// and moving the database clock (an offset inside the SQL clock
// expression) is what moves it; the Go clock plays no part.
func testClock(e *env) {
	const queue = "clock"
	slack := e.clockSlack()

	t0 := e.now(e.s)
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Delay: time.Hour})
	t1 := e.now(e.s)
	it := e.get(id)
	if !between(it.CreatedAt, t0, t1, slack) {
		e.t.Errorf("CreatedAt %v is outside the database clock's [%v, %v] around the enqueue", it.CreatedAt, t0, t1)
	}
	if !between(it.AvailableAt, t0.Add(time.Hour), t1.Add(time.Hour), slack) {
		e.t.Errorf("AvailableAt %v of an item delayed 1h is outside [%v, %v]", it.AvailableAt, t0.Add(time.Hour), t1.Add(time.Hour))
	}
	e.t.Logf("database clock minus Go clock: %v", time.Until(t1).Round(time.Millisecond))

	o := e.owner(e.s)
	if cs := e.claim(e.s, o, queue, 10); len(cs) != 0 {
		e.t.Fatalf("an item delayed 1h was claimed at once")
	}
	if cs := e.claim(e.at(50*time.Minute), o, queue, 10); len(cs) != 0 {
		e.t.Fatalf("an item delayed 1h was claimed 50 minutes later")
	}

	future := e.at(2 * time.Hour)
	f0 := e.now(future)
	if !between(f0, t1.Add(2*time.Hour), e.now(e.s).Add(2*time.Hour), slack) {
		e.t.Errorf("a store at +2h reads the clock as %v, want about %v", f0, t1.Add(2*time.Hour))
	}
	c := e.claimOne(future, o, queue)
	f1 := e.now(future)
	if c.ID != id {
		e.t.Fatalf("claimed %s, want %s", c.ID, id)
	}
	it = e.get(id)
	if !between(it.ClaimedAt, f0, f1, slack) {
		e.t.Errorf("ClaimedAt %v is outside the +2h store's clock [%v, %v] around the claim", it.ClaimedAt, f0, f1)
	}
	if d := it.LeaseExpiresAt.Sub(it.ClaimedAt); d < time.Hour-slack || d > time.Hour+slack {
		e.t.Errorf("a one-hour lease expires %v after the claim", d)
	}

	// An hour behind, the clock reads an hour earlier, and an item enqueued
	// now is not yet visible there.
	past := e.at(-time.Hour)
	n0 := e.now(e.s)
	p := e.now(past)
	n1 := e.now(e.s)
	if !between(p.Add(time.Hour), n0, n1, slack) {
		e.t.Errorf("a store at -1h reads %v, want about %v", p, n0.Add(-time.Hour))
	}
	nowID := e.enqueueOne(e.s, core.ItemSpec{Queue: "clock-now"})
	if cs := e.claim(past, o, "clock-now", 10); len(cs) != 0 {
		e.t.Errorf("an item available now was claimed by a store an hour behind")
	}
	if c := e.claimOne(e.s, o, "clock-now"); c.ID != nowID {
		e.t.Errorf("claimed %s, want %s", c.ID, nowID)
	}

	// What a store writes is stamped with its own clock.
	q0 := e.now(past)
	pastID := e.enqueueOne(past, core.ItemSpec{Queue: "clock-past"})
	q1 := e.now(past)
	if it := e.get(pastID); !between(it.CreatedAt, q0, q1, slack) || !between(it.AvailableAt, q0, q1, slack) {
		e.t.Errorf("an item enqueued through the -1h store was stamped created %v, available %v; want within [%v, %v]", it.CreatedAt, it.AvailableAt, q0, q1)
	}
	if c := e.claimOne(e.s, o, "clock-past"); c.ID != pastID {
		e.t.Errorf("claimed %s, want %s", c.ID, pastID)
	}

	// The clock moves inside a transaction: a fence that runs a while
	// stamps its completion with the time it completed, not the time its
	// transaction began (PostgreSQL's now() would).
	run := 300*time.Millisecond + 2*slack
	txID := e.enqueueOne(e.s, core.ItemSpec{Queue: "clock-tx"})
	ct := e.claimOne(e.s, o, "clock-tx")
	var began time.Time
	held, err := e.s.Fence(e.ctx, ct, func(ctx context.Context, f *core.Fenced) error {
		began = e.now(e.s)
		time.Sleep(run)
		return f.Complete(ctx, nil)
	})
	if err != nil || !held {
		e.t.Fatalf("Fence = %v, %v; want held", held, err)
	}
	if it := e.get(txID); it.FinishedAt.Before(began.Add(run - slack)) {
		e.t.Errorf("a fence that ran %v after %v completed at %v: the database clock stood still inside the transaction (Dialect.Now must move between statements)", run, began, it.FinishedAt)
	}
}
