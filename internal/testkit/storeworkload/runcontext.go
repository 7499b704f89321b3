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

// workloadRunContext reaches the statements of a run's context: a key
// written first (its row opened), written again (updated), and the
// context read.
func workloadRunContext(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	run, _, err := s.CreateRun(ctx, core.RunSpec{Name: "ctx"}, core.ItemSpec{Queue: "runctx"})
	must(err)
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "runctx", Owner: owner, Limit: 1, Lease: time.Minute})
	must(err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d of runctx, want 1", len(cs))
	}
	held, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
		if err := f.Complete(ctx, nil); err != nil {
			return err
		}
		if err := f.SetRunContext(ctx, "k", json.RawMessage(`1`)); err != nil {
			return err
		}
		return f.SetRunContext(ctx, "k", json.RawMessage(`{"n":2}`))
	})
	if err != nil || !held {
		t.Fatalf("fence writing the run's context = %v, %v", held, err)
	}
	got, err := s.RunContext(ctx, run.ID)
	must(err)
	if len(got) != 1 || got[0].Key != "k" || got[0].WrittenBy != cs[0].ID {
		t.Fatalf("RunContext = %+v, want k written by %s", got, cs[0].ID)
	}
}
