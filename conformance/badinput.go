package conformance

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Guarantee 8: bad input gets an error that says so, matching the
// documented sentinel, and changes nothing.
func testBadInput(e *env) {
	const queue = "bad"
	ctx := e.ctx
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	c := e.claimOne(e.s, o, queue)
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	before := e.get(id)
	items := e.total("")

	huge := make([]byte, core.DefaultMaxPayloadBytes+1)
	for i := range huge {
		huge[i] = 'a'
	}
	huge[0], huge[len(huge)-1] = '"', '"'
	mid := json.RawMessage(`"` + strings.Repeat("m", 2000) + `"`)
	small := e.open(core.Options{MaxPayloadBytes: 1024})
	good := core.ItemSpec{Queue: queue}
	long := func(n int) string { return strings.Repeat("x", n) }
	enq := func(specs ...core.ItemSpec) func() error {
		return func() error { _, err := e.s.Enqueue(ctx, specs...); return err }
	}
	claim := func(p core.ClaimParams) func() error {
		return func() error { _, err := e.s.Claim(ctx, p); return err }
	}
	cp := func(mod func(*core.ClaimParams)) core.ClaimParams {
		p := core.ClaimParams{Queue: queue, Owner: o, Limit: 1, Lease: time.Minute}
		mod(&p)
		return p
	}
	fence := func(fn func(ctx context.Context, f *core.Fenced) error) func() error {
		return func() error {
			held, err := e.s.Fence(ctx, c, fn)
			if !held {
				return errors.New("fence not held")
			}
			return err
		}
	}
	open := func(db *sql.DB, d dialect.Dialect, opts core.Options) func() error {
		return func() error { _, err := core.Open(ctx, db, d, opts); return err }
	}

	cases := []struct {
		name string
		want error
		fn   func() error
	}{
		{"Enqueue nothing", core.ErrInvalidInput, enq()},
		{"Enqueue empty queue", core.ErrInvalidInput, enq(core.ItemSpec{})},
		{"Enqueue queue too long", core.ErrInvalidInput, enq(core.ItemSpec{Queue: long(migrations.MaxQueueLen + 1)})},
		{"Enqueue queue not UTF-8", core.ErrInvalidInput, enq(core.ItemSpec{Queue: "q\xff"})},
		{"Enqueue queue with NUL", core.ErrInvalidInput, enq(core.ItemSpec{Queue: "q\x00"})},
		{"Enqueue kind too long", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Kind: long(migrations.MaxKindLen + 1)})},
		{"Enqueue key too long", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Key: long(migrations.MaxKeyLen + 1)})},
		{"Enqueue payload over the default limit", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Payload: huge})},
		{"Enqueue payload over the store's limit", core.ErrInvalidInput, func() error { _, err := small.Enqueue(ctx, core.ItemSpec{Queue: queue, Payload: mid}); return err }},
		{"Enqueue invalid JSON", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Payload: []byte(`{"a":`)})},
		{"Enqueue JSON with invalid UTF-8", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Payload: []byte("{\"a\":\"\xff\"}")})},
		{"Enqueue JSON holding NUL", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Payload: []byte(`{"a":"x\\\u0000"}`)})},
		{"Enqueue JSON with NUL in a key", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Payload: []byte(`{"\u0000":1}`)})},
		{"Enqueue negative delay", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Delay: -time.Second})},
		{"Enqueue delay too long", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Delay: core.MaxDelay + time.Second})},
		{"Enqueue negative MaxAttempts", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, MaxAttempts: -1})},
		{"Enqueue priority out of range", core.ErrInvalidInput, enq(core.ItemSpec{Queue: queue, Priority: 1<<30 + 1})},
		{"Enqueue one bad spec among good ones", core.ErrInvalidInput, enq(good, good, core.ItemSpec{Queue: queue, Payload: []byte("nope")})},
		{"EnqueueTx nil tx", core.ErrInvalidInput, func() error { _, err := e.s.EnqueueTx(ctx, nil, good); return err }},

		{"Claim empty queue", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Queue = "" }))},
		{"Claim limit 0", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Limit = 0 }))},
		{"Claim negative limit", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Limit = -1 }))},
		{"Claim limit above MaxClaimLimit", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Limit = core.MaxClaimLimit + 1 }))},
		{"Claim lease below the store's MinLease", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Lease = e.s.MinLease() - time.Millisecond }))},
		{"Claim lease above MaxLease", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Lease = core.MaxLease + time.Second }))},
		{"Claim without owner", core.ErrInvalidInput, claim(cp(func(p *core.ClaimParams) { p.Owner = uuid.Nil }))},
		{"ClaimTx nil tx", core.ErrInvalidInput, func() error { _, err := e.s.ClaimTx(ctx, nil, cp(func(*core.ClaimParams) {})); return err }},

		{"Complete invalid JSON result", core.ErrInvalidInput, func() error { return e.s.Complete(ctx, c, []byte("{")) }},
		{"UnfiredBarriers negative age", core.ErrInvalidInput, func() error {
			_, err := e.s.UnfiredBarriers(ctx, core.UnfiredBarriersParams{OlderThan: -time.Second})
			return err
		}},
		{"UnfiredBarriers limit above 10,000", core.ErrInvalidInput, func() error {
			_, err := e.s.UnfiredBarriers(ctx, core.UnfiredBarriersParams{Limit: 10001})
			return err
		}},
		{"Complete result holding NUL", core.ErrInvalidInput, func() error { return e.s.Complete(ctx, c, []byte(`["\u0000"]`)) }},
		{"Complete result over the limit", core.ErrInvalidInput, func() error { return e.s.Complete(ctx, c, huge) }},
		{"Complete zero claim", core.ErrInvalidInput, func() error { return e.s.Complete(ctx, core.Claim{}, nil) }},
		{"CompleteMany zero claim", core.ErrInvalidInput, func() error {
			_, err := e.s.CompleteMany(ctx, []core.Completion{{Claim: c}, {Claim: core.Claim{}}})
			return err
		}},
		{"CompleteMany same item twice", core.ErrInvalidInput, func() error {
			_, err := e.s.CompleteMany(ctx, []core.Completion{{Claim: c}, {Claim: c}})
			return err
		}},
		{"FinishMany same item twice", core.ErrInvalidInput, func() error {
			_, err := e.s.FinishMany(ctx, []core.Finish{{Claim: c}, {Claim: c, Outcome: core.FinishFail}})
			return err
		}},
		{"FinishMany unknown outcome", core.ErrInvalidInput, func() error {
			_, err := e.s.FinishMany(ctx, []core.Finish{{Claim: c, Outcome: core.FinishOutcome(9)}})
			return err
		}},
		{"FinishMany negative release delay", core.ErrInvalidInput, func() error {
			_, err := e.s.FinishMany(ctx, []core.Finish{{Claim: c, Outcome: core.FinishRelease, Delay: -time.Second}})
			return err
		}},
		{"FinishMany invalid JSON result", core.ErrInvalidInput, func() error {
			_, err := e.s.FinishMany(ctx, []core.Finish{{Claim: c, Result: []byte("{")}})
			return err
		}},
		{"Fail zero claim", core.ErrInvalidInput, func() error { _, err := e.s.Fail(ctx, core.Claim{}, core.FailParams{}); return err }},
		{"Fail negative RetryIn", core.ErrInvalidInput, func() error { _, err := e.s.Fail(ctx, c, core.FailParams{RetryIn: -time.Second}); return err }},
		{"Release zero claim", core.ErrInvalidInput, func() error { return e.s.Release(ctx, core.Claim{}, 0) }},
		{"Release negative delay", core.ErrInvalidInput, func() error { return e.s.Release(ctx, c, -time.Second) }},
		{"Extend lease below MinLease", core.ErrInvalidInput, func() error { return e.s.Extend(ctx, c, time.Millisecond) }},
		{"Fence nil fn", core.ErrInvalidInput, func() error { _, err := e.s.Fence(ctx, c, nil); return err }},
		{"Fence zero claim", core.ErrInvalidInput, func() error {
			_, err := e.s.Fence(ctx, core.Claim{}, func(context.Context, *core.Fenced) error { return nil })
			return err
		}},
		{"Fenced.Enqueue empty queue", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Enqueue(ctx, good, core.ItemSpec{})
			return err
		})},
		{"Fenced.Complete invalid JSON", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			return f.Complete(ctx, []byte("]"))
		})},
		{"OpenBarrier empty name", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.OpenBarrier(ctx, core.BarrierSpec{Join: core.JoinSpec{Queue: queue}})
			return err
		})},
		{"OpenBarrier unknown policy", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}, OnChildFailure: "explode"})
			return err
		})},
		{"OpenBarrier join without queue", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b"})
			return err
		})},
		{"AddChildren empty key", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}})
			if err != nil {
				return err
			}
			_, err = f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, Children: []core.ChildSpec{{Key: "a"}, {}}})
			return err
		})},
		{"AddChildren key twice", core.ErrInvalidInput, fence(func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}})
			if err != nil {
				return err
			}
			_, err = f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, Children: []core.ChildSpec{{Key: "a"}, {Key: "a"}}})
			return err
		})},
		{"Expand nil source", core.ErrInvalidInput, func() error {
			_, err := e.s.Expand(ctx, c, core.ExpandParams{Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}}})
			return err
		}},

		{"RegisterOwner host too long", core.ErrInvalidInput, func() error { _, err := e.s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: long(256)}); return err }},
		{"Heartbeat without owner", core.ErrInvalidInput, func() error { return e.s.Heartbeat(ctx, uuid.Nil) }},
		{"ExtendMany lease below MinLease", core.ErrInvalidInput, func() error { _, err := e.s.ExtendMany(ctx, []core.Claim{c}, time.Millisecond); return err }},
		{"ExtendMany claim without token", core.ErrInvalidInput, func() error {
			_, err := e.s.ExtendMany(ctx, []core.Claim{{Item: core.Item{ID: c.ID}}}, time.Minute)
			return err
		}},
		{"ExtendMany same item twice", core.ErrInvalidInput, func() error { _, err := e.s.ExtendMany(ctx, []core.Claim{c, c}, time.Minute); return err }},
		{"Lost claim without token", core.ErrInvalidInput, func() error { _, err := e.s.Lost(ctx, []core.Claim{{Item: core.Item{ID: c.ID}}}); return err }},
		{"Deregister without owner", core.ErrInvalidInput, func() error { return e.s.Deregister(ctx, uuid.Nil) }},
		{"Reap StaleAfter too short", core.ErrInvalidInput, func() error { _, err := e.s.Reap(ctx, core.ReapParams{StaleAfter: time.Second}); return err }},
		{"Reap negative MaxCrashes", core.ErrInvalidInput, func() error { _, err := e.s.Reap(ctx, core.ReapParams{MaxCrashes: -1}); return err }},
		{"Reap negative limit", core.ErrInvalidInput, func() error { _, err := e.s.Reap(ctx, core.ReapParams{Limit: -1}); return err }},
		{"Children limit 0", core.ErrInvalidInput, func() error {
			_, err := e.s.Children(ctx, core.ChildrenParams{Barrier: uuid.Must(uuid.NewV7())})
			return err
		}},

		{"Open nil *sql.DB", core.ErrInvalidInput, open(nil, e.d, core.Options{Prefix: e.prefix})},
		{"Open nil dialect", core.ErrInvalidInput, open(e.db, nil, core.Options{Prefix: e.prefix})},
		// Prefixes are refused before any statement runs. Migrate stays off
		// and the strings stay harmless, so that a regression cannot create
		// or drop anything in a user's database.
		{"Open prefix with SQL in it", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "Robert'); DROP"})},
		{"Open prefix with a space", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "plenum x_"})},
		{"Open prefix not ASCII", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "plenüm_"})},
		{"Open prefix upper case", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "Plenum_"})},
		{"Open prefix starting with a digit", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "1p_"})},
		{"Open prefix too long", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: "p" + long(migrations.MaxPrefixLen)})},
		{"Open MaxPayloadBytes above the ceiling", core.ErrInvalidInput, open(e.db, e.d, core.Options{Prefix: e.prefix, MaxPayloadBytes: core.MaxPayloadCeiling + 1})},
		{"ValidatePrefix empty", migrations.ErrInvalidPrefix, func() error { return migrations.ValidatePrefix("") }},
		{"migrations.Apply prefix with SQL in it", migrations.ErrInvalidPrefix, func() error {
			_, err := migrations.Apply(ctx, e.db, e.d, "Robert'); --")
			return err
		}},
		{"migrations.Version prefix with SQL in it", migrations.ErrInvalidPrefix, func() error {
			_, err := migrations.Version(ctx, e.db, e.d, "Robert'); --")
			return err
		}},
		{"migrations.Drop prefix with SQL in it", migrations.ErrInvalidPrefix, func() error { return migrations.Drop(ctx, e.db, e.d, "Robert'); --") }},
		{"Lookup unknown dialect", dialect.ErrUnknownDialect, func() error { _, err := dialect.Lookup("no-such-database"); return err }},
	}

	// A closed database. Its handle is the suite's own (a second Open); its
	// tables, if that reaches the same database, are dropped through the
	// subtest's handle.
	closedDB := e.cfg.Open(e.t)
	if closedDB == nil {
		e.t.Fatal("Config.Open returned a nil *sql.DB")
	}
	p2 := e.newPrefix()
	sc, err := core.Open(ctx, closedDB, e.d, core.Options{Prefix: p2, Migrate: true})
	if err != nil {
		e.t.Fatalf("core.Open on a second handle: %v", err)
	}
	if err := closedDB.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	cases = append(cases, []struct {
		name string
		want error
		fn   func() error
	}{
		{"closed: Open", core.ErrClosed, open(closedDB, e.d, core.Options{Prefix: p2})},
		{"closed: Enqueue", core.ErrClosed, func() error { _, err := sc.Enqueue(ctx, good); return err }},
		{"closed: Claim", core.ErrClosed, func() error { _, err := sc.Claim(ctx, cp(func(*core.ClaimParams) {})); return err }},
		{"closed: Complete", core.ErrClosed, func() error { return sc.Complete(ctx, c, nil) }},
		{"closed: Fence", core.ErrClosed, func() error {
			_, err := sc.Fence(ctx, c, func(context.Context, *core.Fenced) error { return nil })
			return err
		}},
		{"closed: Get", core.ErrClosed, func() error { _, err := sc.Get(ctx, id); return err }},
		{"closed: Counts", core.ErrClosed, func() error { _, err := sc.Counts(ctx, ""); return err }},
		{"closed: Now", core.ErrClosed, func() error { _, err := sc.Now(ctx); return err }},
		{"closed: Heartbeat", core.ErrClosed, func() error { return sc.Heartbeat(ctx, o) }},
		{"closed: Reap", core.ErrClosed, func() error { _, err := sc.Reap(ctx, core.ReapParams{}); return err }},
	}...)

	if e.cfg.Misconfigured != nil {
		bad := e.cfg.Misconfigured(e.t)
		if bad == nil {
			e.t.Fatal("Config.Misconfigured returned a nil *sql.DB")
		}
		p3 := e.newPrefix()
		if _, err := safeOpen(ctx, bad, e.d, core.Options{Prefix: p3, Migrate: true}); err == nil {
			e.t.Errorf("core.Open on a database missing a setting %s depends on succeeded, want an error naming the setting", e.d.Name())
		} else if !errors.Is(err, core.ErrMisconfigured) {
			e.t.Errorf("core.Open on a misconfigured database: %v, want an error matching core.ErrMisconfigured", err)
		} else {
			e.t.Logf("core.Open on a misconfigured database: %v", err)
		}
		if v, err := migrations.Version(ctx, bad, e.d, p3); err != nil || v != 0 {
			e.t.Errorf("after the refused Open the misconfigured database is at version %d (%v), want 0: nothing created", v, err)
		}
	}

	for _, tc := range cases {
		err := safeCall(tc.fn)
		if !errors.Is(err, tc.want) {
			e.t.Errorf("%s = %v, want an error matching %q", tc.name, err, tc.want)
		}
	}
	if n := e.total(""); n != items {
		e.t.Errorf("bad input changed the number of items from %d to %d", items, n)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {barriers}"); n != 0 {
		e.t.Errorf("bad input left %d barriers", n)
	}
	if d := itemDiff(before, e.get(id)); d != "" {
		e.t.Errorf("bad input changed the claimed item: %s", d)
	}
	// The claim survived it all.
	e.complete(e.s, c, `{"ok":true}`)

	// An escaped backslash before u0000 is text, not NUL: it is stored
	// and read back as it was.
	text := `{"a":"\\u0000 is six characters"}`
	got := e.get(e.enqueueOne(e.s, core.ItemSpec{Queue: queue + "-text", Payload: []byte(text)}))
	var back, want map[string]string
	if err := json.Unmarshal(got.Payload, &back); err != nil || json.Unmarshal([]byte(text), &want) != nil || back["a"] != want["a"] {
		e.t.Errorf("payload %s read back as %s (%v)", text, got.Payload, err)
	}
}

