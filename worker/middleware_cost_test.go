package worker_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// metadataTable is the table of items' tags and metadata, as statements
// name it.
const metadataTable = "item_meta"

// TestMiddleware_MetadataCostsOneReadPerClaimAndOnlyWhenAsked checks, on
// the wire, that a worker whose middleware does not ask for metadata
// sends no statement that reads it, and that one whose middleware asks
// reads it once per claim that returned items, for all of them, and hands
// each call its items' metadata.
func TestMiddleware_MetadataCostsOneReadPerClaimAndOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, asks := range []bool{false, true} {
		name := map[bool]string{false: "not asked", true: "asked"}[asks]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			var tap wiretap.Tap
			db := wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "cost.db"))
			store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu   sync.Mutex
				seen = map[uuid.UUID]string{}
			)
			cfg := fast(map[string]int{"q": 8})
			cfg.Middleware = []worker.Middleware{{Metadata: asks, Wrap: func(next worker.HandlerFunc) worker.HandlerFunc {
				return func(ctx context.Context, c *worker.Call) error {
					mu.Lock()
					for _, it := range c.Items {
						seen[it.ID] = c.Metadata(it.ID).Values["who"]
					}
					mu.Unlock()
					return next(ctx, c)
				}
			}}}
			w, err := worker.New(store, cfg)
			if err != nil {
				t.Fatal(err)
			}
			worker.Handle(w, "k", func(context.Context, *worker.Job[int]) error { return nil })
			specs := make([]core.ItemSpec, 5)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: "q", Kind: "k", Metadata: map[string]string{"who": "ada"}}
			}
			res, err := store.Enqueue(ctx, specs...)
			if err != nil {
				t.Fatal(err)
			}
			tap.Take()
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				waitState(t, store, r.ID, core.StateCompleted)
			}
			if err := w.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			reads := 0
			for _, st := range tap.Take() {
				if strings.Contains(strings.ToLower(st.Query), metadataTable) {
					reads++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range res {
				want := map[bool]string{false: "", true: "ada"}[asks]
				if seen[r.ID] != want {
					t.Errorf("the middleware saw %q as item %s's metadata, want %q", seen[r.ID], r.ID, want)
				}
			}
			switch {
			case !asks && reads != 0:
				t.Errorf("%d statements read metadata, want none: no middleware asked", reads)
			case asks && (reads == 0 || reads > len(res)):
				t.Errorf("%d statements read metadata for 5 items, want one per claim that returned items", reads)
			}
			t.Logf("%s: %d statements read metadata for 5 items", name, reads)
		})
	}
}
