package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Progress: what a handler reports while it runs is read back as written,
// commits with a fence or not at all, and is kept for the item's next
// attempt, which overwrites it when it reports its own.
func testProgressRoundTrip(e *env) {
	const queue = "progress"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 3})
	a := e.owner(e.s)
	c := e.claimOne(e.s, a, queue)
	if p, ok, err := e.s.Progress(e.ctx, id); err != nil || ok {
		e.t.Fatalf("Progress before any report = %+v, %v, %v; want none", p, ok, err)
	}
	for _, p := range []core.Progress{{Done: 1, Total: 10}, {Done: 5, Total: 10, Output: json.RawMessage(`{"rows":[1,2,3],"note":"é"}`)}} {
		if held, err := e.s.SetProgress(e.ctx, c, p); err != nil || !held {
			e.t.Fatalf("SetProgress(%+v) = %v, %v; want held", p, held, err)
		}
	}
	p := e.progress(id)
	if p.Done != 5 || p.Total != 10 || p.Attempt != 1 || p.UpdatedAt.IsZero() || !sameJSON(p.Output, `{"rows":[1,2,3],"note":"é"}`) {
		e.t.Fatalf("Progress = %+v (output %s); want 5 of 10 by attempt 1, with its output", p, p.Output)
	}
	if f, ok := p.Fraction(); !ok || f != 0.5 {
		e.t.Errorf("Fraction = %v, %v; want 0.5", f, ok)
	}

	// A fence that fails writes no progress.
	held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if err := f.SetProgress(ctx, core.Progress{Done: 9, Total: 10}); err != nil {
			return err
		}
		return errors.New("rolled back")
	})
	if !held || err == nil || e.progress(id).Done != 5 {
		e.t.Fatalf("fence that failed = %v, %v, progress %+v; want held, its error, 5 of 10 kept", held, err, e.progress(id))
	}

	// The attempt fails: its progress stays for the next attempt, which
	// replaces it with its own.
	if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "first attempt"}); err != nil {
		e.t.Fatal(err)
	}
	later := e.at(2 * time.Hour) // past any backoff
	c2 := e.claimOne(later, e.owner(later), queue)
	if p := e.progress(id); p.Done != 5 || p.Attempt != 1 {
		e.t.Fatalf("progress seen by attempt 2 = %+v; want attempt 1's 5 of 10", p)
	}
	held, err = e.s.Fence(e.ctx, c2, func(ctx context.Context, f *core.Fenced) error {
		if err := f.SetProgress(ctx, core.Progress{Done: 7, Output: json.RawMessage(`"partial"`)}); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	if !held || err != nil {
		e.t.Fatalf("fence completing with progress = %v, %v", held, err)
	}
	if p := e.progress(id); p.Done != 7 || p.Total != 0 || p.Attempt != 2 || !sameJSON(p.Output, `"partial"`) {
		e.t.Fatalf("progress after the completion = %+v (output %s); want 7 of unknown by attempt 2", p, p.Output)
	}
	if _, ok := e.progress(id).Fraction(); ok {
		e.t.Errorf("Fraction with no total is known")
	}
	// The item finished: nobody holds it, nobody writes its progress.
	if held, err := e.s.SetProgress(e.ctx, c2, core.Progress{Done: 8}); held || err != nil {
		e.t.Errorf("SetProgress after the completion = %v, %v; want not held", held, err)
	}
}

// Progress is fenced: a holder whose claim was reaped and taken by
// another writes nothing, while the new holder writes, both at once.
func testProgressStaleHolder(e *env) {
	const queue = "progress-stale"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	a := e.owner(e.s)
	ca := e.claimOne(e.s, a, queue)
	if held, err := e.s.SetProgress(e.ctx, ca, core.Progress{Done: 1, Output: json.RawMessage(`{"by":"a"}`)}); err != nil || !held {
		e.t.Fatalf("A's SetProgress while it holds the claim = %v, %v", held, err)
	}
	// A stops heartbeating; two hours later a reaper finds it gone, and
	// B claims the item on that clock.
	future := e.at(2 * time.Hour)
	if r, err := future.Reap(e.ctx, core.ReapParams{StaleAfter: time.Hour}); err != nil || r.Crashed != 1 {
		e.t.Fatalf("Reap = %+v, %v; want one claim released", r, err)
	}
	cb := e.claimOne(future, e.owner(future), queue)
	if cb.ID != id || cb.Token == ca.Token {
		e.t.Fatalf("B claimed %s, token %s; want %s with a new token", cb.ID, cb.Token, id)
	}

	// Both report at once, A's reports all stale; a reader watches.
	rounds := e.scaled(40, 10)
	var wg sync.WaitGroup
	errs := make(chan error, 3*rounds+3)
	stop := make(chan struct{})
	report := func(s *core.Store, c core.Claim, by string, wantHeld bool) {
		defer wg.Done()
		for i := range rounds {
			p := core.Progress{Done: int64(i + 2), Output: json.RawMessage(fmt.Sprintf(`{"by":%q,"i":%d}`, by, i))}
			held, err := s.SetProgress(e.ctx, c, p)
			if err != nil || held != wantHeld {
				errs <- fmt.Errorf("%s's SetProgress %d = %v, %v; want held %v", by, i, held, err, wantHeld)
				return
			}
		}
	}
	wg.Add(2)
	go report(e.s, ca, "a", false)
	go report(future, cb, "b", true)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p, ok, err := e.s.Progress(e.ctx, id)
			if err != nil {
				errs <- err
				return
			}
			if ok && p.Done > 1 && strings.Contains(string(p.Output), `"a"`) {
				errs <- fmt.Errorf("the stale holder's report was read: %+v (output %s)", p, p.Output)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	// A reports once more after B's last report: still nothing.
	if held, err := e.s.SetProgress(e.ctx, ca, core.Progress{Done: 999, Output: json.RawMessage(`{"by":"a","last":true}`)}); held || err != nil {
		errs <- fmt.Errorf("A's last SetProgress = %v, %v; want not held", held, err)
	}
	close(errs)
	for err := range errs {
		e.t.Error(err)
	}
	p := e.progress(id)
	if p.Done != int64(rounds+1) || !sameJSON(p.Output, fmt.Sprintf(`{"by":"b","i":%d}`, rounds-1)) {
		e.t.Fatalf("progress after both = %+v (output %s); want B's last report, %d", p, p.Output, rounds+1)
	}
}

// Progress out of bounds is refused with a clear error and writes
// nothing; a report exactly at the bounds is stored.
func testProgressBounds(e *env) {
	const queue = "progress-bounds"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	c := e.claimOne(e.s, e.owner(e.s), queue)
	if held, err := e.s.SetProgress(e.ctx, c, core.Progress{Done: 1, Total: 2}); err != nil || !held {
		e.t.Fatalf("SetProgress = %v, %v", held, err)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", core.MaxProgressOutputBytes-2) + `"`)
	for _, b := range []struct {
		name, want string
		p          core.Progress
	}{
		{"negative done", "Progress.Done", core.Progress{Done: -1}},
		{"negative total", "Progress.Total", core.Progress{Total: -1}},
		{"done over total", "over Total", core.Progress{Done: 3, Total: 2}},
		{"output too large", "over the limit of 16384", core.Progress{Output: append(append(json.RawMessage{}, big[:len(big)-1]...), 'x', '"')}},
		{"output not JSON", "not valid JSON", core.Progress{Output: json.RawMessage(`{"a":`)}},
		{"output with NUL", "NUL", core.Progress{Output: json.RawMessage(`"a\u0000b"`)}},
	} {
		held, err := e.s.SetProgress(e.ctx, c, b.p)
		if held || !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), b.want) {
			e.t.Errorf("SetProgress(%s) = %v, %v; want ErrInvalidInput saying %q", b.name, held, err, b.want)
		}
		_, err = e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error { return f.SetProgress(ctx, b.p) })
		if !errors.Is(err, core.ErrInvalidInput) {
			e.t.Errorf("Fenced.SetProgress(%s) = %v; want ErrInvalidInput", b.name, err)
		}
		if p := e.progress(id); p.Done != 1 || p.Total != 2 || p.Output != nil {
			e.t.Fatalf("after the refused %s: progress %+v; want 1 of 2 kept", b.name, p)
		}
	}
	if held, err := e.s.SetProgress(e.ctx, c, core.Progress{Done: 2, Total: 2, Output: big}); err != nil || !held {
		e.t.Fatalf("SetProgress with output of exactly %d bytes = %v, %v", len(big), held, err)
	}
	if p := e.progress(id); len(p.Output) < len(big) || p.Done != 2 {
		e.t.Fatalf("progress at the bound read back with %d bytes of output, done %d", len(p.Output), p.Done)
	}
}

// Retention deletes an item's progress with its item, and only then.
func testProgressPurged(e *env) {
	const queue = "progress-purge"
	a := e.owner(e.s)
	done := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	cd := e.claimOne(e.s, a, queue)
	running := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	cr := e.claimOne(e.s, a, queue)
	for _, c := range []core.Claim{cd, cr} {
		if held, err := e.s.SetProgress(e.ctx, c, core.Progress{Done: 1, Output: json.RawMessage(`[1]`)}); err != nil || !held {
			e.t.Fatalf("SetProgress = %v, %v", held, err)
		}
	}
	e.complete(e.s, cd, "")
	if n := e.sqlCount("SELECT COUNT(*) FROM {progress}"); n != 2 {
		e.t.Fatalf("%d progress rows, want 2", n)
	}
	r, err := e.at(2*time.Hour).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
	if err != nil || r.Items != 1 {
		e.t.Fatalf("Purge = %+v, %v; want the finished item", r, err)
	}
	if _, ok, err := e.s.Progress(e.ctx, done); ok || err != nil {
		e.t.Errorf("the purged item's progress is still read: %v, %v", ok, err)
	}
	if p := e.progress(running); p.Done != 1 {
		e.t.Errorf("the running item's progress = %+v; want kept", p)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {progress}"); n != 1 {
		e.t.Errorf("%d progress rows after the purge, want the running item's only", n)
	}
}

// progress reads an item's progress, which must exist.
func (e *env) progress(id uuid.UUID) core.Progress {
	e.t.Helper()
	p, ok, err := e.s.Progress(e.ctx, id)
	if err != nil || !ok {
		e.t.Fatalf("Progress(%s) = %v, %v; want one", id, ok, err)
	}
	return p
}

// sameJSON reports whether got is the JSON document want.
func sameJSON(got json.RawMessage, want string) bool { return jsonEqual(got, []byte(want)) }
