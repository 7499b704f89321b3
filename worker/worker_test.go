package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// TestNew_RefusesBadConfig checks that invalid settings and registrations
// get a *worker.ConfigError, not a panic or a worker that misbehaves.
func TestNew_RefusesBadConfig(t *testing.T) {
	t.Parallel()
	store, err := core.Open(t.Context(), databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "bad_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]worker.QueueConfig{"q": {MaxWorkers: 1}}
	for _, tc := range []struct {
		name string
		cfg  worker.Config
	}{
		{"no queues", worker.Config{}},
		{"no workers", worker.Config{Queues: map[string]worker.QueueConfig{"q": {}}}},
		{"empty queue name", worker.Config{Queues: map[string]worker.QueueConfig{"": {MaxWorkers: 1}}}},
		{"stale below three heartbeats", worker.Config{Queues: q, HeartbeatInterval: 5 * time.Second, StaleAfter: 10 * time.Second}},
		{"timeout below stale plus heartbeat", worker.Config{Queues: q, DefaultKind: worker.KindConfig{Timeout: 20 * time.Second}}},
		{"negative poll", worker.Config{Queues: q, PollInterval: -time.Second}},
		{"bad cron", worker.Config{Queues: q, Periodic: []worker.PeriodicJob{{Name: "p", Cron: "* * *", Item: core.ItemSpec{Queue: "q"}}}}},
		{"periodic without a queue", worker.Config{Queues: q, Periodic: []worker.PeriodicJob{{Name: "p", Every: time.Minute}}}},
		{"negative periodic interval", worker.Config{Queues: q, PeriodicInterval: -time.Second}},
		{"name too long", worker.Config{Queues: q, Name: strings.Repeat("é", core.MaxOwnerNameLen+1)}},
		{"name with NUL", worker.Config{Queues: q, Name: "a\x00b"}},
		{"name not UTF-8", worker.Config{Queues: q, Name: "\xff"}},
		{"host too long", worker.Config{Queues: q, Host: strings.Repeat("h", 256)}},
	} {
		var ce *worker.ConfigError
		if _, err := worker.New(store, tc.cfg); !errors.As(err, &ce) {
			t.Errorf("%s: New = %v, want a *ConfigError", tc.name, err)
		}
	}
	if _, err := worker.New(nil, worker.Config{Queues: q}); err == nil {
		t.Error("New(nil store) succeeded")
	}
	w, err := worker.New(store, worker.Config{Queues: q})
	if err != nil {
		t.Fatal(err)
	}
	noop := func(ctx context.Context, job *worker.Job[json.RawMessage]) error { return nil }
	w.HandleFunc("k", noop)
	w.HandleFunc("k", noop)
	w.HandleFunc("short", noop, worker.KindConfig{Timeout: time.Second})
	w.HandleFunc("nil", nil)
	err = w.Start(context.Background())
	var ce *worker.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Start after bad registrations = %v, want a *ConfigError", err)
	}
	for _, want := range []string{"twice", "short", "nil"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start's error %q does not mention %q", err, want)
		}
	}
	if w.Owner() != uuid.Nil {
		t.Error("a worker that refused to start registered an owner")
	}
}

// TestStart_OwnerCarriesTheName checks that Config.Name labels the owner
// the worker registers, as the owners' readers (Store.Owners, the
// dashboard, inspect) show it.
func TestStart_OwnerCarriesTheName(t *testing.T) {
	t.Parallel()
	store, err := core.Open(t.Context(), databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "named_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	const name = "billing-service · eu-1"
	w, err := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"q": {MaxWorkers: 1}}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) }()
	owners, err := browse.New(store).Owners(t.Context(), browse.OwnersParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range owners {
		if o.ID == w.Owner() {
			if o.Name != name {
				t.Errorf("the worker's owner is named %q, want %q", o.Name, name)
			}
			return
		}
	}
	t.Errorf("the worker's owner %s is not among the owners %+v", w.Owner(), owners)
}
