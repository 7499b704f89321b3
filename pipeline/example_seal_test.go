package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/seal"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// An engine with a Codec stores its runs' data sealed: the run's input
// and output, each step's input and output, its context and its
// signals. The steps, Get and Wait see them in clear.
func ExampleEngineOptions_sealed() {
	ring, _ := seal.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{7}, 32)})

	dir, _ := os.MkdirTemp("", "plenum-pipeline-seal")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 4}}, PollInterval: 20 * time.Millisecond})
	eng, _ := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines", Codec: ring})

	mask := pipeline.Step("mask", func(_ context.Context, card string) (string, error) {
		return strings.Repeat("*", len(card)-4) + card[len(card)-4:], nil
	})
	p, _ := pipeline.Define("cards", mask)
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "4111111111111111")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	stored, _ := store.GetRun(ctx, run)
	id, sealed := seal.Inspect(stored.Input)
	fmt.Println("input stored sealed:", sealed, "key id", id)
	fmt.Println(r.State, string(r.Input), string(r.Output))
	// Output:
	// input stored sealed: true key id k1
	// completed "4111111111111111" "************1111"
}
