package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Point names an injection point.
type Point string

// The injection points. Each says where it sits and what a fault there
// must leave behind.
const (
	// AfterClaim is in the runtime, after a claim committed and before its
	// handler starts. A fault there leaves the item claimed: the reaper
	// (for a dead process) or the lease (for a stalled one) gives it back.
	// An error is the handler's error; a panic there is not recovered.
	AfterClaim Point = "after-claim"
	// FenceBeforeCommit is in Store.Fence, after the fenced function
	// returned nil and before the transaction commits: a fault there
	// undoes the fence check and everything the function wrote.
	FenceBeforeCommit Point = "fence-before-commit"
	// CompleteBeforeArrival is in a completion's transaction, after the
	// items' update and before their arrivals are counted at their
	// barriers: a fault there leaves the items claimed and the barriers'
	// counts as they were.
	CompleteBeforeArrival Point = "complete-before-arrival"
	// FireBeforeJoin is in the transaction that fires a barrier, after the
	// barrier's conditional update and before its join item's insert: a
	// fault there leaves the barrier unfired and no join item.
	FireBeforeJoin Point = "fire-before-join"
	// DispatchBetweenPages is in Store.Expand, after a page of children
	// committed with its cursor and before the next page is read: the
	// next holder resumes from that cursor.
	DispatchBetweenPages Point = "dispatch-between-pages"
	// ReapBeforeCrashCount is in a reaper batch's transaction, after the
	// crashed claims were released and before the crashes are recorded in
	// the items' history: a fault there leaves the claims held and the
	// crash counts as they were.
	ReapBeforeCrashCount Point = "reap-before-crash-count"
	// RetainBetweenBatches is in Store.Purge, after each batch of deletes
	// committed: what was deleted stays deleted, the rest stays whole.
	RetainBetweenBatches Point = "retain-between-batches"
	// BeforeCompletion is in the runtime, after a handler returned success
	// and before its completion is handed to the completion batch: a fault
	// there leaves the item claimed, for its lease or the reaper to give
	// back and a handler to run again.
	BeforeCompletion Point = "before-completion"
	// OpenBeforeVersion is in core.Open, after the connection check and
	// any migration and before the schema version is read: a test kills
	// the session there to show that the read is retried like any other.
	OpenBeforeVersion Point = "open-before-version"
	// LaneIdleAfterRead is in a claim of keyed items, after it has read
	// that the lanes it found without work have none to come, before it
	// sets them idle and commits. An item handed back to such a lane
	// meanwhile must not leave the lane idle with work in it.
	LaneIdleAfterRead Point = "lane-idle-after-read"
	// LanesBeforeUpdate is where a transaction that gives lanes work (an
	// enqueue, a revive, a limit set) is about to update their rows:
	// before its first update, and after each open of the lanes that
	// update missed. Retention deleting an idle lane there must not leave
	// the new work without a turn.
	LanesBeforeUpdate Point = "lanes-before-update"
	// MigrateBeforeStatement is in the migrator, before each statement of
	// a migration runs; the statement is the hit's Detail. A fault there
	// fails the migration at that statement, as the database refusing it
	// would, leaving what ran before it: the next run completes the
	// version.
	MigrateBeforeStatement Point = "migrate-before-statement"
	// LanesAfterTake is in a claim of keyed items, after it has taken
	// (and locked) the lanes whose turn has come, before it claims their
	// items: a claim begun there finds the lanes it did not take, and
	// must find work in them.
	LanesAfterTake Point = "lanes-after-take"
	// KeysAfterRead is in a claim of keys without limits, after it has
	// read the keys it takes (and moved its store's place in the
	// queue's keys past them), before it claims their items: a claim
	// begun there must take other keys.
	KeysAfterRead Point = "keys-after-read"
	// DeregisterAfterCount is in Deregister, after it has counted the
	// owner's claimed items by lane and before it hands them back: a
	// claim of the owner's own that commits there must not leave its
	// item handed back without a turn for its lane.
	DeregisterAfterCount Point = "deregister-after-count"
)

// Points lists every injection point.
func Points() []Point {
	return []Point{AfterClaim, FenceBeforeCommit, CompleteBeforeArrival, FireBeforeJoin,
		DispatchBetweenPages, ReapBeforeCrashCount, RetainBetweenBatches, BeforeCompletion, OpenBeforeVersion, LaneIdleAfterRead, LanesBeforeUpdate, MigrateBeforeStatement, DeregisterAfterCount, LanesAfterTake, KeysAfterRead}
}

