package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/privatedb"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

// TestWorker_FailoverToSyncStandby_LosesNothingAcknowledged and
// TestWorker_FailoverToAsyncStandby_RunsLostCompletionsAgain kill a
// PostgreSQL primary while a worker drains items whose handlers write an
// audit row through a fence, and promote its streaming standby; the
// worker, whose DSN names both servers with
// target_session_attrs=read-write, reconnects by itself to the promoted
// standby and finishes the run. Before the kill the standby stops
// receiving the primary's log, while the run goes on: a standby fallen
// behind, the case where the two kinds differ.
//
// With a synchronous standby the primary acknowledges no commit after
// that: every completion acknowledged before the kill is on the promoted
// standby, and no item's completion is acknowledged twice. With an
// asynchronous one the primary goes on acknowledging completions the
// standby never receives: they come back, as available or still claimed,
// and run again (at least once). On either, the promoted standby holds
// no audit row without its item's completion, nor the reverse, since
// both commit in one transaction; and in the end every item is completed
// once, with one audit row.
func TestWorker_FailoverToSyncStandby_LosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	failover(t, true)
}

func TestWorker_FailoverToAsyncStandby_RunsLostCompletionsAgain(t *testing.T) {
	t.Parallel()
	failover(t, false)
}

const (
	// failoverItems is how many items a failover test drains.
	failoverItems = 300
	// failoverAhead is how many completions the primary acknowledges
	// after its asynchronous standby stopped receiving: the completions
	// that the failover loses.
	failoverAhead = 20
)

// acks counts, per item, the completions whose fence returned nil: the
// completions the worker's handler saw acknowledged.
type acks struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *acks) add(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n[id]++
}

// snapshot returns a copy of the counts.
func (a *acks) snapshot() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := make(map[string]int, len(a.n))
	for id, n := range a.n {
		c[id] = n
	}
	return c
}

