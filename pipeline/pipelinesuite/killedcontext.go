package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/pipeline"
)

// The environment that makes the test binary the worker process that
// RunKilledContext kills.
const (
	killCtxDSNEnv    = "PLENUM_PIPELINEKILLCTX_DSN"
	killCtxPrefixEnv = "PLENUM_PIPELINEKILLCTX_PREFIX"
)

const (
	// ctxSteps is the length of the chain RunKilledContext runs.
	ctxSteps = 6
	// ctxHangAt is the steps that complete before the worker process to
	// kill holds the next one's transaction open, its writes made.
	ctxHangAt = 3
)

// contextChain is a chain of ctxSteps steps, each adding 1 and writing
// its name as a key of the run's context.
func contextChain() pipeline.Flow[int, int] {
	step := func(i int) pipeline.Flow[int, int] {
		name := fmt.Sprintf("s%d", i)
		return pipeline.Step(name, func(ctx context.Context, n int) (int, error) {
			return n + 1, pipeline.SetRunContext(ctx, name, n)
		})
	}
	f := step(ctxSteps)
	for i := ctxSteps - 1; i >= 1; i-- {
		f = pipeline.Then(step(i), f)
	}
	return f
}

// RunKilledContext starts a worker process on a chain of steps that each
// write the run's context, and SIGKILLs it while the transaction that
// completes step ctxHangAt+1 is open, after its context write: the
// context then holds the writes of the completed steps only, each by its
// step's item, and a worker of this process finishes the run, the killed
// step's write made once, by its next attempt. t must be a top-level
// test, and RunKilledContext its first call (see RunKilled).
func RunKilledContext(t *testing.T, cfg KilledConfig) {
	runChild(t, cfg, killCtxDSNEnv, killCtxPrefixEnv, killedContextWorker)
	k := setUpKilled(t, cfg)
	ctx, store := k.ctx, k.store
	run, _ := k.kill(t, killCtxDSNEnv, killCtxPrefixEnv, "holding a fence", holdingAny)

	// What the killed process committed: the completed steps' writes and
	// none of the step it held.
	before, err := store.RunContext(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != ctxHangAt {
		t.Errorf("after the kill the context holds %+v; want the %d keys of the completed steps", before, ctxHangAt)
	}
	for _, c := range before {
		it, err := store.Get(ctx, c.WrittenBy)
		if err != nil {
			t.Fatal(err)
		}
		if it.State != core.StateCompleted {
			t.Errorf("key %q written by item %s, which is %s: a write of an uncommitted attempt", c.Key, c.WrittenBy, it.State)
		}
	}

	p, err := pipeline.Define("killedctx", contextChain())
	if err != nil {
		t.Fatal(err)
	}
	r := k.finish(t, k.survivor(t, p), run)
	if string(r.Output) != fmt.Sprint(ctxSteps) {
		t.Fatalf("run output %s, want %d", r.Output, ctxSteps)
	}
	items := map[string]core.Item{}
	for _, s := range r.Steps {
		it, err := store.Get(ctx, s.Item)
		if err != nil {
			t.Fatal(err)
		}
		items[s.Step] = it
	}
	if len(r.Context) != ctxSteps {
		t.Fatalf("context %+v, want one key per step", r.Context)
	}
	for _, c := range r.Context {
		it := items[c.Key]
		if c.WrittenBy != it.ID || string(c.Value) != fmt.Sprint(strings.TrimPrefix(c.Key, "s")[0]-'1') {
			t.Errorf("key %q = %s by %s, want its step's input by its item %s", c.Key, c.Value, c.WrittenBy, it.ID)
		}
	}
	if held := items[fmt.Sprintf("s%d", ctxHangAt+1)]; held.CrashCount == 0 {
		t.Errorf("the held step counts no crash: the kill did not find it running")
	}
}

// killedContextWorker is the process to kill: it triggers the run,
// prints its id, and runs it until ctxHangAt steps have completed; the
// next one's fence, its writes made, holds its transaction open, and the
// process waits there to be killed. It returns only the error that kept
// it from getting there.
func killedContextWorker(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error {
	p, err := pipeline.Define("killedctx", contextChain())
	if err != nil {
		return err
	}
	// Every fence of this process is a step's completion: the one after
	// ctxHangAt of them holds its transaction, before the commit.
	fault.Set(fault.FenceBeforeCommit, fault.Rule{Action: fault.Call, Skip: ctxHangAt, Times: 1, Func: func(context.Context) error {
		fmt.Printf("holding the fence of step %d\n", ctxHangAt+1)
		select {} // to be killed, the transaction open
	}})
	return childRun(d, open, dsn, prefix, p, 0)
}