// safeOpen is core.Open with a panic turned into an error.
func safeOpen(ctx context.Context, db *sql.DB, d dialect.Dialect, opts core.Options) (s *core.Store, err error) {
	err = safeCall(func() error {
		var err error
		s, err = core.Open(ctx, db, d, opts)
		return err
	})
	return s, err
}

// safeCall runs fn and turns a panic into an error, so that one panicking
// case fails as itself instead of ending the subtest.
func safeCall(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}

// Applications that migrate at start-up may start together: the migration
// lock lets exactly one apply each version.
func testMigrateConcurrent(e *env) {
	const starters = 4
	p := e.newPrefix()
	stores := make([]*core.Store, starters)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range starters {
		wg.Go(func() {
			<-start
			s, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: p, Migrate: true})
			if err != nil {
				e.t.Errorf("start-up %d: core.Open(Migrate): %v", i, err)
			}
			stores[i] = s
		})
	}
	close(start)
	wg.Wait()
	if e.t.Failed() {
		return
	}
	v, err := migrations.Version(e.ctx, e.db, e.d, p)
	if err != nil || v != migrations.LatestVersion {
		e.t.Fatalf("Version = %d, %v; want %d", v, err, migrations.LatestVersion)
	}
	table := migrations.NamesFor(p).Migrations
	count := func(q string) int64 {
		var n int64
		if err := e.db.QueryRowContext(e.ctx, q).Scan(&n); err != nil {
			e.t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	all := migrations.All(p)
	if n := count("SELECT COUNT(*) FROM " + table); n != int64(len(all)) {
		e.t.Errorf("%s has %d rows, want %d (one per version)", table, n, len(all))
	}
	for _, m := range all {
		if n := count(fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE version = %d", table, m.Version)); n != 1 {
			e.t.Errorf("version %d recorded %d times, want once", m.Version, n)
		}
	}
	// Every store works on the same tables.
	x, err := stores[0].Enqueue(e.ctx, core.ItemSpec{Queue: "migrated"})
	if err != nil {
		e.t.Fatalf("Enqueue: %v", err)
	}
	for i, s := range stores {
		if _, err := s.Get(e.ctx, x[0].ID); err != nil {
			e.t.Errorf("store %d: Get: %v", i, err)
		}
	}
	// Opening again finds nothing to do.
	if _, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: p, Migrate: true}); err != nil {
		e.t.Errorf("core.Open(Migrate) on migrated tables: %v", err)
	}
	if n := count("SELECT COUNT(*) FROM " + table); n != int64(len(all)) {
		e.t.Errorf("after another start-up %s has %d rows, want %d", table, n, len(all))
	}
}

