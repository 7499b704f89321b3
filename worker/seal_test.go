package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/seal"
	"github.com/plenumdb/plenum/worker"
)

// sealKey is key id's 32-byte AES key in these tests.
func sealKey(id string) []byte { return bytes.Repeat([]byte(id[:1]), 32) }

func sealRing(t *testing.T, current string, ids ...string) *seal.Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for _, id := range ids {
		keys[id] = sealKey(id)
	}
	r, err := seal.NewKeyring(current, keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSeal_RotationWithItemsInFlight checks, on every database, that a
// kind sealed with a keyring (handled one item or a batch at a time)
// stores its args and results sealed, never in clear; that items sealed with the old key and with the new one both
// complete once the ring's current key changes with the old key kept;
// and that an item whose payload does not open is dead at its first
// attempt, with an error that says why: sealed with a key the ring no
// longer holds, tampered with, moved to another kind, not sealed, or
// sealed for a kind whose handler has no codec.
func TestSeal_RotationWithItemsInFlight(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := dbase.Open(t)
			prefix := fmt.Sprintf("seal%08x_", rand.Uint32())
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, dbase.Dialect, prefix); err != nil {
					t.Errorf("drop %s*: %v", prefix, err)
				}
			})
			store, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			ring := sealRing(t, "A", "A")
			kind := worker.NewKind[greeting]("sealed.greet", worker.KindOptions[greeting]{Codec: ring})
			p := worker.EnqueueParams{Queue: "q"}

			// Two items sealed with A wait in the queue; the ring rotates
			// to B, keeping A; two more are sealed with B.
			var ids []uuid.UUID
			for _, to := range []string{"a1", "a2"} {
				r, err := kind.Enqueue(ctx, store, greeting{To: to}, p)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			if err := ring.Set("B", map[string][]byte{"A": sealKey("A"), "B": sealKey("B")}); err != nil {
				t.Fatal(err)
			}
			rs, err := kind.EnqueueMany(ctx, store, []greeting{{To: "b1"}, {To: "b2"}}, p)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rs[0].ID, rs[1].ID)
			for i, id := range ids {
				it, err := store.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]string{true: "A", false: "B"}[i < 2]
				if kid, ok := seal.Inspect(it.Payload); !ok || kid != want || bytes.Contains(it.Payload, []byte(`"to"`)) {
					t.Fatalf("item %d stored %s, want sealed with key id %s", i, it.Payload, want)
				}
			}

			w, err := worker.New(store, fast(map[string]int{"q": 4}))
			if err != nil {
				t.Fatal(err)
			}
			kind.Handle(w, func(ctx context.Context, job *worker.Job[greeting]) error {
				return job.SetResult("hello " + job.Args.To)
			}, worker.KindConfig{MaxAttempts: 3})
			// Another kind, with the same ring, for a payload moved to it.
			other := worker.NewKind[greeting]("sealed.other", worker.KindOptions[greeting]{Codec: ring})
			other.Handle(w, func(ctx context.Context, job *worker.Job[greeting]) error { return nil }, worker.KindConfig{MaxAttempts: 3})
			// A kind registered without the codec refuses a sealed
			// payload rather than decode the envelope as its args.
			bare := worker.NewKind[greeting]("sealed.bare")
			bare.Handle(w, func(ctx context.Context, job *worker.Job[greeting]) error { return nil }, worker.KindConfig{MaxAttempts: 3})
			// A kind handled in batches opens and seals as well.
			batch := worker.NewKind[greeting]("sealed.batch", worker.KindOptions[greeting]{Codec: ring})
			batch.HandleBatch(w, func(ctx context.Context, jobs []*worker.Job[greeting]) error {
				for _, j := range jobs {
					if err := j.SetResult("batched " + j.Args.To); err != nil {
						return err
					}
				}
				return nil
			}, worker.BatchConfig{KindConfig: worker.KindConfig{MaxAttempts: 3}})
			batched, err := batch.EnqueueMany(ctx, store, []greeting{{To: "c1"}, {To: "c2"}}, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Stop(context.Background()) })

			for i, id := range ids {
				it := sealWait(t, store, id, core.StateCompleted)
				if kid, ok := seal.Inspect(it.Result); !ok || kid != "B" {
					t.Errorf("item %d's result stored as %s, want sealed with key id B", i, it.Result)
				}
				res, err := worker.OpenResult(ring, it)
				want := fmt.Sprintf(`"hello %s"`, []string{"a1", "a2", "b1", "b2"}[i])
				if err != nil || string(res) != want {
					t.Errorf("item %d's result opens to %s, %v; want %s", i, res, err, want)
				}
			}

			for i, r := range batched {
				it := sealWait(t, store, r.ID, core.StateCompleted)
				res, err := worker.OpenResult(ring, it)
				if want := fmt.Sprintf(`"batched c%d"`, i+1); err != nil || string(res) != want {
					t.Errorf("batched item %d: payload %s, result %s opens to %s, %v; want %s", i, it.Payload, it.Result, res, err, want)
				}
				if _, ok := seal.Inspect(it.Payload); !ok {
					t.Errorf("batched item %d stored %s, want sealed", i, it.Payload)
				}
			}

			// A producer not yet rotated still seals with A, after A left
			// the consumers' ring.
			producer := sealRing(t, "A", "A")
			stale := worker.NewKind[greeting]("sealed.greet", worker.KindOptions[greeting]{Codec: producer})
			if err := ring.Set("B", map[string][]byte{"B": sealKey("B")}); err != nil {
				t.Fatal(err)
			}
			r, err := stale.Enqueue(ctx, store, greeting{To: "late"}, p)
			if err != nil {
				t.Fatal(err)
			}
			dead := sealWait(t, store, r.ID, core.StateDead)
			if dead.Attempt != 1 || !strings.Contains(dead.LastError, `key id "A"`) || !strings.Contains(dead.LastError, "unknown key id") {
				t.Errorf("item sealed with a removed key: attempt %d, error %q; want dead at attempt 1 naming key id A", dead.Attempt, dead.LastError)
			}

			good, err := kind.Spec(greeting{To: "x"}, p)
			if err != nil {
				t.Fatal(err)
			}
			tampered := good
			var env map[string]any
			if err := json.Unmarshal(good.Payload, &env); err != nil {
				t.Fatal(err)
			}
			ct := []byte(env["ct"].(string))
			ct[0] = map[bool]byte{true: 'B', false: 'A'}[ct[0] == 'A']
			env["ct"] = string(ct)
			if tampered.Payload, err = json.Marshal(env); err != nil {
				t.Fatal(err)
			}
			moved := good
			moved.Kind = other.Name()
			plain := good
			plain.Payload = json.RawMessage(`{"to":"x"}`)
			for _, c := range []struct {
				name string
				spec core.ItemSpec
				want string
			}{
				{"tampered", tampered, "does not open"},
				{"moved to another kind", moved, "does not open"},
				{"not sealed", plain, "not a sealed value"},
				{"sealed for a kind without a codec", func() core.ItemSpec { s := good; s.Kind = bare.Name(); return s }(), "has no KindConfig.Codec"},
			} {
				res, err := store.Enqueue(ctx, c.spec)
				if err != nil {
					t.Fatal(err)
				}
				dead := sealWait(t, store, res[0].ID, core.StateDead)
				if dead.Attempt != 1 || !strings.Contains(dead.LastError, c.want) {
					t.Errorf("%s: attempt %d, error %q; want dead at attempt 1 with %q", c.name, dead.Attempt, dead.LastError, c.want)
				}
			}
		})
	}
}

// sealWait waits for item id to reach state, failing at once if it ends
// in another.
func sealWait(t *testing.T, store *core.Store, id uuid.UUID, state core.State) core.Item {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		it, err := store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case it.State == state:
			return it
		case it.State.Terminal():
			t.Fatalf("item %s is %s (%s), want %s", id, it.State, it.LastError, state)
		case time.Now().After(deadline):
			t.Fatalf("item %s is %s after %v, want %s", id, it.State, testWait, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
