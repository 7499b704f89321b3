package pipelinesuite

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/plenumdb/plenum/pipeline"
)

// Definitions returns every definition the suite registers, built as its
// tests build them and never run: for a reader of definitions (the
// dashboard, which draws them) to cover every kind of node the suite
// exercises. Each subtest runs up to its engine's start, where the
// definitions it made are collected instead; it touches no database on
// the way. The killed-worker tests' definitions come last.
func Definitions(t *testing.T) []pipeline.Definition {
	t.Helper()
	var all []pipeline.Definition
	for _, tc := range tests {
		col := &collected{}
		e := &env{t: t, ctx: t.Context(), prefix: "describe_", collect: col}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tc.run(e)
		}()
		<-done
		if len(col.defs) == 0 {
			t.Fatalf("pipelinesuite: %s started no engine", tc.name)
		}
		all = append(all, col.defs...)
	}
	never := func(string) bool { return false }
	wait := func(_ context.Context, n int) (int, bool, error) { return n, true, nil }
	all = append(all, define(&env{t: t}, "killed", killedFlow(nil, "audit", never)),
		define(&env{t: t}, "waited", waitedFlow(nil, "audit", wait)),
		define(&env{t: t}, "repeated", repeatedFlow(nil, "audit", func(pipeline.Repetition) bool { return false })),
		define(&env{t: t}, "killedctx", contextChain()))
	return all
}

// collected holds the definitions of a subtest run by Definitions.
type collected struct {
	mu   sync.Mutex
	defs []pipeline.Definition
}

// stopAtEngine, in a subtest run by Definitions, keeps the definitions
// its engine would register and ends the subtest's goroutine there.
func (e *env) stopAtEngine(defs []pipeline.Definition) {
	if e.collect == nil {
		return
	}
	e.collect.mu.Lock()
	e.collect.defs = append(e.collect.defs, defs...)
	e.collect.mu.Unlock()
	runtime.Goexit()
}
