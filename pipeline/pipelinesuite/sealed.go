package pipelinesuite

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/seal"
)

// sealKey is key id's AES-256 key in the suite.
func sealKey(id string) []byte { return bytes.Repeat([]byte(id[:1]), 32) }

// sealedSecret is in every value the sealed runs carry, and must never
// be stored in clear.
const sealedSecret = "s3cret"

// sealedRotation: with EngineOptions.Codec, a run's input, output, step
// inputs and outputs, fan-out children, context values and signals are
// stored sealed, never in clear. Runs sealed under key A that wait for a
// signal complete after the ring's current key became B with A kept; a
// run sealed with A whose key left the ring halts at its next step with
// an error naming the key id, and once A is back, Revive completes it.
func sealedRotation(e *env) {
	ring, err := seal.NewKeyring("A", map[string][]byte{"A": sealKey("A")})
	if err != nil {
		e.t.Fatal(err)
	}
	tag := pipeline.Step("tag", func(ctx context.Context, s string) (string, error) {
		if err := pipeline.SetRunContext(ctx, "who", "ctx-"+s); err != nil {
			return "", err
		}
		return s + " b c", nil
	})
	words := func(_ context.Context, s string) ([]string, error) { return strings.Fields(s), nil }
	upper := pipeline.Step("upper", func(_ context.Context, w string) (string, error) { return strings.ToUpper(w), nil })
	joined := func(ctx context.Context, r *pipeline.Results[string]) (string, error) {
		out := make([]string, r.Len())
		err := r.Each(ctx, func(x pipeline.Result[string]) error { out[x.Index] = x.Value; return nil })
		return strings.Join(out, ","), err
	}
	wait := pipeline.Await("ok", "ok", 0, func(ctx context.Context, s string, a approval, _ bool) (string, error) {
		in, err := pipeline.RunInput[string](ctx)
		if err != nil {
			return "", err
		}
		who, _, err := pipeline.RunContext[string](ctx, "who")
		return s + "|" + a.By + "|" + in + "|" + who, err
	})
	p := define(e, "sealed", pipeline.Then(tag, pipeline.Then(pipeline.Expand("words", words, upper, joined), wait)))
	eng := e.engine(pipeline.EngineOptions{Codec: ring}, p)

	// Two runs sealed with A wait for their signal; the ring rotates to
	// B, keeping A; a third run is sealed with B.
	a1, a2 := e.trigger(eng, p, sealedSecret+"-1"), e.trigger(eng, p, sealedSecret+"-2")
	e.waitRun(eng, a1, pipeline.StateWaiting)
	e.waitRun(eng, a2, pipeline.StateWaiting)
	if err := ring.Set("B", map[string][]byte{"A": sealKey("A"), "B": sealKey("B")}); err != nil {
		e.t.Fatal(err)
	}
	b := e.trigger(eng, p, sealedSecret+"-3")
	e.waitRun(eng, b, pipeline.StateWaiting)
	for _, run := range []uuid.UUID{a1, b} {
		if err := eng.Signal(e.ctx, run, "ok", approval{By: sealedSecret + "-by"}); err != nil {
			e.t.Fatal(err)
		}
	}
	for i, run := range []uuid.UUID{a1, b} {
		n := []string{"1", "3"}[i]
		r := e.waitRun(eng, run, pipeline.StateCompleted)
		want := fmt.Sprintf("S3CRET-%[1]s,B,C|%[2]s-by|%[2]s-%[1]s|ctx-%[2]s-%[1]s", n, sealedSecret)
		if got := output[string](e, r); got != want {
			e.t.Errorf("run %s output %q, want %q", n, got, want)
		}
	}
	for run, key := range map[uuid.UUID]string{a1: "A", b: "B"} {
		e.checkSealed(run, key)
	}

	// A leaves the ring while a2, sealed with it, still waits.
	if err := ring.Set("B", map[string][]byte{"B": sealKey("B")}); err != nil {
		e.t.Fatal(err)
	}
	if err := eng.Signal(e.ctx, a2, "ok", approval{By: sealedSecret + "-by"}); err != nil {
		e.t.Fatal(err)
	}
	h := e.waitRun(eng, a2, pipeline.StateHalted)
	if h.Halt == nil || h.Halt.Step != "ok" || !strings.Contains(h.Halt.Detail, `key id "A"`) || !strings.Contains(h.Halt.Detail, "unknown key id") {
		e.t.Fatalf("run sealed with a removed key halted with %+v, want its step ok naming key id A", h.Halt)
	}
	if err := ring.Set("B", map[string][]byte{"A": sealKey("A"), "B": sealKey("B")}); err != nil {
		e.t.Fatal(err)
	}
	if err := eng.Revive(e.ctx, a2); err != nil {
		e.t.Fatal(err)
	}
	r := e.waitRun(eng, a2, pipeline.StateCompleted)
	if got := output[string](e, r); !strings.HasPrefix(got, "S3CRET-2,B,C|") {
		e.t.Errorf("revived run output %q", got)
	}
}

// checkSealed checks that nothing run stored holds the secret in clear,
// and that its input is sealed with key id key.
func (e *env) checkSealed(run uuid.UUID, key string) {
	e.t.Helper()
	r, err := e.store.GetRun(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	if id, ok := seal.Inspect(r.Input); !ok || id != key {
		e.t.Errorf("run %s input stored as %s, want sealed with key id %s", run, r.Input, key)
	}
	if _, ok := seal.Inspect(r.Output); !ok {
		e.t.Errorf("run %s output stored as %s, want sealed", run, r.Output)
	}
	stored := map[string][]byte{"input": r.Input, "output": r.Output}
	items, err := e.store.RunItems(e.ctx, core.RunItemsParams{Run: run, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(items) < 6 {
		e.t.Errorf("run %s has %d items, want a step, an expand, 3 children, a collapse and an await", run, len(items))
	}
	for _, it := range items {
		stored["payload of "+it.ID.String()] = it.Payload
		stored["result of "+it.ID.String()] = it.Result
	}
	entries, err := e.store.RunContext(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	sigs, err := e.store.Signals(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(entries) != 1 || len(sigs) != 1 {
		e.t.Errorf("run %s: %d context values and %d signals, want one each", run, len(entries), len(sigs))
	}
	for _, c := range entries {
		stored["context "+c.Key] = c.Value
	}
	for _, s := range sigs {
		stored["signal "+s.Name] = s.Payload
	}
	for what, b := range stored {
		if bytes.Contains(bytes.ToLower(b), []byte(sealedSecret)) {
			e.t.Errorf("run %s stored its %s in clear: %s", run, what, b)
		}
	}
}
