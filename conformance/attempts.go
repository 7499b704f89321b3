package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// History: every finished attempt that did not succeed leaves one row in
// its item's history, in the transaction of its state change, numbered in
// order across retries, timeouts, crashes (which give their attempt back)
// and a revival (which resets the attempt count); Purge deletes an item's
// history with it and nothing else.
func testAttempts(e *env) {
	const queue = "history"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 4})
	a := e.owner(e.s)
	failOf := func(s *core.Store, owner uuid.UUID, p core.FailParams) bool {
		e.t.Helper()
		dead, err := s.Fail(e.ctx, e.claimOne(s, owner, queue), p)
		if err != nil {
			e.t.Fatalf("Fail: %v", err)
		}
		return dead
	}
	// 1: a failure that retries.
	failOf(e.s, a, core.FailParams{Error: "first", RetryIn: time.Second})

	// 2: a timeout: the owner beats at +10 min, its one-minute lease
	// taken then is long gone at +20 min.
	t10 := e.at(10 * time.Minute)
	if err := t10.Heartbeat(e.ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if c := e.claimLease(t10, a, queue, 1, time.Minute); len(c) != 1 {
		e.t.Fatalf("claimed %d, want 1", len(c))
	}
	if r, err := e.at(20*time.Minute).Reap(e.ctx, core.ReapParams{StaleAfter: 15 * time.Minute}); err != nil || r.TimedOut != 1 {
		e.t.Fatalf("Reap = %+v, %v; want one timeout", r, err)
	}

	// 3: a crash, with two other items crashing in the same batch.
	t2h := e.at(2 * time.Hour)
	b := e.owner(t2h)
	if c := e.claim(t2h, b, queue, 1); len(c) != 1 {
		e.t.Fatalf("claimed %d, want 1", len(c))
	}
	others := e.enqueue(e.s, core.ItemSpec{Queue: "history-crash"}, core.ItemSpec{Queue: "history-crash"})
	e.claimAll(t2h, b, "history-crash", 2)
	t3h := e.at(3 * time.Hour)
	if r, err := t3h.Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute}); err != nil || r.Crashed != 3 {
		e.t.Fatalf("Reap = %+v, %v; want three crashes", r, err)
	}
	for _, o := range others {
		e.wantHistory(o.ID, "1 crash")
	}

	// 4: a discard.
	c := e.owner(t3h)
	if !failOf(t3h, c, core.FailParams{Error: "gone", Discard: true}) {
		e.t.Fatal("a discarded item is not dead")
	}
	if it := e.get(id); it.Attempt != 3 || it.CrashCount != 1 {
		e.t.Fatalf("item: attempt %d, crashes %d; want 3 (the crash gave its attempt back), 1", it.Attempt, it.CrashCount)
	}
	// 5: revived (attempt 0 again), it fails on its last attempt, numbered
	// after the rows it has.
	if err := t3h.Revive(e.ctx, id); err != nil {
		e.t.Fatal(err)
	}
	failOf(t3h, c, core.FailParams{Error: "again", RetryIn: time.Second})
	e.wantHistory(id, "1 failed first", "2 timeout", "3 crash", "4 failed gone", "5 failed again")
	h, err := e.s.Attempts(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 1; i < len(h); i++ {
		if h[i].EndedAt.Before(h[i-1].EndedAt) {
			e.t.Errorf("attempt %d ended at %v, before attempt %d at %v", h[i].N, h[i].EndedAt, h[i-1].N, h[i-1].EndedAt)
		}
	}
	if slack := e.clockSlack(); h[0].EndedAt.Before(e.now(e.s).Add(-time.Hour-slack)) || h[4].EndedAt.Before(e.now(t3h).Add(-time.Minute-slack)) {
		e.t.Errorf("attempts ended at %v and %v, not on the clocks of the stores that recorded them", h[0].EndedAt, h[4].EndedAt)
	}

	// Out of attempts: a plain failure, dead.
	last := e.enqueueOne(e.s, core.ItemSpec{Queue: "history-last", MaxAttempts: 1})
	if dead, err := t3h.Fail(e.ctx, e.claimOne(t3h, c, "history-last"), core.FailParams{Error: "bad\x00text"}); err != nil || !dead {
		e.t.Fatalf("Fail on the last attempt = %v, %v; want dead", dead, err)
	}
	e.wantHistory(last, "1 failed bad\uFFFDtext")

	// Retention: the dead items go with their history; the item that
	// will run again keeps its.
	if _, err := t3h.Fail(e.ctx, e.claimOne(e.at(4*time.Hour), c, queue), core.FailParams{Error: "end", Discard: true}); err != nil {
		e.t.Fatal(err)
	}
	live := e.enqueueOne(e.s, core.ItemSpec{Queue: "history-live"})
	if _, err := t3h.Fail(e.ctx, e.claimOne(t3h, c, "history-live"), core.FailParams{Error: "later", RetryIn: time.Hour}); err != nil {
		e.t.Fatal(err)
	}
	if r, err := e.at(48*time.Hour).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil || r.Items != 2 {
		e.t.Fatalf("Purge = %+v, %v; want the 2 dead items", r, err)
	}
	e.wantHistory(id)
	e.wantHistory(last)
	e.wantHistory(live, "1 failed later")
	if n := e.sqlCount("SELECT COUNT(*) FROM " + e.names.Attempts); n != 3 {
		e.t.Errorf("%d attempts rows after Purge, want 3 (the live item's, and the two crashed items' that will run again)", n)
	}
}

// wantHistory checks the history of item, each attempt written as
// "N outcome error" with "lease expired" and the crash text left out.
func (e *env) wantHistory(item uuid.UUID, want ...string) {
	e.t.Helper()
	h, err := e.s.Attempts(e.ctx, item)
	if err != nil {
		e.t.Fatalf("Attempts(%s): %v", item, err)
	}
	got := make([]string, 0, len(h))
	for _, a := range h {
		s := fmt.Sprintf("%d %s", a.N, a.Outcome)
		switch {
		case a.Outcome == core.OutcomeTimeout || a.Outcome == core.OutcomeCrash:
			if a.Error == "" {
				e.t.Errorf("attempt %d (%s) has no reason", a.N, a.Outcome)
			}
		case a.Error != "":
			s += " " + a.Error
		}
		got = append(got, s)
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		e.t.Errorf("history of %s = %q, want %q", item, got, want)
	}
}
