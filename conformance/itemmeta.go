package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// wantMeta fails unless id's tags and metadata read back as tags (sorted)
// and values; an item with neither must be absent from ItemMetadata.
func (e *env) wantMeta(where string, id uuid.UUID, tags []string, values map[string]string) {
	e.t.Helper()
	got, err := e.s.ItemMetadata(e.ctx, id)
	if err != nil {
		e.t.Fatalf("%s: ItemMetadata: %v", where, err)
	}
	m, ok := got[id]
	if len(tags) == 0 && len(values) == 0 {
		if ok {
			e.t.Errorf("%s: ItemMetadata of an item without any = %+v, want it absent", where, m)
		}
		return
	}
	if !ok || !slices.Equal(m.Tags, tags) || !maps.Equal(m.Values, values) {
		e.t.Errorf("%s: ItemMetadata = %+v (present %v), want tags %v and values %v", where, m, ok, tags, values)
	}
}

// Metadata: every path that makes an item from a spec writes its tags
// and metadata in its own transaction, and they read back as given
// (tags sorted, each once): Enqueue, EnqueueTx (only once the caller
// commits), Fenced.Enqueue, Fenced.Then, a barrier's children, a run's
// first items and a schedule's ticks.
func testMetaEveryPath(e *env) {
	ctx := e.ctx
	tags := []string{"b", "a", "b"}
	want := []string{"a", "b"}
	vals := func(path string) map[string]string {
		return map[string]string{"path": path, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	}

	ids := e.enqueue(e.s, core.ItemSpec{Queue: "meta", Tags: tags, Metadata: vals("Enqueue")}, core.ItemSpec{Queue: "meta"})
	e.wantMeta("Enqueue", ids[0].ID, want, vals("Enqueue"))
	e.wantMeta("Enqueue without any", ids[1].ID, nil, nil)

	tx, err := e.s.Begin(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := e.s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "meta-tx", Tags: []string{"tx"}})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		e.t.Fatal(err)
	}
	e.wantMeta("EnqueueTx rolled back", out[0].ID, nil, nil)
	tx, err = e.s.Begin(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if out, err = e.s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "meta-tx", Tags: []string{"tx"}, Metadata: vals("EnqueueTx")}); err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
	e.wantMeta("EnqueueTx committed", out[0].ID, []string{"tx"}, vals("EnqueueTx"))

	o := e.owner(e.s)
	var fenced, then core.EnqueueResult
	held, err := e.s.Fence(ctx, e.claimOne(e.s, o, "meta"), func(ctx context.Context, f *core.Fenced) error {
		out, err := f.Enqueue(ctx, core.ItemSpec{Queue: "meta-f", Tags: tags, Metadata: vals("Fenced.Enqueue")})
		if err == nil {
			fenced = out[0]
			then, err = f.Then(ctx, core.ItemSpec{Queue: "meta-then", Metadata: vals("Fenced.Then")}, nil)
		}
		return err
	})
	if !held || err != nil {
		e.t.Fatalf("fence: held %v, %v", held, err)
	}
	e.wantMeta("Fenced.Enqueue", fenced.ID, want, vals("Fenced.Enqueue"))
	e.wantMeta("Fenced.Then", then.ID, nil, vals("Fenced.Then"))

	e.enqueueOne(e.s, core.ItemSpec{Queue: "meta-parent"})
	kidSpecs := kids("meta-kids", "k", 3)
	kidSpecs[0].Tags, kidSpecs[0].Metadata = tags, vals("child")
	kidSpecs[2].Tags = []string{"last"}
	bar := e.fanOut(e.s, e.claimOne(e.s, o, "meta-parent"), core.BarrierSpec{Name: "meta", Join: core.JoinSpec{Queue: "meta-join"}}, kidSpecs)
	byKey := map[string]uuid.UUID{}
	for _, c := range e.children(bar.ID) {
		byKey[c.Key[strings.LastIndexByte(c.Key, '/')+1:]] = c.ID
	}
	e.wantMeta("child k0", byKey["k0"], want, vals("child"))
	e.wantMeta("child k1", byKey["k1"], nil, nil)
	e.wantMeta("child k2", byKey["k2"], []string{"last"}, nil)

	_, first, err := e.s.CreateRun(ctx, core.RunSpec{Name: "meta"}, core.ItemSpec{Queue: "meta-run", Tags: []string{"run"}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.wantMeta("CreateRun", first[0].ID, []string{"run"}, nil)

	sp := core.ScheduleSpec{Name: "meta", Every: time.Hour, Item: core.ItemSpec{Queue: "meta-tick", Tags: []string{"tick"}, Metadata: vals("tick")}}
	if _, err := e.s.EnqueueDue(ctx, sp); err != nil {
		e.t.Fatal(err)
	}
	due, err := e.at(2*time.Hour).EnqueueDue(ctx, sp)
	if err != nil || len(due) == 0 {
		e.t.Fatalf("EnqueueDue of a due tick = %v, %v", due, err)
	}
	for _, d := range due {
		e.wantMeta("EnqueueDue", d.ID, []string{"tick"}, vals("tick"))
	}
}

// Metadata: an enqueue whose key finds an existing item (Existed) leaves
// that item's tags and metadata as they were, and writes none.
func testMetaDedup(e *env) {
	first := e.enqueue(e.s, core.ItemSpec{Queue: "meta-dedup", Key: "k", Tags: []string{"first"}, Metadata: map[string]string{"v": "1"}})[0]
	again := e.enqueue(e.s, core.ItemSpec{Queue: "meta-dedup", Key: "k", Tags: []string{"second"}, Metadata: map[string]string{"v": "2", "w": "x"}})[0]
	if !again.Existed || again.ID != first.ID {
		e.t.Fatalf("second enqueue of the key = %+v, want the first item %s", again, first.ID)
	}
	e.wantMeta("after a deduplicated enqueue", first.ID, []string{"first"}, map[string]string{"v": "1"})
	plain := e.enqueue(e.s, core.ItemSpec{Queue: "meta-dedup", Key: "plain"})[0]
	e.enqueue(e.s, core.ItemSpec{Queue: "meta-dedup", Key: "plain", Tags: []string{"late"}})
	e.wantMeta("a deduplicated enqueue of an item without any", plain.ID, nil, nil)
	if n := e.sqlCount("SELECT COUNT(*) FROM {itemmeta}"); n != 2 {
		e.t.Errorf("%d rows of tags and metadata, want the first item's 2", n)
	}
}

// Metadata: tags, keys and values past their bounds, or holding a
// control character (like every name), are refused before anything is
// written, with an error naming the field, on every path that takes a
// spec.
func testMetaRefused(e *env) {
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	manyKeys := map[string]string{}
	for i := range core.MaxMetadataKeys + 1 {
		manyKeys[fmt.Sprint("k", i)] = "v"
	}
	big := map[string]string{}
	for i := range core.MaxMetadataKeys {
		big[fmt.Sprint("k", i)] = strings.Repeat("v", core.MaxMetadataValueLen)
	}
	for _, tc := range []struct {
		name  string
		spec  core.ItemSpec
		field string
	}{
		{"too many tags", core.ItemSpec{Tags: many(core.MaxTags+1, func(i int) string { return fmt.Sprint("t", i) })}, "Tags"},
		{"an empty tag", core.ItemSpec{Tags: []string{"a", ""}}, "Tags[1]"},
		{"a long tag", core.ItemSpec{Tags: []string{strings.Repeat("t", core.MaxTagLen+1)}}, "Tags[0]"},
		{"a tag with a newline", core.ItemSpec{Tags: []string{"a\nb"}}, "Tags[0]"},
		{"a tag with an escape", core.ItemSpec{Tags: []string{"\x1b[2J"}}, "Tags[0]"},
		{"a tag with a bidi override", core.ItemSpec{Tags: []string{"a\u202eb"}}, "Tags[0]"},
		{"a tag with a NUL", core.ItemSpec{Tags: []string{"a\x00"}}, "Tags[0]"},
		{"a tag of bad UTF-8", core.ItemSpec{Tags: []string{"a\xff"}}, "Tags[0]"},
		{"too many keys", core.ItemSpec{Metadata: manyKeys}, "Metadata"},
		{"an empty key", core.ItemSpec{Metadata: map[string]string{"": "v"}}, "Metadata key"},
		{"a key with a tab", core.ItemSpec{Metadata: map[string]string{"a\tb": "v"}}, "Metadata key"},
		{"a long key", core.ItemSpec{Metadata: map[string]string{strings.Repeat("k", core.MaxTagLen+1): "v"}}, "Metadata key"},
		{"an empty value", core.ItemSpec{Metadata: map[string]string{"k": ""}}, `Metadata["k"]`},
		{"a long value", core.ItemSpec{Metadata: map[string]string{"k": strings.Repeat("v", core.MaxMetadataValueLen+1)}}, `Metadata["k"]`},
		{"a value with a control character", core.ItemSpec{Metadata: map[string]string{"k": "a\x07"}}, `Metadata["k"]`},
		{"too much in all", core.ItemSpec{Metadata: big}, "Metadata"},
	} {
		tc.spec.Queue = "meta-refused"
		_, err := e.s.Enqueue(e.ctx, core.ItemSpec{Queue: "meta-refused"}, tc.spec)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Field != "specs[1]."+tc.field {
			e.t.Errorf("Enqueue with %s = %v, want an InputError naming specs[1].%s", tc.name, err, tc.field)
		}
	}
	// The limits themselves pass.
	at := map[string]string{}
	for i := range core.MaxMetadataKeys {
		at[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", (core.MaxMetadataBytes-core.MaxMetadataKeys*3)/core.MaxMetadataKeys)
	}
	tagsAt := many(core.MaxTags, func(i int) string { return fmt.Sprintf("%02d", i) + strings.Repeat("é", core.MaxTagLen-2) })
	ids := e.enqueue(e.s, core.ItemSpec{Queue: "meta-refused", Metadata: at}, core.ItemSpec{Queue: "meta-refused", Tags: tagsAt})
	e.wantMeta("an item at the metadata's limits", ids[0].ID, nil, at)
	e.wantMeta("an item at the tags' limits", ids[1].ID, tagsAt, nil)
	e.wantCounts("meta-refused", map[core.State]int64{core.StateAvailable: 2})

	// A child's spec and a schedule's item are checked alike.
	o := e.owner(e.s)
	e.enqueueOne(e.s, core.ItemSpec{Queue: "meta-refused-parent"})
	c := e.claimOne(e.s, o, "meta-refused-parent")
	_, err := e.s.Expand(e.ctx, c, core.ExpandParams{Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "j"}}, Next: func(context.Context, string) (core.ChildPage, error) {
		return core.ChildPage{Children: []core.ChildSpec{{Key: "a", Queue: "k", Tags: []string{"x\ry"}}}, Done: true, Next: "end"}, nil
	}})
	if ie := (*core.InputError)(nil); !errors.As(err, &ie) || !strings.HasSuffix(ie.Field, "Tags[0]") {
		e.t.Errorf("Expand with a child's tag holding a carriage return = %v, want an InputError naming its Tags[0]", err)
	}
	_, err = e.s.EnqueueDue(e.ctx, core.ScheduleSpec{Name: "meta-refused", Every: time.Hour, Item: core.ItemSpec{Queue: "q", Metadata: map[string]string{"k\x00": "v"}}})
	if ie := (*core.InputError)(nil); !errors.As(err, &ie) || !strings.Contains(ie.Field, "Metadata key") {
		e.t.Errorf("EnqueueDue with a NUL in a key = %v, want an InputError naming Item.Metadata key", err)
	}
}

