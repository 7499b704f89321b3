package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

type mwKey struct{}

// TestMiddleware_WrapsPlainAndBatchHandlers checks that every handler's
// call, plain and batch, runs inside the middleware chain, outermost
// first, that the handler gets the context the middleware passed on, that
// the middleware sees the call's items (with their attempt), and that an
// error a middleware returns is the handler's (its item fails).
func TestMiddleware_WrapsPlainAndBatchHandlers(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store, err := core.Open(ctx, dbase.Open(t), dbase.Dialect, core.Options{Prefix: "mw_", Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				trail = map[string][]string{} // kind → the chain's steps
				seen  = map[uuid.UUID]int{}   // item → attempt the middleware saw
			)
			note := func(kind, s string) { mu.Lock(); trail[kind] = append(trail[kind], s); mu.Unlock() }
			layer := func(name string) worker.Middleware {
				return worker.Middleware{Wrap: func(next worker.HandlerFunc) worker.HandlerFunc {
					return func(ctx context.Context, c *worker.Call) error {
						note(c.Kind, fmt.Sprintf("%s>%s batch=%v n=%d", name, c.Queue, c.Batch, len(c.Items)))
						mu.Lock()
						for _, it := range c.Items {
							seen[it.ID] = it.Attempt
						}
						mu.Unlock()
						if name == "outer" && c.Kind == "refused" {
							return errors.New("refused by middleware")
						}
						err := next(context.WithValue(ctx, mwKey{}, name), c)
						note(c.Kind, name+"<")
						return err
					}
				}}
			}
			cfg := fast(map[string]int{"q": 4})
			cfg.Middleware = []worker.Middleware{layer("outer"), layer("inner")}
			w, err := worker.New(store, cfg)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan string, 3)
			worker.Handle(w, "plain", func(ctx context.Context, job *worker.Job[int]) error {
				done <- "plain saw " + fmt.Sprint(ctx.Value(mwKey{}))
				return nil
			})
			worker.HandleBatch(w, "batch", func(ctx context.Context, jobs []*worker.Job[int]) error {
				done <- fmt.Sprintf("batch of %d saw %v", len(jobs), ctx.Value(mwKey{}))
				return nil
			}, worker.BatchConfig{MaxBatch: 2, MaxWait: time.Second})
			worker.Handle(w, "refused", func(ctx context.Context, job *worker.Job[int]) error {
				done <- "refused handler ran"
				return nil
			})
			res, err := store.Enqueue(ctx,
				core.ItemSpec{Queue: "q", Kind: "plain"},
				core.ItemSpec{Queue: "q", Kind: "batch"}, core.ItemSpec{Queue: "q", Kind: "batch"},
				core.ItemSpec{Queue: "q", Kind: "refused", MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background())
			got := map[string]bool{}
			deadline := time.After(testWait)
			for len(got) < 2 {
				select {
				case s := <-done:
					got[s] = true
				case <-deadline:
					t.Fatalf("handlers ran: %v", got)
				}
			}
			for _, want := range []string{"plain saw inner", "batch of 2 saw inner"} {
				if !got[want] {
					t.Errorf("handler calls %v, want %q", got, want)
				}
			}
			dead := waitState(t, store, res[3].ID, core.StateDead)
			if !strings.Contains(dead.LastError, "refused by middleware") {
				t.Errorf("refused item's last error %q, want the middleware's", dead.LastError)
			}
			if err := w.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case s := <-done:
				t.Errorf("%s: a middleware that returns without next must keep the handler from running", s)
			default:
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range res {
				if seen[r.ID] != 1 {
					t.Errorf("middleware saw item %s at attempt %d, want 1", r.ID, seen[r.ID])
				}
			}
			for kind, want := range map[string]string{
				"plain":   "outer>q batch=false n=1 inner>q batch=false n=1 inner< outer<",
				"batch":   "outer>q batch=true n=2 inner>q batch=true n=2 inner< outer<",
				"refused": "outer>q batch=false n=1",
			} {
				if got := strings.Join(trail[kind], " "); got != want {
					t.Errorf("%s's chain: %q, want %q", kind, got, want)
				}
			}
		})
	}
}

// waitState waits for item id to reach state and returns it.
func waitState(t *testing.T, store *core.Store, id uuid.UUID, state core.State) core.Item {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		it, err := store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if it.State == state {
			return it
		}
		if time.Now().After(deadline) {
			t.Fatalf("item %s is %s after %v, want %s", id, it.State, testWait, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfig_RefusesMiddlewareWithoutWrap checks that New names a
// middleware without its function.
func TestConfig_RefusesMiddlewareWithoutWrap(t *testing.T) {
	t.Parallel()
	store, err := core.Open(t.Context(), databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "mwbad_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fast(map[string]int{"q": 1})
	cfg.Middleware = []worker.Middleware{{Metadata: true}}
	_, err = worker.New(store, cfg)
	var ce *worker.ConfigError
	if !errors.As(err, &ce) || ce.Field != "Middleware[0].Wrap" {
		t.Errorf("New = %v, want a ConfigError naming Middleware[0].Wrap", err)
	}
}
