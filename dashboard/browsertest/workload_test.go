package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/seal"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// xssPayload would set window.__xss if any page let it run as markup.
const (
	xssPayload = `<script>window.__xss=1</script>`
	alertText  = `<script>alert(1)</script>`
	xssError   = `<script>window.__xss=2</script> refused by the relay`
	// sealedSecret is what the sealed item and run carry; no page may
	// show it. sealedKeyID is the id of the key that seals them.
	sealedSecret = "vault-combination-1234"
	sealedKeyID  = "dash-2026"
)

// workload is a SQLite database filled through the public API (the
// worker runtime and pipelines, not rows written by hand), with the ids
// the tests look for. The worker keeps running until the test ends, so
// that owners heartbeat and the running step holds its claim.
type workload struct {
	store *core.Store
	w     []*worker.Worker

	completed []uuid.UUID // email.send, completed with a result
	xss       uuid.UUID   // completed, its payload holding xssPayload
	dead      []uuid.UUID // email.flaky, out of attempts (xssError)
	timedOut  uuid.UUID   // report.slow, dead after its deadline
	available []uuid.UUID // queue "later", which no worker claims
	delayed   uuid.UUID   // queue "later", available in an hour

	firedBarrier uuid.UUID // a fan-out whose parts all completed
	stuckBarrier uuid.UUID // a fan-out whose parts wait in "stuck"

	runCompleted uuid.UUID   // ingest
	runHalted    uuid.UUID   // billing, a permanent failure
	runsWaiting  []uuid.UUID // approval, its step waiting on "approved"
	runRunning   uuid.UUID   // longjob, its step running
	runRelease   uuid.UUID   // release: a fan-out, one branch signed off, three waiting

	spareOwner uuid.UUID // registered by hand, one heartbeat only

	sealedItem uuid.UUID // email.sealed, args and result sealed with sealedKeyID
	runSealed  uuid.UUID // vault, a run sealed with sealedKeyID, completed

	graphs []pipeline.Graph // the engine's pipelines, for the dashboard to draw

	mu       sync.Mutex
	barriers map[uuid.UUID]uuid.UUID // report.build item -> its barrier
}

// workloadItems is how many email.send items complete: enough for more
// than one page at the dashboard's default page size.
const workloadItems = 120