// Metadata: enqueues running at once, keyed and not, each write their
// own items' tags and metadata and no other's, and ItemMetadata reads
// more items than one IN list holds (chunked).
func testMetaConcurrent(e *env) {
	const workers = 4
	per := e.scaled(300, 50)
	var wg sync.WaitGroup
	results := make([][]core.EnqueueResult, workers)
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			specs := make([]core.ItemSpec, per)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: "meta-conc", Tags: []string{fmt.Sprint("w", w)}, Metadata: map[string]string{"i": fmt.Sprint(i), "w": fmt.Sprint(w)}}
				if i%10 == 0 {
					specs[i].Key = fmt.Sprint("shared-", i) // the same keys in every worker: one item each
				}
			}
			results[w], errs[w] = e.s.Enqueue(e.ctx, specs...)
		}()
	}
	wg.Wait()
	var all []uuid.UUID
	for w := range workers {
		if errs[w] != nil {
			e.t.Fatalf("worker %d: %v", w, errs[w])
		}
		for _, r := range results[w] {
			all = append(all, r.ID)
		}
	}
	got, err := e.s.ItemMetadata(e.ctx, all...)
	if err != nil {
		e.t.Fatal(err)
	}
	for w := range workers {
		for i, r := range results[w] {
			m := got[r.ID]
			if r.Existed {
				continue // another worker's item: checked under its own index
			}
			if !slices.Equal(m.Tags, []string{fmt.Sprint("w", w)}) || m.Values["i"] != fmt.Sprint(i) || m.Values["w"] != fmt.Sprint(w) || len(m.Values) != 2 {
				e.t.Fatalf("worker %d item %d: metadata %+v", w, i, m)
			}
		}
	}
	items := e.total("meta-conc")
	if rows := e.sqlCount("SELECT COUNT(*) FROM {itemmeta}"); rows != 3*items || int64(len(got)) != items {
		e.t.Errorf("%d rows of metadata and %d items read for %d items, want 3 rows and one read each", rows, len(got), items)
	}
}

