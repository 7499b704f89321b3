package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// An expand over the words of a text, each word checked in two parallel
// branches, the branches combined, the words collapsed into a summary.
func Example() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 8}}, PollInterval: 20 * time.Millisecond})
	eng, _ := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})

	length := pipeline.Step("length", func(_ context.Context, w string) (int, error) { return len(w), nil })
	vowels := pipeline.Step("vowels", func(_ context.Context, w string) (int, error) {
		return strings.Count(w, "a") + strings.Count(w, "e") + strings.Count(w, "i") + strings.Count(w, "o") + strings.Count(w, "u"), nil
	})
	word := pipeline.Divide("word", []pipeline.Flow[string, int]{length, vowels}, func(_ context.Context, n []int) ([2]int, error) {
		return [2]int{n[0], n[1]}, nil
	})
	words := func(_ context.Context, s string) ([]string, error) { return strings.Fields(s), nil }
	summary := func(ctx context.Context, r *pipeline.Results[[2]int]) (string, error) {
		letters, vowels := 0, 0
		err := r.Each(ctx, func(x pipeline.Result[[2]int]) error {
			letters, vowels = letters+x.Value[0], vowels+x.Value[1]
			return nil
		})
		return fmt.Sprintf("%d words, %d letters, %d vowels", r.Len(), letters, vowels), err
	}
	p, err := pipeline.Define("text", pipeline.Expand("words", words, word, summary))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "a durable pipeline on the database you run")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output), len(r.Steps), "steps")
	// Output: completed "8 words, 35 letters, 17 vowels" 34 steps
}

// Define reports every problem of a definition at once.
func ExampleDefine() {
	step := pipeline.Step("step", func(_ context.Context, n int) (int, error) { return n, nil })
	_, err := pipeline.Define("bad name", pipeline.Then(step, pipeline.Then(step, pipeline.Step[int, int]("nil", nil))))
	fmt.Println(err)
	// Output:
	// plenum/pipeline: "bad name": pipeline name "bad name" has characters other than letters, digits and -_.
	// plenum/pipeline: "bad name" at bad name > step: name "step" is used twice (a Flow can appear once per pipeline)
	// plenum/pipeline: "bad name" at bad name > nil: the step's function is nil
}
