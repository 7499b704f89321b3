package worker_test

import (
	"testing"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/plantedclaim"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// A worker does not start on a database whose claim does not skip the
// rows another session holds: on a planted dialect whose claim locks
// nothing, or waits, Start returns the *dialect.SkipLockedError that says
// which, and registers no owner; with the real dialect it starts. SQLite,
// of one writer, is not probed.
func TestStart_RefusesAClaimThatDoesNotSkipLockedRows(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := dbase.Open(t)
			p := plantedclaim.Prefix(t, db, dbase.Dialect)
			real, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: p, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			w, err := worker.New(real, fast(map[string]int{"q": 1}))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatalf("Start with the real dialect: %v", err)
			}
			if err := stoptest.Stop(t, w.Stop, 10*time.Second); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			for _, v := range plantedclaim.Variants(dbase.Dialect) {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					store, err := core.Open(ctx, db, v.Dialect, core.Options{Prefix: p})
					if err != nil {
						t.Fatal(err)
					}
					w, err := worker.New(store, fast(map[string]int{"q": 1}))
					if err != nil {
						t.Fatal(err)
					}
					err = w.Start(ctx)
					if dbase.Dialect.Capabilities().SingleWriter {
						if err != nil {
							t.Fatalf("one writer, nothing to probe: Start = %v, want nil", err)
						}
						if err := stoptest.Stop(t, w.Stop, 10*time.Second); err != nil {
							t.Fatalf("Stop: %v", err)
						}
						return
					}
					if rerr := v.Refused(err); rerr != nil {
						t.Fatalf("Start: %v", rerr)
					}
					t.Logf("Start: %v", err)
					if owners, err := browse.New(store).Owners(ctx, browse.OwnersParams{}); err != nil || len(owners) != 0 {
						t.Errorf("owners after a refused start: %+v, %v; want none", owners, err)
					}
				})
			}
		})
	}
}
