package worker_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

type greeting struct {
	To string `json:"to"`
}

// greet is the kind the tests below declare once, for handler and enqueues.
var greet = worker.NewKind[greeting]("greet")

// TestKind_EveryEnqueueReachesTheKindsHandler checks that items enqueued
// through a Kind, alone, in bulk and inside the caller's transaction,
// reach the handler registered through the same Kind with their args
// decoded, and that a rolled-back transaction enqueued nothing.
func TestKind_EveryEnqueueReachesTheKindsHandler(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := core.Open(ctx, databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "kind_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	p := worker.EnqueueParams{Queue: "q"}
	if _, err := greet.Enqueue(ctx, store, greeting{To: "ada"}, p); err != nil {
		t.Fatal(err)
	}
	if _, err := greet.EnqueueMany(ctx, store, []greeting{{To: "bob"}, {To: "cy"}}, p); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		to     string
		commit bool
	}{{"dee", true}, {"rolled-back", false}} {
		tx, err := store.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := greet.EnqueueTx(ctx, store, tx, []greeting{{To: c.to}}, p); err != nil {
			t.Fatal(err)
		}
		end := tx.Rollback
		if c.commit {
			end = tx.Commit
		}
		if err := end(); err != nil {
			t.Fatal(err)
		}
	}

	w, err := worker.New(store, fast(map[string]int{"q": 2}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	all := make(chan struct{})
	greet.Handle(w, func(ctx context.Context, job *worker.Job[greeting]) error {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, job.Args.To); len(got) == 4 {
			close(all)
		}
		return nil
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stoptest.Await(t, all, testWait, "the four greetings")
	if err := stoptest.Stop(t, w.Stop, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"ada", "bob", "cy", "dee"}; !slices.Equal(got, want) {
		t.Errorf("the handler got %q, want %q", got, want)
	}
	counts, err := store.Counts(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if counts[core.StateCompleted] != 4 || counts[core.StateAvailable] != 0 {
		t.Errorf("queue counts %v, want 4 completed and nothing else", counts)
	}
}

// TestKind_RefusesWhatItCannotEnqueue checks that args that do not encode
// are refused naming the kind (and the element, in bulk), that one key
// for several items, an unnamed kind, a missing queue, store or
// transaction are refused naming the field, and that none of them
// enqueues anything.
func TestKind_RefusesWhatItCannotEnqueue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := core.Open(ctx, databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "kindbad_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	p := worker.EnqueueParams{Queue: "q"}
	callback := worker.NewKind[func()]("callback")
	_, err = callback.Enqueue(ctx, store, func() {}, p)
	checkRefused(t, "a func", err, `"callback"`, "args")
	_, err = worker.NewKind[float64]("ratio").EnqueueMany(ctx, store, []float64{1, 2, math.Inf(1)}, p)
	checkRefused(t, "an infinite number", err, `"ratio"`, "args[2]")
	_, err = greet.EnqueueMany(ctx, store, []greeting{{To: "a"}, {To: "b"}}, worker.EnqueueParams{Queue: "q", Key: "k"})
	checkRefused(t, "one key for two items", err, `"greet"`, "EnqueueParams.Key")
	_, err = greet.Enqueue(ctx, store, greeting{}, worker.EnqueueParams{Queue: "q", KeyStates: []core.State{core.StateAvailable}})
	checkRefused(t, "KeyStates without a key", err, `"greet"`, "EnqueueParams.KeyStates")
	_, err = greet.Enqueue(ctx, store, greeting{}, worker.EnqueueParams{Queue: "q", KeyPeriod: time.Hour})
	checkRefused(t, "KeyPeriod without a key", err, `"greet"`, "EnqueueParams.KeyPeriod")
	_, err = greet.Enqueue(ctx, store, greeting{}, worker.EnqueueParams{Queue: "q", Key: "k", KeyPeriod: time.Millisecond})
	checkRefused(t, "a KeyPeriod under a second", err, `"greet"`, "KeyPeriod")
	_, err = greet.EnqueueMany(ctx, store, nil, p)
	checkRefused(t, "no args", err, `"greet"`, "args")
	_, err = worker.Kind[greeting]{}.Enqueue(ctx, store, greeting{}, p)
	checkRefused(t, "an unnamed kind", err, "Kind")
	_, err = greet.Enqueue(ctx, store, greeting{}, worker.EnqueueParams{})
	checkRefused(t, "no queue", err, `"greet"`, "Queue")
	_, err = greet.Enqueue(ctx, nil, greeting{}, p)
	checkRefused(t, "a nil store", err, `"greet"`, "store")
	_, err = greet.EnqueueTx(ctx, nil, nil, []greeting{{}}, p)
	checkRefused(t, "a nil store in a transaction", err, `"greet"`, "store")
	_, err = greet.EnqueueTx(ctx, store, nil, []greeting{{}}, p)
	checkRefused(t, "a nil transaction", err, `"greet"`, "tx")
	if n, err := store.Counts(ctx, "q"); err != nil || n[core.StateAvailable] != 0 {
		t.Errorf("refused enqueues left items: %v, %v", n, err)
	}
}

// TestKind_KeyOptionsReachTheStore checks that EnqueueParams' KeyStates
// and KeyPeriod are the enqueue's: a key held only while live is taken
// from a finished item, and a key per period is stored with its period.
func TestKind_KeyOptionsReachTheStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			store, err := core.Open(ctx, dbase.Open(t), dbase.Dialect, core.Options{Prefix: "kindkeys_", Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			live := worker.EnqueueParams{Queue: "keys", Key: "k", KeyStates: []core.State{core.StateAvailable, core.StateClaimed}}
			first, err := greet.Enqueue(ctx, store, greeting{To: "a"}, live)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := greet.Enqueue(ctx, store, greeting{To: "b"}, live); err != nil || !again.Existed || again.ID != first.ID {
				t.Fatalf("the live key again: %+v, %v; want %s existed", again, err, first.ID)
			}
			if err := store.Cancel(ctx, first.ID); err != nil {
				t.Fatal(err)
			}
			tx, err := store.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := greet.EnqueueTx(ctx, store, tx, []greeting{{To: "c"}}, live)
			if err != nil {
				_ = tx.Rollback()
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if rs[0].Existed {
				t.Errorf("the key of a cancelled item, KeyStates live: %+v, want a new item", rs[0])
			}
			hourly := worker.EnqueueParams{Queue: "keys", Key: "h", KeyPeriod: time.Hour}
			h, err := greet.EnqueueMany(ctx, store, []greeting{{To: "d"}}, hourly)
			if err != nil {
				t.Fatal(err)
			}
			it, err := store.Get(ctx, h[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, at, ok := strings.Cut(it.Key, "@"); !ok || !strings.HasPrefix(it.Key, "h@") || !strings.HasSuffix(at, ":00:00.000000Z") {
				t.Errorf("key per hour stored as %q, want h@<the hour>", it.Key)
			}
		})
	}
}

func checkRefused(t *testing.T, what string, err error, mentions ...string) {
	t.Helper()
	if !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("%s: err = %v, want core.ErrInvalidInput", what, err)
		return
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%s: %q does not mention %s", what, err, m)
		}
	}
}

// TestKind_FlowKeyFromArgs checks that Spec takes a kind's flow key from
// its args unless EnqueueParams gives one, and that a cost without a
// key, a key the store refuses and two KindOptions are refused naming
// the field, enqueueing nothing.
func TestKind_FlowKeyFromArgs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := core.Open(ctx, databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "kindflow_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	byTo := worker.NewKind("greet.flow", worker.KindOptions[greeting]{FlowKey: func(g greeting) string { return g.To }})
	p := worker.EnqueueParams{Queue: "q"}
	for _, c := range []struct {
		p          worker.EnqueueParams
		wantKey    string
		wantCost   int
		kind       worker.Kind[greeting]
		kindKeyArg string
	}{
		{p: p, kind: byTo, kindKeyArg: "ada", wantKey: "ada"},
		{p: worker.EnqueueParams{Queue: "q", FlowKey: "given", Cost: 4}, kind: byTo, kindKeyArg: "ada", wantKey: "given", wantCost: 4},
		{p: p, kind: byTo, kindKeyArg: "", wantKey: ""},
		{p: worker.EnqueueParams{Queue: "q", FlowKey: "given"}, kind: greet, kindKeyArg: "ada", wantKey: "given"},
	} {
		spec, err := c.kind.Spec(greeting{To: c.kindKeyArg}, c.p)
		if err != nil || spec.FlowKey != c.wantKey || spec.Cost != c.wantCost {
			t.Errorf("Spec with %+v, args to %q: flow key %q cost %d, %v; want %q and %d", c.p, c.kindKeyArg, spec.FlowKey, spec.Cost, err, c.wantKey, c.wantCost)
		}
	}
	_, err = greet.Enqueue(ctx, store, greeting{To: "a"}, worker.EnqueueParams{Queue: "q", Cost: 2})
	checkRefused(t, "a cost without a key", err, `"greet"`, "EnqueueParams.Cost")
	_, err = byTo.EnqueueMany(ctx, store, []greeting{{To: "a"}, {To: strings.Repeat("x", 201)}}, p)
	checkRefused(t, "a key too long from the kind's function", err, `"greet.flow"`, "FlowKey")
	_, err = greet.Enqueue(ctx, store, greeting{}, worker.EnqueueParams{Queue: "q", FlowKey: "k", Cost: core.MaxCost + 1})
	checkRefused(t, "a cost too high", err, `"greet"`, "Cost")
	twice := worker.NewKind("twice", worker.KindOptions[greeting]{}, worker.KindOptions[greeting]{})
	_, err = twice.Enqueue(ctx, store, greeting{}, p)
	checkRefused(t, "two KindOptions", err, `"twice"`, "KindOptions")
	if n, err := store.Counts(ctx, "q"); err != nil || n[core.StateAvailable] != 0 {
		t.Errorf("refused enqueues left items: %v, %v", n, err)
	}
}