// Guarantee 7: transient errors (serialization failures, deadlocks, lock
// timeouts, SQLite's BUSY) are retried, so that contention on one barrier
// row costs time, not failures.
func testTransientRetried(e *env) {
	const workers, perWorker = 16, 8
	const kidsQ = "contend-k"
	e.enqueueOne(e.s, core.ItemSpec{Queue: "contend"})
	b := e.fanOut(e.s, e.claimOne(e.s, e.owner(e.s), "contend"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "contend-join"}}, kids(kidsQ, "k", workers*perWorker))

	stores := make([]*core.Store, workers)
	for i := range stores {
		stores[i] = e.open(core.Options{})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var claimed atomic.Int64
	done := 0
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			owner, err := s.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "conformance"})
			if err != nil {
				e.t.Errorf("worker %d: RegisterOwner: %v", i, err)
				return
			}
			<-start
			for {
				cs, err := s.Claim(e.ctx, core.ClaimParams{Queue: kidsQ, Owner: owner, Limit: 1, Lease: time.Minute})
				if err != nil {
					e.t.Errorf("worker %d: Claim: %v", i, err)
					return
				}
				if len(cs) == 0 {
					return
				}
				if claimed.Add(1) > workers*perWorker {
					e.t.Errorf("worker %d: more claims than children: finished children are claimed again", i)
					return
				}
				if i%2 == 0 {
					held, err := s.Fence(e.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
						return f.Complete(ctx, json.RawMessage(fmt.Sprintf(`{"w":%d}`, i)))
					})
					if !held || err != nil {
						e.t.Errorf("worker %d: Fence+Complete = held %v, %v", i, held, err)
						return
					}
				} else if err := s.Complete(e.ctx, cs[0], nil); err != nil {
					e.t.Errorf("worker %d: Complete: %v", i, err)
					return
				}
				mu.Lock()
				done++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if done != workers*perWorker {
		e.t.Errorf("%d completions succeeded, want %d", done, workers*perWorker)
	}
	got := e.barrier(b.ID)
	if got.Arrived != workers*perWorker || !got.Fired() || e.joinsOf(b.ID) != 1 {
		e.t.Errorf("barrier: arrived %d, fired %v, %d joins; want %d, fired, 1", got.Arrived, got.Fired(), e.joinsOf(b.ID), workers*perWorker)
	}
	var retries uint64
	for _, s := range stores {
		retries += s.Stats().Retries
	}
	e.t.Logf("%d completions of children of one barrier from %d stores at once: %d transaction retries", workers*perWorker, workers, retries)
}

