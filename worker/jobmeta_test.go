package worker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// TestJob_MetadataIsTheItemsTagsAndValues checks that a handler reads the
// tags and metadata its item was enqueued with, and nothing of another
// item's, whether a middleware had the worker read them for the claim or
// the job reads them itself; an item without any gets none.
func TestJob_MetadataIsTheItemsTagsAndValues(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		for _, viaMiddleware := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/middleware=%v", dbase.Name, viaMiddleware), func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				prefix := "jm_"
				if viaMiddleware {
					prefix = "jmw_"
				}
				store, err := core.Open(ctx, dbase.Open(t), dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
				if err != nil {
					t.Fatal(err)
				}
				cfg := fast(map[string]int{"q": 4})
				if viaMiddleware {
					cfg.Middleware = []worker.Middleware{{Metadata: true, Wrap: func(next worker.HandlerFunc) worker.HandlerFunc { return next }}}
				}
				w, err := worker.New(store, cfg)
				if err != nil {
					t.Fatal(err)
				}
				type seen struct {
					n  int
					md core.Metadata
				}
				got := make(chan seen, 3)
				worker.Handle(w, "k", func(ctx context.Context, job *worker.Job[int]) error {
					md, err := job.Metadata(ctx)
					if err != nil {
						return err
					}
					again, err := job.Metadata(ctx)
					if err != nil || !slices.Equal(again.Tags, md.Tags) || len(again.Values) != len(md.Values) {
						return fmt.Errorf("a second read gave %+v, %v; the first %+v", again, err, md)
					}
					got <- seen{job.Args, md}
					return nil
				})
				if _, err := store.Enqueue(ctx,
					core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte("1"), Tags: []string{"eu", "vip"}, Metadata: map[string]string{"tenant": "acme"}},
					core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte("2"), Metadata: map[string]string{"tenant": "initech"}},
					core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte("3")},
				); err != nil {
					t.Fatal(err)
				}
				startWorker(t, w)
				byArgs := map[int]core.Metadata{}
				for range 3 {
					select {
					case s := <-got:
						byArgs[s.n] = s.md
					case <-ctx.Done():
						t.Fatalf("handlers ran for %d of 3 items", len(byArgs))
					}
				}
				if md := byArgs[1]; !slices.Equal(md.Tags, []string{"eu", "vip"}) || md.Values["tenant"] != "acme" || len(md.Values) != 1 {
					t.Errorf("item 1: %+v, want tags eu, vip and tenant=acme", md)
				}
				if md := byArgs[2]; len(md.Tags) != 0 || md.Values["tenant"] != "initech" || len(md.Values) != 1 {
					t.Errorf("item 2: %+v, want tenant=initech alone", md)
				}
				if md := byArgs[3]; len(md.Tags) != 0 || len(md.Values) != 0 {
					t.Errorf("item 3: %+v, want none", md)
				}
			})
		}
	}
}
