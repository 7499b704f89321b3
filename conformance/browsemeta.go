package conformance

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// Items filtered on a tag, a metadata key, or a key and its value, alone
// and with every other filter: the pages list exactly the items
// ItemMetadata says match, newest first, never repeating or skipping one,
// however the pages are cut and however few rows a search examines.
func testBrowseItemsByMeta(e *env) {
	a := e.owner(e.s)
	var specs []core.ItemSpec
	for i := range 30 {
		sp := core.ItemSpec{Queue: []string{"bm-one", "bm-two", "bm-three"}[i%3], Kind: []string{"", "k1"}[i%2]}
		if i%2 == 0 {
			sp.Tags = []string{"even"}
		}
		if i%3 != 2 {
			sp.Tags = append(sp.Tags, "red")
		}
		if i%5 != 0 {
			// A key whose value is another key's: the value filter
			// must match the key too.
			sp.Metadata = map[string]string{"tenant": []string{"acme", "globex"}[i%5%2], "other": "acme"}
		}
		if i%7 == 0 {
			// A tag named as the key: a tag is no metadata.
			sp.Tags = append(sp.Tags, "tenant")
		}
		specs = append(specs, sp)
	}
	rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "bm"}, core.ItemSpec{Queue: "bm-one", Kind: "k1", Tags: []string{"red"}, Metadata: map[string]string{"tenant": "acme"}})
	if err != nil {
		e.t.Fatalf("CreateRun: %v", err)
	}
	e.enqueue(e.s, specs...)
	cs := e.claim(e.s, a, "bm-one", 4)
	e.complete(e.s, cs[0], `"done"`)
	if err := e.s.Cancel(e.ctx, cs[1].ID); err != nil {
		e.t.Fatalf("Cancel: %v", err)
	}
	all, err := e.items(e.ctx, browse.ItemFilter{Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatalf("Items: %v", err)
	}
	ids := make([]uuid.UUID, len(all))
	for i, it := range all {
		ids[i] = it.ID
	}
	meta, err := e.s.ItemMetadata(e.ctx, ids...)
	if err != nil {
		e.t.Fatalf("ItemMetadata: %v", err)
	}
	type mf struct{ tag, key, value string }
	matches := func(m mf, id uuid.UUID) bool {
		md := meta[id]
		switch {
		case m.tag != "":
			return slices.Contains(md.Tags, m.tag)
		case m.value != "":
			v, ok := md.Values[m.key]
			return ok && v == m.value
		}
		_, ok := md.Values[m.key]
		return ok
	}
	combo := 0
	for _, m := range []mf{{tag: "red"}, {tag: "even"}, {tag: "tenant"}, {tag: "none"}, {key: "tenant"}, {key: "tenant", value: "acme"}, {key: "tenant", value: "globex"}, {key: "other", value: "globex"}, {key: "none"}} {
		for _, queue := range []string{"", "bm-one"} {
			for _, state := range []core.State{"", core.StateAvailable, core.StateCompleted} {
				for _, kind := range []string{"", "k1"} {
					for _, run := range []uuid.UUID{uuid.Nil, rc.ID} {
						f := browse.ItemFilter{Queue: queue, State: state, Kind: kind, Run: run, Tag: m.tag, MetaKey: m.key, MetaValue: m.value}
						var want []uuid.UUID
						for _, it := range all {
							if (queue == "" || it.Queue == queue) && (state == "" || it.State == state) &&
								(kind == "" || it.Kind == kind) && (run == uuid.Nil || it.Run == run) && matches(m, it.ID) {
								want = append(want, it.ID)
							}
						}
						// One way of paging per filter, in turn: each
						// filter of metadata meets all six over its 24
						// combinations, at a sixth of the reads.
						f.Limit = []int{1, 4, 0}[combo%3]
						f.SearchRows = []int{0, 3}[combo/3%2]
						combo++
						if got := e.pageItems(f); !slices.Equal(got, want) {
							e.t.Fatalf("Items(%+v) in pages = %v, want %v", f, got, want)
						}
					}
				}
			}
		}
	}
	// Alone, a tag's pages are full until the end: no search bound.
	page, err := e.reader().Items(e.ctx, browse.ItemFilter{Tag: "red", Limit: 2, SearchRows: 1})
	if err != nil || len(page.Items) != 2 || page.Searched {
		e.t.Fatalf("Items(Tag alone, SearchRows 1) = %d items, Searched %v, %v; want a full page", len(page.Items), page.Searched, err)
	}
}

// A filter on tags or metadata refuses what no item could carry, with an
// *core.InputError on the field: control characters, names too long, a
// value without its key, a tag and a key together.
func testBrowseMetaBadInput(e *env) {
	ctx := context.Background()
	for _, c := range []struct {
		field string
		f     browse.ItemFilter
	}{
		{"Tag", browse.ItemFilter{Tag: "a\nb"}},
		{"Tag", browse.ItemFilter{Tag: strings.Repeat("t", core.MaxTagLen+1)}},
		{"Tag", browse.ItemFilter{Tag: "a\x00b"}},
		{"MetaKey", browse.ItemFilter{MetaKey: "k\x1b"}},
		{"MetaKey", browse.ItemFilter{MetaKey: strings.Repeat("k", core.MaxTagLen+1)}},
		{"MetaValue", browse.ItemFilter{MetaKey: "k", MetaValue: "v\u202e"}},
		{"MetaValue", browse.ItemFilter{MetaKey: "k", MetaValue: strings.Repeat("v", core.MaxMetadataValueLen+1)}},
		{"MetaValue", browse.ItemFilter{MetaValue: "v"}},
		{"Tag", browse.ItemFilter{Tag: "t", MetaKey: "k"}},
		{"MetaValue", browse.ItemFilter{MetaKey: "k", MetaValue: "\xff"}},
	} {
		_, err := e.reader().Items(ctx, c.f)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			e.t.Errorf("Items(%+v) = %v, want an *InputError on %s", c.f, err, c.field)
		}
	}
}