// Action is what a rule does when it fires.
type Action int

// The actions.
const (
	// Error makes Hit return Rule.Err, or an *Injected when Err is nil.
	Error Action = iota + 1
	// Panic makes Hit panic with an *Injected.
	Panic
	// Kill sends SIGKILL to the process (on systems without signals, the
	// nearest equivalent): no deferred code runs, no transaction commits.
	// A line "plenum/fault: kill at <point>" goes to stderr first.
	Kill
	// Stall makes Hit sleep for Rule.Stall, then return nil; if ctx ends
	// first, Hit returns the context's error at once, unless
	// Rule.IgnoreContext is set.
	Stall
	// Call makes Hit return Rule.Func(ctx): for a test that must act, or
	// wait, at the point.
	Call
)

var actionNames = map[Action]string{Error: "error", Panic: "panic", Kill: "kill", Stall: "stall", Call: "call"}

// String returns the action's name as Parse reads it ("stall" for a
// Stall that listens to its context, "hang" for one that does not).
func (a Action) String() string {
	if n, ok := actionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Rule says what a point does when hit.
type Rule struct {
	// Action is what the rule does when it fires. Required.
	Action Action
	// Err is what an Error rule returns; nil gives an *Injected.
	Err error
	// Stall is how long a Stall rule sleeps. Required for Stall.
	Stall time.Duration
	// IgnoreContext makes a Stall rule sleep its whole Stall even after
	// its context ended: a process that does not listen (a long GC pause,
	// a stopped process) rather than one that waits.
	IgnoreContext bool
	// Func is what a Call rule runs. Required for Call.
	Func func(ctx context.Context) error
	// Prob is the chance, in (0, 1], that an eligible hit fires the rule.
	// 0 means 1: every eligible hit fires.
	Prob float64
	// Skip lets the first Skip hits pass before any can fire.
	Skip int
	// Times bounds how many times the rule fires; 0 means no bound.
	Times int
}

// ErrInjected is what every injected error and panic value matches with
// errors.Is.
var ErrInjected = errors.New("plenum/fault: injected fault")

// Injected is the error an Error rule without Err returns, and the value a
// Panic rule panics with.
type Injected struct {
	Point  Point
	Action Action
}

// Error says which point injected which fault.
func (e *Injected) Error() string {
	return fmt.Sprintf("plenum/fault: injected %s at %s", e.Action, e.Point)
}

// Is makes errors.Is(err, ErrInjected) true.
func (e *Injected) Is(target error) bool { return target == ErrInjected }

// validate refuses a rule that could not fire as asked.
func (r Rule) validate() error {
	switch r.Action {
	case Error, Panic, Kill:
	case Stall:
		if r.Stall <= 0 {
			return errors.New("stall needs a positive Stall")
		}
	case Call:
		if r.Func == nil {
			return errors.New("call needs a Func")
		}
	default:
		return fmt.Errorf("unknown action %d", int(r.Action))
	}
	if r.Prob < 0 || r.Prob > 1 {
		return fmt.Errorf("probability %v is outside [0, 1]", r.Prob)
	}
	if r.Skip < 0 || r.Times < 0 {
		return errors.New("skip and times must not be negative")
	}
	return nil
}

// armed is a rule installed for p, with its own counts.
type armed struct {
	Rule
	hits  atomic.Int64 // eligible or not
	fired atomic.Int64
}

// table is the process-wide rules, replaced whole on each change.
type table map[Point]*armed

var (
	// active is nil until a rule is installed in any scope: all Hit reads
	// when faults are off.
	active atomic.Pointer[table]
	mu     sync.Mutex // serialises changes of global
	global = table{}
	// scoped counts rules With installed: they keep faults on for good,
	// since a context's end is not observed.
	scoped atomic.Int64
	fired  sync.Map // Point -> *atomic.Int64
)

// Hit is an injection point: it returns nil at once unless a rule is
// installed for p, in ctx's scope or the process's, and then does what
// the rule says.
func Hit(ctx context.Context, p Point) error {
	if active.Load() == nil {
		return nil
	}
	return hit(ctx, p)
}

// HitWith is Hit at a point that says what it is about to do (the
// statement a migration runs next): a Call rule's Func reads it with
// Detail.
func HitWith(ctx context.Context, p Point, detail string) error {
	if active.Load() == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return hit(context.WithValue(ctx, detailKey{}, detail), p)
}

// detailKey keys the detail HitWith passes a Call rule's Func.
type detailKey struct{}

// Detail returns what the point a Call rule fired at was about to do,
// when it says (HitWith), or "".
func Detail(ctx context.Context) string {
	d, _ := ctx.Value(detailKey{}).(string)
	return d
}

func hit(ctx context.Context, p Point) error {
	a := lookup(ctx, p)
	if a == nil || !a.fire() {
		return nil
	}
	n, _ := fired.LoadOrStore(p, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	switch a.Action {
	case Error:
		if a.Err != nil {
			return a.Err
		}
		return &Injected{Point: p, Action: Error}
	case Panic:
		panic(&Injected{Point: p, Action: Panic})
	case Kill:
		fmt.Fprintf(os.Stderr, "plenum/fault: kill at %s\n", p)
		kill()
		return nil // not reached
	case Stall:
		return stall(ctx, a.Stall, a.IgnoreContext)
	case Call:
		return a.Func(ctx)
	}
	return nil
}

// fire counts a hit and says whether the rule fires on it.
func (a *armed) fire() bool {
	if a.hits.Add(1) <= int64(a.Skip) {
		return false
	}
	if a.Prob > 0 && a.Prob < 1 && rand.Float64() >= a.Prob {
		return false
	}
	if a.Times == 0 {
		a.fired.Add(1)
		return true
	}
	for {
		n := a.fired.Load()
		if n >= int64(a.Times) {
			return false
		}
		if a.fired.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func stall(ctx context.Context, d time.Duration, deaf bool) error {
	if deaf || ctx == nil {
		time.Sleep(d)
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// kill ends the process at once and does not return.
func kill() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // SIGKILL on Unix
	}
	// The signal is asynchronous: do nothing more until it lands.
	for {
		time.Sleep(time.Hour)
	}
}

// scopeKey keys the rules With installs in a context.
type scopeKey struct{}

// scope is one With's rule, linked to the scope it was installed over.
type scope struct {
	point Point
	rule  *armed
	outer *scope
}

func lookup(ctx context.Context, p Point) *armed {
	if ctx != nil {
		sc, _ := ctx.Value(scopeKey{}).(*scope)
		for ; sc != nil; sc = sc.outer {
			if sc.point == p {
				return sc.rule
			}
		}
	}
	if t := active.Load(); t != nil {
		return (*t)[p]
	}
	return nil
}

// With returns a context under which Hit(ctx, p) follows r: for the
// store and runtime calls made with it or with contexts derived from it.
// Installed over another With for p, it replaces it for the new context.
// It panics if r is not a valid rule (a mistake in a test).
func With(ctx context.Context, p Point, r Rule) context.Context {
	if err := r.validate(); err != nil {
		panic(fmt.Sprintf("fault.With(%s): %v", p, err))
	}
	outer, _ := ctx.Value(scopeKey{}).(*scope)
	scoped.Add(1)
	mu.Lock()
	publish()
	mu.Unlock()
	return context.WithValue(ctx, scopeKey{}, &scope{point: p, rule: &armed{Rule: r}, outer: outer})
}

// Set installs r for p in the whole process, replacing any rule Set
// installed for p, and returns the function that removes it again. It
// panics if r is not a valid rule (a mistake in a test).
func Set(p Point, r Rule) (undo func()) {
	if err := r.validate(); err != nil {
		panic(fmt.Sprintf("fault.Set(%s): %v", p, err))
	}
	return install(map[Point]Rule{p: r})
}

// Install installs every rule of rules in the whole process, as Set does
// (the rules Parse returns, say), and returns the function that removes
// them again. Rules are not validated again: pass ones Parse returned or
// Set would accept.
func Install(rules map[Point]Rule) (undo func()) {
	return install(rules)
}

func install(rules map[Point]Rule) func() {
	mu.Lock()
	defer mu.Unlock()
	mine := map[Point]*armed{}
	next := table{}
	for p, a := range global {
		next[p] = a
	}
	for p, r := range rules {
		a := &armed{Rule: r}
		mine[p] = a
		next[p] = a
	}
	global = next
	publish()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			next := table{}
			for p, a := range global {
				if mine[p] != a {
					next[p] = a
				}
			}
			global = next
			publish()
		})
	}
}

// publish makes global what Hit reads; mu must be held. Faults stay on
// while any rule is installed, or once With has been used.
func publish() {
	if len(global) == 0 && scoped.Load() == 0 {
		active.Store(nil)
		return
	}
	t := global
	active.Store(&t)
}

// Fired returns how many times a rule fired at p in this process, in any
// scope.
func Fired(p Point) int64 {
	n, ok := fired.Load(p)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}