// Guarantee 7: two fences that lock the caller's rows in opposite orders
// deadlock; the database aborts one, the store rolls it back and runs the
// whole fence again (fn included), and both complete. Databases with one
// writer never deadlock, so there it is skipped.
func testTransientDeadlock(e *env) {
	if e.d.Capabilities().SingleWriter {
		e.t.Skipf("%s runs one write transaction at a time: two fences cannot deadlock", e.d.Name())
	}
	side := e.sideTable()
	for _, id := range []string{"x", "y"} {
		if _, err := e.db.ExecContext(e.ctx, e.sideInsert(side), id); err != nil {
			e.t.Fatalf("insert %s: %v", id, err)
		}
	}
	const queue = "deadlock"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	cs := e.claim(e.s, e.owner(e.s), queue, 2)
	if len(cs) != 2 {
		e.t.Fatalf("claimed %d, want 2", len(cs))
	}
	lock := e.d.Rebind("UPDATE " + side + " SET id = id WHERE id = ?")
	stores := []*core.Store{e.open(core.Options{}), e.open(core.Options{})}
	locked := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	var runs [2]atomic.Int64
	var wg sync.WaitGroup
	for i, order := range [][2]string{{"x", "y"}, {"y", "x"}} {
		wg.Go(func() {
			held, err := stores[i].Fence(e.ctx, cs[i], func(ctx context.Context, f *core.Fenced) error {
				runs[i].Add(1)
				if _, err := f.ExecContext(ctx, lock, order[0]); err != nil {
					return err
				}
				// First run only: hold the first row until the other fence
				// holds its own, so that the second lock closes the cycle.
				once[i].Do(func() {
					close(locked[i])
					select {
					case <-locked[1-i]:
					case <-ctx.Done():
					}
				})
				if _, err := f.ExecContext(ctx, lock, order[1]); err != nil {
					return err
				}
				return f.Complete(ctx, nil)
			})
			if err != nil || !held {
				e.t.Errorf("fence %d: held %v, %v; want the deadlock retried away", i, held, err)
			}
		})
	}
	wg.Wait()
	retries := stores[0].Stats().Retries + stores[1].Stats().Retries
	if retries == 0 || runs[0].Load()+runs[1].Load() < 3 {
		e.t.Errorf("%d retries, fn ran %d and %d times; want the deadlock's victim run again", retries, runs[0].Load(), runs[1].Load())
	}
	for _, c := range cs {
		if it := e.get(c.ID); it.State != core.StateCompleted {
			e.t.Errorf("item %s: %s, want completed", c.ID, it.State)
		}
	}
	e.t.Logf("opposite-order fences: %d transaction retries", retries)
}
