package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// TestHandleBatch_RefusesBadSettings checks that Start refuses a batch
// kind with a negative MaxBatch, a negative MaxWait, a MaxWait that
// would eat more than a quarter of the batch's Timeout, or a nil
// function, naming the field.
func TestHandleBatch_RefusesBadSettings(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := core.Open(ctx, databases[0].Open(t), databases[0].Dialect, core.Options{Prefix: "batchbad_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	fn := func(context.Context, []*worker.Job[int]) error { return nil }
	for _, tc := range []struct {
		name  string
		cfg   worker.BatchConfig
		fn    func(context.Context, []*worker.Job[int]) error
		field string
	}{
		{"negative MaxBatch", worker.BatchConfig{MaxBatch: -1}, fn, "handler[b].MaxBatch"},
		{"negative MaxWait", worker.BatchConfig{MaxWait: -time.Second}, fn, "handler[b].MaxWait"},
		{"MaxWait over a quarter of Timeout", worker.BatchConfig{MaxWait: time.Minute, KindConfig: worker.KindConfig{Timeout: 2 * time.Minute}}, fn, "handler[b].MaxWait"},
		{"nil function", worker.BatchConfig{}, nil, "handler[b]"},
	} {
		w, err := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"q": {MaxWorkers: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		worker.HandleBatch(w, "b", tc.fn, tc.cfg)
		err = w.Start(ctx)
		var ce *worker.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Field, tc.field) {
			t.Errorf("%s: Start = %v, want a ConfigError naming %s", tc.name, err, tc.field)
		}
		_ = w.Stop(ctx)
	}
}