// Metadata: retention deletes an item's tags and metadata with the item,
// in its transaction (or its one statement), and never those of an item
// it keeps; a revived item keeps its own.
func testMetaRetention(e *env) {
	const queue = "meta-retain"
	o := e.owner(e.s)
	tags := []string{"gone"}
	var done []uuid.UUID
	for i := range 3 {
		done = append(done, e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Tags: tags, Metadata: map[string]string{"i": fmt.Sprint(i)}}))
		e.complete(e.s, e.claimOne(e.s, o, queue), "")
	}
	dead := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 1, Tags: []string{"revived"}})
	if _, err := e.s.Fail(e.ctx, e.claimOne(e.s, o, queue), core.FailParams{Error: "x"}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Revive(e.ctx, dead); err != nil {
		e.t.Fatal(err)
	}
	waiting := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Tags: []string{"kept"}})
	later := e.at(2 * time.Hour)
	r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: 2})
	if err != nil || r.Items != 2 {
		e.t.Fatalf("first Purge = %+v, %v; want 2 items", r, err)
	}
	r, err = later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
	if err != nil || r.Items != 1 {
		e.t.Fatalf("second Purge = %+v, %v; want the last finished item", r, err)
	}
	got, err := e.s.ItemMetadata(e.ctx, append(done, dead, waiting)...)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, id := range done {
		if m, ok := got[id]; ok {
			e.t.Errorf("purged item %s still has %+v", id, m)
		}
	}
	e.wantMeta("the revived item", dead, []string{"revived"}, nil)
	e.wantMeta("the waiting item", waiting, []string{"kept"}, nil)
	if n := e.sqlCount("SELECT COUNT(*) FROM {itemmeta} WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = {itemmeta}.item_id)"); n != 0 {
		e.t.Errorf("%d rows of tags and metadata whose item is gone", n)
	}
}
