package mysql_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/mysql"
)

// frozenClock is the dialect with a database clock that never moves, so
// that every write of a time writes the value already there: the case of
// two writes in one clock tick, made certain.
type frozenClock struct{ wrapped }

func (frozenClock) Now(offset time.Duration) string {
	return "DATE_ADD(CAST('2030-01-01 00:00:00' AS DATETIME(6)), INTERVAL " + strconv.FormatInt(offset.Microseconds(), 10) + " MICROSECOND)"
}

// The driver counts changed rows, not matched rows, with the DSN Open
// builds (no clientFoundRows): an UPDATE that writes the values a row
// already holds reports 0 rows. Heartbeats and extensions that land in the
// same clock tick write exactly such values, and must still not read as a
// lost owner or a lost claim: every heartbeat bumps a counter, and Extend
// goes through the row lock, not a row count.
func TestFencedWrites_SameClockTickIsNotALoss(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	p := newPrefix(t, db)
	d := frozenClock{wrapped{mysql.Dialect()}}
	s, err := core.Open(ctx, db, d, core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "frozen"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "tick"}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "tick", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("Claim = %d claims, %v", len(cs), err)
	}

	// The trap is real on this connection: a same-value write counts 0.
	res, err := db.ExecContext(ctx, "UPDATE "+p+"processes SET last_heartbeat_at = "+d.Now(0)+" WHERE id = ?", d.UUID(owner))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 0 {
		t.Fatalf("an UPDATE writing the values a row holds reports %d rows; the driver counts matched rows here, so this test proves nothing", n)
	}

	for i := range 50 {
		for range 2 {
			if err := s.Heartbeat(ctx, owner); err != nil {
				t.Fatalf("round %d: Heartbeat in the same clock tick: %v", i, err)
			}
		}
		for range 2 {
			if err := s.Extend(ctx, cs[0], time.Minute); err != nil {
				t.Fatalf("round %d: Extend in the same clock tick: %v", i, err)
			}
		}
		if lost, err := s.ExtendMany(ctx, cs, time.Minute); err != nil || len(lost) != 0 {
			t.Fatalf("round %d: ExtendMany in the same clock tick = lost %v, %v", i, lost, err)
		}
	}
	t.Log("100 heartbeats, 100 extensions and 50 batch extensions on a frozen clock: no owner or claim lost")

	// And on the real clock, back to back.
	live, err := core.Open(ctx, db, mysql.Dialect(), core.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := live.Heartbeat(ctx, owner); err != nil {
			t.Fatalf("round %d: Heartbeat: %v", i, err)
		}
		if err := live.Extend(ctx, cs[0], time.Minute); err != nil {
			t.Fatalf("round %d: Extend: %v", i, err)
		}
	}
	if err := s.Complete(ctx, cs[0], []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	// A stale claim is still refused: the fence is the token, not the count.
	if err := s.Extend(ctx, cs[0], time.Minute); !errors.Is(err, core.ErrClaimLost) {
		t.Fatalf("Extend after Complete = %v, want ErrClaimLost", err)
	}
}
