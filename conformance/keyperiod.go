package conformance

import (
	"time"

	"github.com/plenumdb/plenum/core"
)

// Unique per period (ItemSpec.KeyPeriod): one item per key per period of
// the database clock, aligned to the epoch, under the documented key.
func testKeyPeriod(e *env) {
	const queue = "kp"
	before := e.now(e.s)
	x := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyPeriod: time.Hour})[0]
	after := e.now(e.s)
	y := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyPeriod: time.Hour})[0]
	if x.Existed || !y.Existed || y.ID != x.ID {
		e.t.Fatalf("twice in one period: %+v then %+v, want one item", x, y)
	}
	key := e.get(x.ID).Key
	if key != core.PeriodKey("k", time.Hour, before) && key != core.PeriodKey("k", time.Hour, after) {
		e.t.Errorf("stored key %q, want %q", key, core.PeriodKey("k", time.Hour, after))
	}
	if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: key})[0]; !r.Existed || r.ID != x.ID {
		e.t.Errorf("the period's key given as a plain key: %+v, want %s existed", r, x.ID)
	}
	next := e.at(time.Hour)
	z := e.enqueue(next, core.ItemSpec{Queue: queue, Key: "k", KeyPeriod: time.Hour})[0]
	if z.Existed {
		e.t.Errorf("in the next period: %+v, want a new item", z)
	}
	// With KeyStates: the period's item, once finished, gives way.
	o := e.owner(e.s)
	c := e.claimOne(next, o, queue)
	e.complete(next, c, "")
	c = e.claimOne(next, o, queue)
	e.complete(next, c, "")
	w := e.enqueue(next, core.ItemSpec{Queue: queue, Key: "k", KeyPeriod: time.Hour, KeyStates: live})[0]
	if w.Existed {
		e.t.Errorf("KeyPeriod with KeyStates, the period's item finished: %+v, want a new item", w)
	}
	// The longest key, with its period, released: the column holds it.
	longSpec := core.ItemSpec{Queue: "kp-long", Key: string(make200('k')), KeyPeriod: 24 * time.Hour, KeyStates: live}
	long := e.enqueue(e.s, longSpec)[0]
	if long.Existed {
		e.t.Errorf("a 200-character key with a period: %+v, want a new item", long)
	}
	c = e.claimOne(e.s, o, "kp-long")
	e.complete(e.s, c, "")
	if again := e.enqueue(e.s, longSpec)[0]; again.Existed {
		e.t.Errorf("the longest key, its item finished: %+v, want a new item", again)
	} else if got := e.get(long.ID).Key; got != core.ReleasedKey(long.ID, e.get(again.ID).Key) {
		e.t.Errorf("the longest released key is stored as %q", got)
	}
}

func make200(c byte) []byte {
	b := make([]byte, 200)
	for i := range b {
		b[i] = c
	}
	return b
}