// newWorkload fills a new SQLite database for t.
func newWorkload(t *testing.T) *workload {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "dash.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	wl := &workload{store: store, barriers: map[uuid.UUID]uuid.UUID{}}

	cfg := worker.Config{
		Queues: map[string]worker.QueueConfig{
			"email": {MaxWorkers: 8}, "reports": {MaxWorkers: 4}, "pipelines": {MaxWorkers: 8},
		},
		PollInterval: 20 * time.Millisecond,
		// The default StaleAfter (30 s): on a loaded machine a heartbeat
		// can wait seconds for the database, and a worker that misses
		// StaleAfter less two intervals stops itself.
		HeartbeatInterval: time.Second,
		// No reaper: the spare owner's heartbeat stays old, for the
		// owners page to show, and nothing is purged.
		ReapInterval: -1,
		Host:         "dash-worker-1",
		// The longjob step runs for the whole test.
		DefaultKind: worker.KindConfig{Timeout: 10 * time.Minute},
	}
	// 20 handlers need more than sqlite.Open's default pool.
	worker.FitPool(store, cfg)
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fast := func(int) time.Duration { return 10 * time.Millisecond }
	worker.Handle(w, "email.send", func(ctx context.Context, job *worker.Job[map[string]string]) error {
		out, err := json.Marshal(map[string]string{"sending_to": job.Args["to"]})
		if err != nil {
			return err
		}
		if err := job.SetProgress(core.Progress{Done: 1, Total: 1, Output: out}); err != nil {
			return err
		}
		return job.SetResult(map[string]any{"delivered": true, "to": job.Args["to"]})
	})
	worker.Handle(w, "email.flaky", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return errors.New(xssError)
	}, worker.KindConfig{MaxAttempts: 3, Backoff: fast})
	worker.Handle(w, "report.part", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return job.SetResult(map[string]int{"rows": 42})
	})
	worker.Handle(w, "report.join", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return job.SetResult("merged")
	})
	worker.Handle(w, "report.build", func(ctx context.Context, job *worker.Job[fanArgs]) error {
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "parts", Join: core.JoinSpec{Queue: "reports", Kind: "report.join"}})
			if err != nil {
				return err
			}
			var parts []core.ChildSpec
			for i := range job.Args.Parts {
				parts = append(parts, core.ChildSpec{Key: fmt.Sprintf("part-%d", i), Queue: job.Args.Queue, Kind: "report.part", Payload: json.RawMessage(fmt.Sprintf(`{"part":%d}`, i))})
			}
			if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "done", Children: parts}); err != nil {
				return err
			}
			if _, err := f.Seal(ctx, b.ID); err != nil {
				return err
			}
			wl.mu.Lock()
			wl.barriers[job.ID()] = b.ID
			wl.mu.Unlock()
			return nil
		})
	})

	eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})
	if err != nil {
		t.Fatal(err)
	}
	ingest := mustDefine(t, "ingest", pipeline.Then(
		pipeline.Step("fetch", func(_ context.Context, url string) ([]string, error) {
			return []string{url + "/a", url + "/b", url + "/c"}, nil
		}),
		pipeline.Expand("pages", func(_ context.Context, pages []string) ([]string, error) { return pages, nil },
			pipeline.Step("parse", func(_ context.Context, page string) (int, error) { return len(page), nil }),
			func(ctx context.Context, r *pipeline.Results[int]) (int, error) { return r.Len(), nil }),
	))
	billing := mustDefine(t, "billing", pipeline.Step("charge", func(_ context.Context, in map[string]any) (string, error) {
		return "", pipeline.Permanent(errors.New("card declined: " + alertText))
	}))
	approval := mustDefine(t, "approval", pipeline.Then(
		pipeline.Step("draft", func(_ context.Context, in string) (string, error) { return "draft of " + in, nil }),
		pipeline.Await("approve", "approved", time.Hour, func(_ context.Context, in string, sig map[string]any, timedOut bool) (string, error) {
			if timedOut {
				return "", errors.New("no approval")
			}
			return in + " approved", nil
		}),
	))
	// A fan-out whose branches each deploy, then wait for a sign-off:
	// the run page's tree with a barrier in progress and waiting steps.
	release := mustDefine(t, "release", pipeline.Then(
		pipeline.Step("build", func(_ context.Context, version string) ([]string, error) {
			return []string{"eu-west", "us-east", "ap-south", "sa-east"}, nil
		}),
		pipeline.Expand("targets", func(_ context.Context, regions []string) ([]string, error) { return regions, nil },
			pipeline.Then(
				pipeline.Step("deploy", func(_ context.Context, region string) (string, error) { return region, nil }),
				pipeline.Await("verify", "verified", time.Hour, func(_ context.Context, region string, sig map[string]any, timedOut bool) (string, error) {
					return region + " verified", nil
				}),
			),
			func(ctx context.Context, r *pipeline.Results[string]) (int, error) { return r.Len(), nil }),
	))
	longjob := mustDefine(t, "longjob", pipeline.Step("crunch", func(ctx context.Context, in int) (int, error) {
		<-ctx.Done() // runs until the worker stops
		return 0, ctx.Err()
	}))
	for _, d := range []pipeline.Definition{ingest, billing, approval, release, longjob} {
		if err := eng.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	wl.graphs = eng.Graphs()

	// A second worker runs the handler that hangs past its deadline, on
	// a queue of its own: a kind's Timeout must exceed its worker's
	// StaleAfter plus a heartbeat, so this one's are shorter than the
	// default (yet lenient: a loaded machine can keep a heartbeat waiting
	// for seconds).
	slow, err := worker.New(store, worker.Config{
		Queues:            map[string]worker.QueueConfig{"slow": {MaxWorkers: 1}, "vault": {MaxWorkers: 2}},
		PollInterval:      20 * time.Millisecond,
		HeartbeatInterval: time.Second,
		StaleAfter:        10 * time.Second,
		ReapInterval:      -1,
		Host:              "dash-worker-slow",
	})
	if err != nil {
		t.Fatal(err)
	}
	worker.Handle(slow, "report.slow", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		<-ctx.Done() // hangs past its deadline
		return ctx.Err()
	}, worker.KindConfig{Timeout: 12 * time.Second, MaxAttempts: 1})

	// The same worker runs a kind and a pipeline sealed with a keyring
	// (package seal), on a queue of their own: the dashboard holds no key.
	ring, err := seal.NewKeyring(sealedKeyID, map[string][]byte{sealedKeyID: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	sealedMail := worker.NewKind[map[string]string]("email.sealed", worker.KindOptions[map[string]string]{Codec: ring})
	sealedMail.Handle(slow, func(ctx context.Context, job *worker.Job[map[string]string]) error {
		return job.SetResult(map[string]string{"delivered_to": job.Args["to"]})
	})
	vaultEng, err := pipeline.New(store, slow, pipeline.EngineOptions{Queue: "vault", Codec: ring})
	if err != nil {
		t.Fatal(err)
	}
	vault := mustDefine(t, "vault", pipeline.Then(
		pipeline.Step("stash", func(ctx context.Context, in string) (string, error) {
			return in + " stashed", pipeline.SetRunContext(ctx, "note", in)
		}),
		pipeline.Step("seal", func(_ context.Context, in string) (string, error) { return in + " and sealed", nil }),
	))
	if err := vaultEng.Register(vault); err != nil {
		t.Fatal(err)
	}

	for _, w := range []*worker.Worker{w, slow} {
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wl.w = []*worker.Worker{w, slow}
	t.Cleanup(func() { wl.stop(t) })

	// Items.
	var specs []core.ItemSpec
	for i := range workloadItems {
		specs = append(specs, core.ItemSpec{Queue: "email", Kind: "email.send", Payload: json.RawMessage(fmt.Sprintf(`{"to":"user%03d@example.com"}`, i))})
	}
	specs = append(specs, core.ItemSpec{Queue: "email", Kind: "email.send", Payload: json.RawMessage(`{"to":"` + xssPayload + `","note":"` + alertText + `"}`)})
	specs = append(specs,
		core.ItemSpec{Queue: "email", Kind: "email.flaky", Payload: json.RawMessage(`{"to":"flaky1@example.com"}`)},
		core.ItemSpec{Queue: "email", Kind: "email.flaky", Payload: json.RawMessage(`{"to":"flaky2@example.com"}`)},
		core.ItemSpec{Queue: "slow", Kind: "report.slow", Payload: json.RawMessage(`{"month":"2026-11"}`)},
		core.ItemSpec{Queue: "later", Kind: "sms.send", Payload: json.RawMessage(`{"to":"+15550001"}`)},
		core.ItemSpec{Queue: "later", Kind: "sms.send", Payload: json.RawMessage(`{"to":"+15550002"}`)},
		core.ItemSpec{Queue: "later", Kind: "sms.send", Payload: json.RawMessage(`{"to":"+15550003"}`)},
		core.ItemSpec{Queue: "later", Kind: "sms.reminder", Payload: json.RawMessage(`{"to":"+15550004"}`), Delay: time.Hour},
		core.ItemSpec{Queue: "reports", Kind: "report.build", Payload: json.RawMessage(`{"queue":"reports","parts":3}`)},
		core.ItemSpec{Queue: "reports", Kind: "report.build", Payload: json.RawMessage(`{"queue":"stuck","parts":4}`)},
	)
	enq, err := store.Enqueue(ctx, specs...)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(enq))
	for i, e := range enq {
		ids[i] = e.ID
	}
	wl.completed, ids = ids[:workloadItems], ids[workloadItems:]
	wl.xss, ids = ids[0], ids[1:]
	wl.dead, ids = ids[:2], ids[2:]
	wl.timedOut, ids = ids[0], ids[1:]
	wl.available, ids = ids[:3], ids[3:]
	wl.delayed, ids = ids[0], ids[1:]
	firedParent, stuckParent := ids[0], ids[1]

	// Runs.
	trigger := func(d pipeline.Definition, in any) uuid.UUID {
		id, err := eng.Trigger(ctx, d, in)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	wl.runCompleted = trigger(ingest, "https://example.com/feed")
	wl.runHalted = trigger(billing, json.RawMessage(`{"customer":"c-17","note":"`+xssPayload+`"}`))
	wl.runsWaiting = []uuid.UUID{trigger(approval, "invoice 7"), trigger(approval, "invoice 8")}
	wl.runRunning = trigger(longjob, 7)
	wl.runRelease = trigger(release, "v2.4.0")

	sealed, err := sealedMail.Enqueue(ctx, store, map[string]string{"to": sealedSecret}, worker.EnqueueParams{Queue: "vault"})
	if err != nil {
		t.Fatal(err)
	}
	wl.sealedItem = sealed.ID
	if wl.runSealed, err = vaultEng.Trigger(ctx, vault, sealedSecret); err != nil {
		t.Fatal(err)
	}
	waitItem(t, store, wl.sealedItem, func(it core.Item) bool { return it.State == core.StateCompleted })
	waitRun(t, store, wl.runSealed, core.RunCompleted)

	wl.spareOwner, err = store.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "report-builder-2", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}

	// Wait for the workload to settle: every item that can finish has.
	for _, id := range append(append([]uuid.UUID{wl.xss, wl.timedOut, firedParent, stuckParent}, wl.completed...), wl.dead...) {
		waitItem(t, store, id, func(it core.Item) bool { return it.State.Terminal() })
	}
	for _, id := range wl.dead {
		waitItem(t, store, id, func(it core.Item) bool { return it.State == core.StateDead })
	}
	waitRun(t, store, wl.runCompleted, core.RunCompleted)
	waitRun(t, store, wl.runHalted, core.RunHalted)
	for _, id := range wl.runsWaiting {
		// The run stays running in the runs table; its step waits.
		waitFor(t, "run "+id.String()+" waits on approved", func() (bool, error) {
			items, err := store.RunItems(ctx, core.RunItemsParams{Run: id, Limit: 10})
			for _, it := range items {
				if it.WaitName == "approved" {
					return true, err
				}
			}
			return false, err
		})
	}
	waitFor(t, "the release's four branches wait", func() (bool, error) {
		n, err := waitingSteps(store, wl.runRelease, "verified")
		return n == 4, err
	})
	if err := eng.Signal(ctx, wl.runRelease, "verified", map[string]string{"by": "ops"}, pipeline.SignalOptions{Key: "first"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "one release branch signed off", func() (bool, error) {
		bs, err := browse.New(store).RunBarriers(ctx, browse.RunBarriersParams{Run: wl.runRelease})
		return len(bs) == 1 && bs[0].Arrived == 1, err
	})
	waitFor(t, "the longjob step is claimed", func() (bool, error) {
		items, err := store.RunItems(ctx, core.RunItemsParams{Run: wl.runRunning, Limit: 10})
		return len(items) > 0 && items[0].State == core.StateClaimed, err
	})
	wl.firedBarrier = wl.barrierOf(t, firedParent)
	wl.stuckBarrier = wl.barrierOf(t, stuckParent)
	waitFor(t, "the fired fan-out's join completes", func() (bool, error) {
		b, err := store.GetBarrier(ctx, wl.firedBarrier)
		if err != nil || b.FiredAt.IsZero() {
			return false, err
		}
		join, err := store.Get(ctx, b.JoinItemID)
		return join.State == core.StateCompleted, err
	})
	return wl
}

// stop stops the workers (once): what the tests change then stays as
// they left it.
func (wl *workload) stop(t *testing.T) {
	t.Helper()
	wl.mu.Lock()
	ws := wl.w
	wl.w = nil
	wl.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, w := range ws {
		if err := w.Stop(ctx); err != nil {
			// A worker whose heartbeats starved on a loaded machine
			// counts itself lost and stops: what it did is in the
			// database, and the tests check the database.
			t.Logf("stop a worker: %v", err)
		}
	}
}

// waitingSteps counts the run's items waiting on signal.
func waitingSteps(store *core.Store, run uuid.UUID, signal string) (int, error) {
	items, err := store.RunItems(context.Background(), core.RunItemsParams{Run: run, Limit: 100})
	n := 0
	for _, it := range items {
		if it.WaitName == signal && !it.State.Terminal() {
			n++
		}
	}
	return n, err
}

// fanArgs is a report.build payload: how many parts, in which queue.
type fanArgs struct {
	Queue string `json:"queue"`
	Parts int    `json:"parts"`
}

func mustDefine[I, O any](t *testing.T, name string, f pipeline.Flow[I, O]) *pipeline.Pipeline[I, O] {
	t.Helper()
	p, err := pipeline.Define(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor waits until cond holds. It is no timed assertion: the bound
// only keeps a broken workload from hanging the run.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ok, err := cond()
		if err != nil && !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after two minutes", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitItem(t *testing.T, store *core.Store, id uuid.UUID, cond func(core.Item) bool) {
	t.Helper()
	waitFor(t, "item "+id.String(), func() (bool, error) {
		it, err := store.Get(context.Background(), id)
		return err == nil && cond(it), err
	})
}

func waitRun(t *testing.T, store *core.Store, id uuid.UUID, state core.RunState) {
	t.Helper()
	waitFor(t, fmt.Sprintf("run %s %s", id, state), func() (bool, error) {
		r, err := store.GetRun(context.Background(), id)
		return err == nil && r.State == state, err
	})
}

// barrierOf is the barrier the report.build item parent opened, once
// its handler has run.
func (wl *workload) barrierOf(t *testing.T, parent uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	waitFor(t, "the barrier of "+parent.String(), func() (bool, error) {
		wl.mu.Lock()
		defer wl.mu.Unlock()
		id = wl.barriers[parent]
		return id != uuid.Nil, nil
	})
	return id
}
