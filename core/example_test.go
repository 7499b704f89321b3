package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// The shape of a worker: register, claim, do the work, complete.
func Example() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome", Payload: []byte(`{"to":"ada@example.com"}`)})

	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claims, _ := store.Claim(ctx, core.ClaimParams{Queue: "email", Owner: owner, Limit: 10, Lease: 30 * time.Second})
	for _, c := range claims {
		fmt.Println("working on", c.Kind, string(c.Payload))
		if err := store.Complete(ctx, c, []byte(`{"sent":true}`)); err != nil {
			log.Fatal(err)
		}
	}
	// Output: working on welcome {"to":"ada@example.com"}
}

// Effects written through a fence commit together with the check that the
// claim is still held, or not at all.
func ExampleStore_Fence() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	_, _ = db.ExecContext(ctx, "CREATE TABLE invoices (id TEXT PRIMARY KEY)")

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "billing", Kind: "invoice", Payload: []byte(`"inv-1"`)})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claims, _ := store.Claim(ctx, core.ClaimParams{Queue: "billing", Owner: owner, Limit: 1, Lease: time.Minute})

	held, err := store.Fence(ctx, claims[0], func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.ExecContext(ctx, "INSERT INTO invoices (id) VALUES (?)", "inv-1"); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	fmt.Println("held:", held, "err:", err)
	// Output: held: true err: <nil>
}

// A *sqlx.DB works through its embedded *sql.DB, and EnqueueTx takes a
// *sqlx.Tx: the items exist only if the caller's transaction commits.
func ExampleStore_EnqueueTx() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	dsn, _ := sqlite.DSN(filepath.Join(dir, "app.db"))
	x, _ := sqlx.Open(sqlite.DriverName, dsn)
	defer x.Close()
	store, err := core.Open(ctx, x.DB, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	tx := x.MustBeginTx(ctx, nil)
	_, _ = store.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "outbox", Kind: "order-placed"})
	_ = tx.Rollback()

	tx = x.MustBeginTx(ctx, nil)
	_, _ = store.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "outbox", Kind: "order-placed"})
	_ = tx.Commit()

	counts, _ := store.Counts(ctx, "outbox")
	fmt.Println("available:", counts[core.StateAvailable])
	// Output: available: 1
}

// A subscription wakes a claim loop as soon as an enqueue through the store
// commits; it still polls, for what other processes enqueue where the
// dialect cannot tell it.
func ExampleStore_Subscribe() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	sub, err := store.Subscribe("email")
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	go func() { _, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome"}) }()
	select {
	case <-sub.C:
		fmt.Println("woken: claim now")
	case <-time.After(time.Minute): // the poll interval
		fmt.Println("poll")
	}
	// Output: woken: claim now
}

// A parent fans out into children in pages; when the last child completes,
// the barrier fires once and enqueues the join, which reads every child's
// result in keyset pages.
func ExampleStore_Expand() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claimAll := func(queue string) []core.Claim {
		cs, _ := store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 100, Lease: time.Minute})
		return cs
	}

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "reports", Kind: "build"})
	parent := claimAll("reports")[0]
	_, err := store.Expand(ctx, parent, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "pages", Join: core.JoinSpec{Queue: "merge", Kind: "merge"}},
		Next: func(ctx context.Context, cursor string) (core.ChildPage, error) {
			// Two pages of three children; the cursor is where a resumed
			// dispatch starts again.
			start := map[string]int{"": 0, "3": 3}[cursor]
			var kids []core.ChildSpec
			for i := start; i < start+3; i++ {
				kids = append(kids, core.ChildSpec{Key: fmt.Sprint(i), Queue: "pages", Payload: []byte(fmt.Sprint(i))})
			}
			return core.ChildPage{Children: kids, Next: fmt.Sprint(start + 3), Done: start == 3}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		log.Fatal(err)
	}

	var done []core.Completion
	for _, c := range claimAll("pages") {
		done = append(done, core.Completion{Claim: c, Result: []byte(fmt.Sprintf(`{"page":%s}`, c.Payload))})
	}
	_, _ = store.CompleteMany(ctx, done)

	join := claimAll("merge")[0]
	kids, _ := store.Children(ctx, core.ChildrenParams{Barrier: join.JoinOf, Limit: 100})
	fmt.Println("join sees", len(kids), "children")
	// Output: join sees 6 children
}

