package sqlcheck

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/oracle"
)

// unchecked is the oracle dialect without its Check (which needs go-ora's
// driver and a server), so that a store opens on the recorder.
type unchecked struct{ dialect.Dialect }

func (unchecked) Check(context.Context, *sql.DB) error { return nil }

func (u unchecked) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return u.Dialect.(dialect.TableProber).TableExists(ctx, q, table)
}

// The core's statements as the core renders them for Oracle: a store on
// the recorder runs every operation of its API (each meets canned answers
// and may stop early, so a statement past the first failure of an
// operation is not reached), and every statement recorded is checked.
func TestOracle_CoreStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, rec := openRecorder(2)
	defer db.Close()
	store, err := core.Open(ctx, db, unchecked{oracle.Dialect()}, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.UUID(cannedID)
	owner := uuid.UUID(cannedID)
	big := json.RawMessage(`"` + strings.Repeat("x", 5000) + `"`)
	claim := core.Claim{Item: core.Item{ID: id, Queue: "q"}, Token: id, Owner: owner}
	ops := map[string]func() error{
		"Enqueue": func() error {
			_, err := store.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k", Key: "a", Payload: big},
				core.ItemSpec{Queue: "q", Key: "b", Delay: time.Minute}, core.ItemSpec{Queue: "q"})
			return err
		},
		"RegisterOwner": func() error {
			_, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "h", PID: 1})
			return err
		},
		"Heartbeat": func() error { return store.Heartbeat(ctx, owner) },
		"Claim": func() error {
			_, err := store.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Minute})
			return err
		},
		"Complete":     func() error { return store.Complete(ctx, claim, json.RawMessage(`{}`)) },
		"CompleteMany": func() error { _, err := store.CompleteMany(ctx, []core.Completion{{Claim: claim}}); return err },
		"Fail":         func() error { _, err := store.Fail(ctx, claim, core.FailParams{Error: "e"}); return err },
		"Release":      func() error { return store.Release(ctx, claim, time.Second) },
		"Extend":       func() error { return store.Extend(ctx, claim, time.Minute) },
		"ExtendMany": func() error {
			other := claim
			other.Item.ID, other.Token = uuid.UUID{15: 2}, uuid.UUID{15: 2}
			_, err := store.ExtendMany(ctx, []core.Claim{claim, other}, time.Minute)
			return err
		},
		"Lost": func() error { _, err := store.Lost(ctx, []core.Claim{claim}); return err },
		"Purge": func() error {
			_, err := store.Purge(ctx, core.PurgeParams{OlderThan: time.Hour, Limit: 10})
			return err
		},
		"Fence": func() error {
			_, err := store.Fence(ctx, claim, func(ctx context.Context, f *core.Fenced) error {
				b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "q"}, OnChildFailure: core.FailBarrier})
				if err != nil {
					return err
				}
				if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, Children: []core.ChildSpec{{Key: "c1"}, {Key: "c2"}}}); err != nil {
					return err
				}
				if _, err := f.Seal(ctx, b.ID); err != nil {
					return err
				}
				if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "q"}); err != nil {
					return err
				}
				return f.Complete(ctx, nil)
			})
			return err
		},
		"Expand": func() error {
			_, err := store.Expand(ctx, claim, core.ExpandParams{
				Barrier: core.BarrierSpec{Name: "e", Join: core.JoinSpec{Queue: "q"}, OnChildFailure: core.FailBarrier},
				Next: func(context.Context, string) (core.ChildPage, error) {
					return core.ChildPage{Children: []core.ChildSpec{{Key: "x"}}, Done: true}, nil
				},
			})
			return err
		},
		"Cancel":          func() error { return store.Cancel(ctx, id) },
		"Revive":          func() error { return store.Revive(ctx, id) },
		"Get":             func() error { _, err := store.Get(ctx, id); return err },
		"Counts":          func() error { _, err := store.Counts(ctx, "q"); return err },
		"GetBarrier":      func() error { _, err := store.GetBarrier(ctx, id); return err },
		"UnfiredBarriers": func() error { _, err := store.UnfiredBarriers(ctx, core.UnfiredBarriersParams{Limit: 5}); return err },
		"Children":        func() error { _, err := store.Children(ctx, core.ChildrenParams{Barrier: id, Limit: 5}); return err },
		"Reap": func() error {
			_, err := store.Reap(ctx, core.ReapParams{StaleAfter: time.Minute, Limit: 10})
			return err
		},
		"Deregister":  func() error { return store.Deregister(ctx, owner) },
		"Now":         func() error { _, err := store.Now(ctx); return err },
		"PauseQueue":  func() error { return store.PauseQueue(ctx, "q") },
		"ResumeQueue": func() error { return store.ResumeQueue(ctx, "q") },
		"Queues":      func() error { _, err := store.Queues(ctx); return err },
		"Attempts":    func() error { _, err := store.Attempts(ctx, id); return err },
		"EnqueueDue": func() error {
			_, err := store.EnqueueDue(ctx, core.ScheduleSpec{Name: "s", Every: time.Minute, Item: core.ItemSpec{Queue: "q"}})
			return err
		},
	}
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		// Canned answers never run out, so an operation that loops until
		// the work is done (Reap) is stopped by its context.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		err := ops[n]()
		cancel()
		if err != nil {
			t.Logf("%s stopped early on the canned answers: %v", n, err)
		}
	}
	seen := map[string]bool{}
	for _, s := range rec.Statements() {
		if seen[s] {
			continue
		}
		seen[s] = true
		checkOracle(t, "core", s)
	}
	// The statements of the second schema version must have been reached:
	// the attempts' INSERT ... SELECT, the claim's pause filter, the
	// queues' and schedules' writes.
	for _, want := range []string{"INSERT INTO plenum_attempts", "NOT EXISTS (SELECT 1 FROM plenum_queues", "UPDATE plenum_queues", "plenum_schedules"} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(seen)), func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no statement recorded holds %q", want)
		}
	}
	t.Logf("%d distinct statements of the core, rendered for Oracle, checked", len(seen))
}
