package storeworkload

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadProgress reaches the statements of an item's progress: its
// first report (its row opened), a second one (updated), one inside a
// fence, and the progress read.
func workloadProgress(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "progress"})
	must(err)
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "progress", Owner: owner, Limit: 1, Lease: time.Minute})
	must(err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d of progress, want 1", len(cs))
	}
	for _, p := range []core.Progress{{Done: 1, Total: 3}, {Done: 2, Total: 3, Output: json.RawMessage(`{"rows":2}`)}} {
		if held, err := s.SetProgress(ctx, cs[0], p); err != nil || !held {
			t.Fatalf("SetProgress(%+v) = %v, %v", p, held, err)
		}
	}
	held, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
		if err := f.SetProgress(ctx, core.Progress{Done: 3, Total: 3}); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	if err != nil || !held {
		t.Fatalf("fence writing the progress = %v, %v", held, err)
	}
	p, ok, err := s.Progress(ctx, cs[0].ID)
	must(err)
	if !ok || p.Done != 3 || p.Total != 3 || p.Output != nil {
		t.Fatalf("Progress = %+v, %v; want 3 of 3 without output", p, ok)
	}
}
