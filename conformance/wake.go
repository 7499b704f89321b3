package conformance

import (
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// Wake-ups: an enqueue through the store wakes its subscribers of that
// queue by the time Enqueue returns; where the dialect is a
// dialect.Notifier, another store's enqueue on the same tables (as another
// process's) wakes them too, once it commits, and a rolled-back EnqueueTx
// never does. A wake-up is a hint, so a late one costs only latency: the
// bound here is generous.
func testWakeups(e *env) {
	sub, err := e.s.Subscribe("wake")
	if err != nil {
		e.t.Fatal(err)
	}
	defer sub.Close()
	if _, err := e.s.Enqueue(e.ctx, core.ItemSpec{Queue: "wake"}); err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-sub.C:
	default:
		e.t.Fatal("Enqueue returned without waking the queue's subscriber")
	}
	if _, ok := e.d.(dialect.Notifier); !ok {
		e.t.Logf("%s is no dialect.Notifier: other processes' items are found by polling", e.d.Name())
		return
	}
	for end := time.Now().Add(20 * time.Second); e.s.Stats().Listens == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			e.t.Fatal("the store did not begin listening within 20 s")
		}
	}
	wokenWithin := func(d time.Duration) bool {
		select {
		case <-sub.C:
			return true
		case <-time.After(d):
			return false
		}
	}
	wokenWithin(time.Second) // listening wakes every subscriber once
	other := e.open(core.Options{})
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := other.EnqueueTx(e.ctx, tx, core.ItemSpec{Queue: "wake"}); err != nil {
		_ = tx.Rollback()
		e.t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		e.t.Fatal(err)
	}
	if wokenWithin(300 * time.Millisecond) {
		e.t.Fatal("a rolled-back EnqueueTx of another store woke the subscriber")
	}
	if _, err := other.Enqueue(e.ctx, core.ItemSpec{Queue: "wake"}); err != nil {
		e.t.Fatal(err)
	}
	if !wokenWithin(20 * time.Second) {
		e.t.Fatal("another store's Enqueue did not wake the subscriber within 20 s (behind a pooler in transaction mode LISTEN does not work: set core.Options.DisableNotify)")
	}
}
