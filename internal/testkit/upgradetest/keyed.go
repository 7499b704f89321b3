package upgradetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom5WithData: a database at version 5 holding items with keys
// (in two queues, one claimed, one completed) and many without goes up to
// 6, whose unique index of keys holds only the keyed items. Afterwards an
// enqueue of a key already taken finds its item and makes nothing new, the
// database itself refuses a second row with a taken key, and items without
// a key are made as before; down to 5 keeps every row and guards the keys
// again with version 5's index, and up again.
func upgradeFrom5WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	// Version 6 adds no column: rows a store writes are rows as version 5
	// holds them.
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	keyed := map[string]uuid.UUID{} // queue/key -> item
	var specs []core.ItemSpec
	for _, qk := range [][2]string{{"mail", "a"}, {"mail", "b"}, {"mail", "c"}, {"hooks", "a"}} {
		specs = append(specs, core.ItemSpec{Queue: qk[0], Kind: "k", Key: qk[1]})
	}
	for range 20 {
		specs = append(specs, core.ItemSpec{Queue: "mail", Kind: "k"})
	}
	enq, err := s.Enqueue(ctx, specs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range enq {
		if specs[i].Key != "" {
			keyed[specs[i].Queue+"/"+specs[i].Key] = e.ID
		}
	}
	// One keyed item claimed, one completed: the key stays taken in every
	// state.
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "hooks", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim = %v, %v", cs, err)
	}
	ms, err := s.Claim(ctx, core.ClaimParams{Queue: "mail", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(ms) != 1 || ms[0].Key == "" {
		t.Fatalf("claim of a keyed mail item = %v, %v", ms, err)
	}
	if err := s.Complete(ctx, ms[0], nil); err != nil {
		t.Fatal(err)
	}
	total := len(specs)

	if rolled, err := migrations.Down(ctx, db, d, p, 5); err != nil || !slices.Equal(rolled, down(5)) {
		t.Fatalf("Down to 5 = %v, %v", rolled, err)
	}
	checkIndexes(t, c, p, "version 5", keyIndexes(5))
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 5 = %v, want ErrSchemaOutdated", err)
	}
	refusesTakenKey(t, c, p, 5)
	total++ // its row without a key
	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(5)) {
			t.Fatalf("round %d: Apply from version 5 = %v, %v", round, applied, err)
		}
		checkIndexes(t, c, p, "version 6", keyIndexes(6))
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("round %d: core.Open at version 6: %v", round, err)
		}
		again := []core.ItemSpec{{Queue: "mail", Key: "a"}, {Queue: "mail", Key: "b"}, {Queue: "hooks", Key: "a"}, {Queue: "mail", Key: fmt.Sprintf("new-%d", round)}, {Queue: "mail"}}
		enq, err := s.Enqueue(ctx, again...)
		if err != nil {
			t.Fatalf("round %d: enqueue: %v", round, err)
		}
		for i, e := range enq {
			id, taken := keyed[again[i].Queue+"/"+again[i].Key]
			switch {
			case taken && (!e.Existed || e.ID != id):
				t.Errorf("round %d: enqueue of taken key %s/%s = %s (existed %v), want %s", round, again[i].Queue, again[i].Key, e.ID, e.Existed, id)
			case !taken && e.Existed:
				t.Errorf("round %d: enqueue of %+v found %s, want a new item", round, again[i], e.ID)
			}
		}
		keyed[fmt.Sprintf("mail/new-%d", round)] = enq[3].ID
		total += 2
		refusesTakenKey(t, c, p, 6)
		total++
		if rolled, err := migrations.Down(ctx, db, d, p, 5); err != nil || !slices.Equal(rolled, down(5)) {
			t.Fatalf("round %d: Down to 5 = %v, %v", round, rolled, err)
		}
		checkIndexes(t, c, p, "version 5", keyIndexes(5))
		refusesTakenKey(t, c, p, 5)
		total++
		if got, err := count(ctx, db, n.Items); err != nil || got != total {
			t.Errorf("round %d: %d items after Down to 5, %v; want %d", round, got, err, total)
		}
	}
}

// keyIndexes is which of the two indexes that guard the keys exists at
// version (5 or 6).
func keyIndexes(version int) map[string]bool {
	return map[string]bool{"items_key": version == 5, "items_keyed": version == 6}
}

// refusesTakenKey inserts, behind the store's back, a second row with the
// key of mail/a and checks that the database refuses it, and a row
// without a key next to the many there, which it takes.
func refusesTakenKey(t *testing.T, c Config, prefix string, version int) {
	t.Helper()
	ctx := t.Context()
	d := c.Dialect
	db := c.Open(t)
	now := d.Now(0)
	insert := d.Rebind("INSERT INTO " + migrations.NamesFor(prefix).Items +
		" (id, queue, kind, unique_key, payload, priority, state, available_at, attempt, max_attempts, crash_count, created_at)" +
		" VALUES (?, 'mail', 'k', ?, NULL, 0, 'available', " + now + ", 0, 5, 0, " + now + ")")
	_, err := db.ExecContext(ctx, insert, d.UUID(uuid.New()), "a")
	if err == nil {
		t.Fatalf("at version %d: the database took a second item with the key mail/a", version)
	}
	if class := d.Classify(err); class != dialect.UniqueViolation {
		t.Errorf("at version %d: the second mail/a was refused with %v (class %v), want a unique violation", version, err, class)
	}
	if _, err := db.ExecContext(ctx, insert, d.UUID(uuid.New()), nil); err != nil {
		t.Fatalf("at version %d: a row without a key was refused: %v", version, err)
	}
}
