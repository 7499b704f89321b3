package upgradetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// itemMetaVersion is the version that keeps items' tags and metadata.
const itemMetaVersion = 12

// upgradeToItemMetaWithData: a database a version below items' tags and
// metadata, holding items, goes up and down twice. After each upgrade the
// items made before read back with no metadata, a new item's tags and
// metadata read back, and the old items still claim; Down drops the
// table and keeps every item.
func upgradeToItemMetaWithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	from := itemMetaVersion - 1
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	before, err := s.Enqueue(ctx, core.ItemSpec{Queue: "up-meta"}, core.ItemSpec{Queue: "up-meta", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if rolled, err := migrations.Down(ctx, db, d, p, from); err != nil || !slices.Equal(rolled, down(from)) {
		t.Fatalf("Down to %d = %v, %v", from, rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version %d = %v, want ErrSchemaOutdated", from, err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d", round)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(from)) {
			t.Fatalf("%s: Apply from version %d = %v, %v", at, from, applied, err)
		}
		got, err := s.ItemMetadata(ctx, before[0].ID, before[1].ID)
		if err != nil || len(got) != 0 {
			t.Fatalf("%s: ItemMetadata of items made before = %v, %v; want none", at, got, err)
		}
		vals := map[string]string{"round": fmt.Sprint(round)}
		out, err := s.Enqueue(ctx, core.ItemSpec{Queue: "up-meta", Tags: []string{"new"}, Metadata: vals}, core.ItemSpec{Queue: "up-meta", Key: "k", Tags: []string{"dedup"}})
		if err != nil || !out[1].Existed || out[1].ID != before[1].ID {
			t.Fatalf("%s: Enqueue = %+v, %v", at, out, err)
		}
		got, err = s.ItemMetadata(ctx, out[0].ID, before[1].ID)
		if m := got[out[0].ID]; err != nil || len(got) != 1 || !slices.Equal(m.Tags, []string{"new"}) || !maps.Equal(m.Values, vals) {
			t.Fatalf("%s: ItemMetadata = %+v, %v; want the new item's alone", at, got, err)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, from); err != nil || !slices.Equal(rolled, down(from)) {
			t.Fatalf("%s: Down to %d = %v, %v", at, from, rolled, err)
		}
		if _, err := count(ctx, db, n.ItemMeta); err == nil {
			t.Errorf("%s: %s still readable after Down to %d", at, n.ItemMeta, from)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != 2+round {
			t.Errorf("%s: %d items after Down, %v; want %d", at, got, err, 2+round)
		}
	}
}