func failover(t *testing.T, synchronous bool) {
	primary := privatedb.Postgres(t, privatedb.Options{})
	standby := primary.Standby(t, privatedb.StandbyOptions{Synchronous: synchronous})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := postgres.Open(privatedb.FailoverDSN(primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, postgres.Dialect(), "id")
	specs := make([]core.ItemSpec, failoverItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "q", Kind: "audited", MaxAttempts: 100}
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	cfg := fast(map[string]int{"q": 4})
	// The failover (a kill, a promotion) must not look like a dead
	// worker: the worker's bound on failed heartbeats is far above it.
	cfg.HeartbeatInterval, cfg.StaleAfter = 500*time.Millisecond, 10*time.Second
	// A completion lost with its primary, of an item claimed before the
	// standby fell behind, leaves the item claimed by this live worker
	// until its lease runs out: kept short, so that it runs again soon.
	cfg.DefaultKind.Timeout = 12 * time.Second
	cfg.DefaultKind.Backoff = func(int) time.Duration { return 0 }
	cfg.Logger = slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	acked := &acks{n: map[string]int{}}
	w.HandleFunc("audited", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		// The work the handler stands for, so that the failover falls
		// while items are being claimed, run and completed.
		time.Sleep(5 * time.Millisecond)
		err := job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id) VALUES ('%s')", audit, job.ID()))
			return err
		})
		if err == nil {
			acked.add(job.ID().String())
		}
		return err
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	completed := func() int {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+"items WHERE state = 'completed'").Scan(&n); err != nil {
			return -1 // the failover is under way: ask again
		}
		return n
	}
	if !awaitCount(t, ctx, completed, failoverItems/3) {
		t.Fatalf("fewer than %d items completed within %v", failoverItems/3, testWait)
	}

	if err := standby.Detach(primary); err != nil {
		t.Fatal(err)
	}
	before := acked.snapshot()
	// An asynchronous standby's primary goes on acknowledging; a
	// synchronous one's holds its sessions' commits, waiting for the
	// standby.
	onPrimary, err := postgres.Open(primary.DSN())
	if err != nil {
		t.Fatal(err)
	}
	progressed := func() int {
		var waiting int
		_ = onPrimary.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&waiting)
		if waiting > 0 {
			return failoverAhead
		}
		return len(acked.snapshot()) - len(before)
	}
	if !awaitCount(t, ctx, progressed, failoverAhead) {
		t.Fatalf("neither %d completions acknowledged nor a commit waiting for the standby within %v", failoverAhead, testWait)
	}
	onPrimary.Close()

	if err := primary.Stop(privatedb.Immediate); err != nil {
		t.Fatal(err)
	}
	// No completion is acknowledged from here to the promotion: the
	// primary is gone, the standby refuses writes.
	ackedAtKill := acked.snapshot()
	at := time.Now()
	if err := standby.Promote(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the primary (%d completions acknowledged, %d after the standby fell behind) and promoted the standby in %v",
		len(ackedAtKill), len(ackedAtKill)-len(before), time.Since(at).Round(time.Millisecond))

	// What the promoted standby holds, read at once: the worker may have
	// run some lost items again already.
	promoted, err := postgres.Open(standby.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer promoted.Close()
	var unmatched int
	if err := promoted.QueryRowContext(ctx, fmt.Sprintf(`SELECT
		(SELECT COUNT(*) FROM %[1]s a WHERE NOT EXISTS (SELECT 1 FROM %[2]sitems i WHERE CAST(i.id AS VARCHAR(200)) = a.id AND i.state = 'completed')) +
		(SELECT COUNT(*) FROM %[2]sitems i WHERE i.state = 'completed' AND NOT EXISTS (SELECT 1 FROM %[1]s a WHERE a.id = CAST(i.id AS VARCHAR(200))))`,
		audit, prefix)).Scan(&unmatched); err != nil {
		t.Fatal(err)
	}
	if unmatched != 0 {
		t.Errorf("the promoted standby holds %d audit rows without their item's completion or completions without their audit row", unmatched)
	}
	states := map[string]string{}
	rows, err := promoted.QueryContext(ctx, "SELECT CAST(id AS VARCHAR(200)), state FROM "+prefix+"items")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			t.Fatal(err)
		}
		states[id] = state
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	back := map[string]int{} // the lost completions' items, by the state they came back in
	for id := range ackedAtKill {
		if states[id] != "completed" {
			back[states[id]]++
		}
	}
	missing := len(ackedAtKill) - countCompleted(states, ackedAtKill)
	t.Logf("acknowledged completions missing on the promoted standby when read: %d (their items back as %v)", missing, back)

	if !awaitCount(t, ctx, completed, failoverItems) {
		t.Fatalf("not every item completed after the failover within %v", testWait)
	}
	select {
	case <-w.Done():
		t.Fatalf("the worker stopped by itself: %v", w.Err())
	default:
	}
	stop, cancelStop := context.WithTimeout(ctx, testWait)
	defer cancelStop()
	if err := w.Stop(stop); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var auditRows, distinct int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+audit).Scan(&auditRows, &distinct); err != nil {
		t.Fatal(err)
	}
	if auditRows != failoverItems || distinct != failoverItems {
		t.Errorf("%d audit rows for %d items (%d distinct), want one each", auditRows, failoverItems, distinct)
	}
	final := acked.snapshot()
	twice, aheadOnce := 0, 0
	for id, n := range final {
		if n > 1 {
			twice++
		}
		if _, ok := before[id]; !ok && ackedAtKill[id] > 0 && n < 2 {
			aheadOnce++ // acknowledged after the standby fell behind, and not again
		}
	}
	t.Logf("items whose completion was acknowledged twice: %d", twice)
	if synchronous {
		if missing != 0 || twice != 0 {
			t.Errorf("with a synchronous standby: %d acknowledged completions lost in the failover, %d items' completions acknowledged twice; want none", missing, twice)
		}
		return
	}
	// Every completion acknowledged after the asynchronous standby fell
	// behind was lost with the primary, and its item ran again.
	if aheadOnce != 0 || twice < failoverAhead {
		t.Errorf("with an asynchronous standby fallen behind: %d items acknowledged twice, %d of those acknowledged after it fell behind only once; want every one twice, at least %d", twice, aheadOnce, failoverAhead)
	}
}

// countCompleted counts the items of ids that states holds completed.
func countCompleted(states map[string]string, ids map[string]int) int {
	n := 0
	for id := range ids {
		if states[id] == "completed" {
			n++
		}
	}
	return n
}