// A fan-in whose children are not all done shows among the unfired
// barriers; a monitor would ask only for those older than it expects a
// fan-in to take.
func ExampleStore_UnfiredBarriers() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "reports", Kind: "build"})
	parents, _ := store.Claim(ctx, core.ClaimParams{Queue: "reports", Owner: owner, Limit: 1, Lease: time.Minute})
	_, _ = store.Expand(ctx, parents[0], core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "pages", Join: core.JoinSpec{Queue: "merge"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "1", Queue: "pages"}, {Key: "2", Queue: "pages"}}, Done: true}, nil
		},
	})

	stuck, err := store.UnfiredBarriers(ctx, core.UnfiredBarriersParams{Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range stuck {
		fmt.Printf("%s: %d of %d children done, sealed %v\n", b.Name, b.Arrived+b.Failed, b.Expected, b.Sealed)
	}
	// Output: pages: 0 of 2 children done, sealed true
}

// A paused queue gives no claim anything, in any process, until it is
// resumed.
func ExampleStore_PauseQueue() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "email"})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claim := core.ClaimParams{Queue: "email", Owner: owner, Limit: 10, Lease: time.Minute}

	if err := store.PauseQueue(ctx, "email"); err != nil {
		log.Fatal(err)
	}
	paused, _ := store.Claim(ctx, claim)
	queues, _ := store.Queues(ctx)
	fmt.Println("paused:", len(paused), "claimed;", queues[0].Name, "paused", queues[0].Paused)

	if err := store.ResumeQueue(ctx, "email"); err != nil {
		log.Fatal(err)
	}
	resumed, _ := store.Claim(ctx, claim)
	fmt.Println("resumed:", len(resumed), "claimed")
	// Output:
	// paused: 0 claimed; email paused true
	// resumed: 1 claimed
}

// Every failed attempt stays in the item's history, not only the last.
func ExampleStore_Attempts() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	later, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: time.Hour}) // past the backoff
	enq, _ := store.Enqueue(ctx, core.ItemSpec{Queue: "email", MaxAttempts: 2})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claim := core.ClaimParams{Queue: "email", Owner: owner, Limit: 1, Lease: time.Minute}

	for _, s := range []*core.Store{store, later} {
		cs, _ := s.Claim(ctx, claim)
		_, _ = s.Fail(ctx, cs[0], core.FailParams{Error: fmt.Sprintf("smtp: attempt %d refused", cs[0].Attempt)})
	}
	history, err := store.Attempts(ctx, enq[0].ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range history {
		fmt.Println(a.N, a.Outcome, a.Error)
	}
	// Output:
	// 1 failed smtp: attempt 1 refused
	// 2 failed smtp: attempt 2 refused
}

// A key held only while its item is waiting or running: once the item has
// finished, the same key enqueues a new one.
func ExampleItemSpec_keyStates() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})

	sync := core.ItemSpec{Queue: "sync", Key: "account:42", KeyStates: []core.State{core.StateAvailable, core.StateClaimed}}
	first, _ := store.Enqueue(ctx, sync)
	again, _ := store.Enqueue(ctx, sync)
	fmt.Println("while waiting, existed:", again[0].Existed)

	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claims, _ := store.Claim(ctx, core.ClaimParams{Queue: "sync", Owner: owner, Limit: 1, Lease: time.Minute})
	_ = store.Complete(ctx, claims[0], nil)

	next, _ := store.Enqueue(ctx, sync)
	fmt.Println("once finished, existed:", next[0].Existed)
	done, _ := store.Get(ctx, first[0].ID)
	fmt.Println("finished item's key released:", done.Key == core.ReleasedKey(first[0].ID, "account:42"))
	// Output:
	// while waiting, existed: true
	// once finished, existed: false
	// finished item's key released: true
}
