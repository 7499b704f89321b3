package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// The watcher asks the store only about runs begun a whole poll interval
// ago or more, and cancels those whose claims are lost: a busy queue's
// short runs, and runs claimed long ago whose goroutines have not begun
// yet, cost it no statement.
func TestWatch_AsksOnlyAboutRunsBegunAnIntervalAgo(t *testing.T) {
	t.Parallel()
	const interval = 20 * time.Millisecond
	asked := make(chan []core.Claim, 1)
	w := &Worker{cfg: Config{PollInterval: interval}, running: map[uuid.UUID]*run{}}
	w.bg, w.bgCancel = context.WithCancel(context.Background())
	w.lost = func(_ context.Context, cs []core.Claim) ([]uuid.UUID, error) {
		select {
		case asked <- cs:
		default:
		}
		ids := make([]uuid.UUID, len(cs))
		for i, c := range cs {
			ids[i] = c.ID
		}
		return ids, nil // every claim asked about is lost
	}
	runFrom := func(requested, started time.Time) *run {
		ctx, cancel := context.WithCancelCause(context.Background())
		r := &run{claim: &core.Claim{Item: core.Item{ID: uuid.New()}}, ctx: ctx, cancel: cancel, deadlines: &deadlines{requested: requested}}
		if !started.IsZero() {
			r.started.Store(started.UnixNano())
		}
		w.running[r.claim.ID] = r
		return r
	}
	old := runFrom(time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	young := runFrom(time.Now().Add(-time.Hour), time.Now().Add(time.Hour)) // begun after any tick of this test
	waiting := runFrom(time.Now().Add(-time.Hour), time.Time{})             // claimed long ago, not begun
	w.background.Add(1)
	go w.watch()
	defer func() { w.bgCancel(); w.background.Wait() }()

	var cs []core.Claim
	select {
	case cs = <-asked:
	case <-time.After(time.Minute):
		t.Fatal("the watcher asked nothing within a minute")
	}
	if len(cs) != 1 || cs[0].ID != old.claim.ID {
		t.Errorf("the watcher asked about %d claims, want only the one begun an interval ago", len(cs))
	}
	select {
	case <-old.ctx.Done():
		if !errors.Is(context.Cause(old.ctx), ErrCancelled) {
			t.Errorf("the lost run ended with %v, want ErrCancelled", context.Cause(old.ctx))
		}
	case <-time.After(time.Minute):
		t.Fatal("the lost run was not cancelled")
	}
	if young.ctx.Err() != nil {
		t.Error("a run begun since the last check was cancelled unasked")
	}
	if waiting.ctx.Err() != nil {
		t.Error("a run not begun was asked about and cancelled")
	}
}
