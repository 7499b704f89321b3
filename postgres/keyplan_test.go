package postgres_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// TestKeyIndex_HoldsOnlyKeyedItems runs 2,000 items without a key and 50
// with one through a store (enqueued, claimed, completed), then checks
// that the unique index of keys has an entry for each keyed item and none
// for the others, whose NULL key never collides, and that the lookup the
// store sends when an enqueue finds its keys taken reads that index.
func TestKeyIndex_HoldsOnlyKeyedItems(t *testing.T) {
	ctx := t.Context()
	db, log, st, prefix := tracedStore(t, "pk")
	const keyless, keyed = 2000, 50
	var specs, keyedSpecs []core.ItemSpec
	for i := range keyless {
		specs = append(specs, core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	for i := range keyed {
		keyedSpecs = append(keyedSpecs, core.ItemSpec{Queue: "q", Kind: "k", Key: fmt.Sprintf("key-%d", i)})
	}
	if _, err := st.Enqueue(ctx, append(specs, keyedSpecs...)...); err != nil {
		t.Fatal(err)
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	for done := 0; done < keyless+keyed; {
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 500, Lease: time.Minute})
		if err != nil || len(cs) == 0 {
			t.Fatalf("claim after %d: %d items, %v", done, len(cs), err)
		}
		var completions []core.Completion
		for _, c := range cs {
			completions = append(completions, core.Completion{Claim: c})
		}
		if lost, err := st.CompleteMany(ctx, completions); err != nil || len(lost) > 0 {
			t.Fatalf("complete: lost %d, %v", len(lost), err)
		}
		done += len(cs)
	}
	// The same keys again: nothing new, and the store looks them up.
	again, err := st.Enqueue(ctx, keyedSpecs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range again {
		if !e.Existed {
			t.Errorf("enqueue of key-%d again made a new item", i)
		}
	}

	items := migrations.NamesFor(prefix).Items
	// VACUUM counts each index's live entries exactly (pg_class.reltuples).
	if _, err := db.ExecContext(ctx, "VACUUM (ANALYZE) "+items); err != nil {
		t.Fatal(err)
	}
	var entries float64
	var pred sql.NullString
	err = db.QueryRowContext(ctx, "SELECT c.reltuples, pg_get_expr(i.indpred, i.indrelid) FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.oid = $1::regclass AND i.indisunique",
		prefix+"items_keyed").Scan(&entries, &pred)
	if err != nil {
		t.Fatalf("the unique index %sitems_keyed: %v", prefix, err)
	}
	if entries != keyed || pred.String != "(unique_key IS NOT NULL)" {
		t.Errorf("%sitems_keyed holds %v entries where %q, want %d where (unique_key IS NOT NULL)", prefix, entries, pred.String, keyed)
	}

	sent, ok := log.last("FROM "+items+" WHERE queue = ", "unique_key IN (")
	if !ok {
		t.Fatal("no lookup of existing keys was sent")
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		plan := heldPlan(t, db, mode, sent)
		t.Logf("key lookup, %s:\n%s", mode, plan)
		if !strings.Contains(plan, prefix+"items_keyed") {
			t.Errorf("the key lookup (%s) does not read %sitems_keyed:\n%s", mode, prefix, plan)
		}
	}
}
