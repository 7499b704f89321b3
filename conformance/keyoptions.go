package conformance

import (
	"errors"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Bad key options are refused naming the field, and change nothing.
func testKeyOptionsRefused(e *env) {
	cases := []struct {
		field string
		spec  core.ItemSpec
	}{
		{"specs[0].KeyStates", core.ItemSpec{Queue: "q", KeyStates: live}},
		{"specs[0].KeyStates", core.ItemSpec{Queue: "q", Key: "k", KeyStates: []core.State{}}},
		{"specs[0].KeyStates", core.ItemSpec{Queue: "q", Key: "k", KeyStates: []core.State{"running"}}},
		{"specs[0].KeyPeriod", core.ItemSpec{Queue: "q", KeyPeriod: time.Hour}},
		{"specs[0].KeyPeriod", core.ItemSpec{Queue: "q", Key: "k", KeyPeriod: time.Millisecond}},
		{"specs[0].KeyPeriod", core.ItemSpec{Queue: "q", Key: "k", KeyPeriod: -time.Hour}},
		{"specs[0].KeyPeriod", core.ItemSpec{Queue: "q", Key: "k", KeyPeriod: time.Second + time.Nanosecond}},
	}
	for _, c := range cases {
		_, err := e.s.Enqueue(e.ctx, c.spec)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			e.t.Errorf("Enqueue(%+v): %v, want an *core.InputError naming %s", c.spec, err, c.field)
		}
	}
	scheds := []struct {
		field string
		spec  core.ScheduleSpec
	}{
		{"specs[0].Item.KeyStates", core.ScheduleSpec{Name: "a", Every: time.Minute, Item: core.ItemSpec{Queue: "q", KeyStates: live}}},
		{"specs[0].Item.KeyPeriod", core.ScheduleSpec{Name: "a", Every: time.Minute, Item: core.ItemSpec{Queue: "q", KeyPeriod: time.Hour}}},
		{"specs[0].SkipWhile", core.ScheduleSpec{Name: "a", Every: time.Minute, SkipWhile: []core.State{"done"}, Item: core.ItemSpec{Queue: "q"}}},
	}
	for _, c := range scheds {
		_, err := e.s.EnqueueDue(e.ctx, c.spec)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			e.t.Errorf("EnqueueDue(%s): %v, want an *core.InputError naming %s", fmt.Sprint(c.spec.Item), err, c.field)
		}
	}
	if n := e.total(""); n != 0 {
		e.t.Errorf("refused enqueues left %d items", n)
	}
}
