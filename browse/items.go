package browse

import (
	"context"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// ItemFilter chooses the items Items lists. Zero fields match any item.
type ItemFilter struct {
	// Queue, when set, lists only that queue's items: up to 128
	// characters.
	Queue string
	// State, when set, is one of the five item states.
	State core.State
	// Kind, when set, lists only items of that kind: up to 128
	// characters.
	Kind string
	// Run, when set, lists only the items of that run.
	Run uuid.UUID
	// Tag, when set, lists only the items carrying that tag
	// (core.ItemSpec.Tags): up to core.MaxTagLen characters, no control
	// characters. It excludes MetaKey.
	Tag string
	// MetaKey, when set, lists only the items whose metadata
	// (core.ItemSpec.Metadata) holds that key, and MetaValue, when set
	// too, only those whose key holds that value. MetaValue needs a
	// MetaKey; the rules of each are core's for metadata.
	MetaKey, MetaValue string
	// Before is the id of the last item of the previous page; uuid.Nil
	// for the first page.
	Before uuid.UUID
	// Limit is the page size: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
	// SearchRows bounds the rows a Kind filter (without a Run), or a
	// Tag or MetaKey filter with any other filter, examines in one call
	// of Items: 1 to ItemSearchRows; 0 means ItemSearchRows. The other
	// filters ignore it.
	SearchRows int
}

// ItemPage is one page of Items, and where the next one starts.
type ItemPage struct {
	Items []core.Item
	// Next is the Before of the next page: the last item's id when the
	// page is full, the bound of the rows searched when a Kind filter's
	// search stopped there (Searched), and uuid.Nil at the end.
	Next uuid.UUID
	// Searched is set when the page stopped at the bound of the rows a
	// Kind filter examines in one call (SearchRows), not at the end:
	// it may hold fewer than Limit items, even none, and older matches
	// may follow from Next.
	Searched bool
	// Examined is the rows a Kind filter's search examined: every row,
	// in the queues and states it searched, from Next (or the end) up to
	// Before, SearchRows at most; 0 for the other filters.
	Examined int
}

// Items lists the items matching f, newest first (ids are UUIDv7:
// creation order), one keyset page at a time, and says where the next
// page starts: pass Next as the next page's Before (a Kind filter's page
// may be short before the end: see ItemPage). A page costs the same however deep it
// is and however many items the table holds:
//
//   - a queue, with or without a state, and a run are read in id order
//     from an index that leads with them (a queue without a state is the
//     merge of one page per state); no filter reads the primary key;
//   - a state without a queue is the merge of one page per queue (the
//     queues found one index probe each), so it costs one probe and one
//     page per queue;
//   - a kind (without a run) is not indexed: a page searches the range of
//     ids below Before that holds f.SearchRows rows across the queues and
//     states the other filters allow (found from the (queue, state, id)
//     index, whose ids it reads, a small multiple of SearchRows at most,
//     or one per queue and state), and examines exactly those rows, so a
//     kind that matches nothing costs a bounded read, not a scan of the
//     table, and the pages cover the table in about rows/SearchRows
//     calls however the rows are spread. Its page holds the range's
//     matches; when that is fewer than Limit, Searched is set and Next,
//     the range's lowest id, is where the search goes on.
//   - a tag, or a metadata key (and value), is read in id order from
//     an index of the item_meta table that leads with it, each item then
//     by its primary key; with other filters too, a page examines the
//     next f.SearchRows ids of that index at most, and its page may be
//     short (Searched) as a kind's is.
//
// An item inserted while paging has a newer id than the pages already
// read, so it never shows up in a later page, and paging never repeats or
// skips an item that existed, in the state filtered on, when it began.
func (r *Reader) Items(ctx context.Context, f ItemFilter) (ItemPage, error) {
	if err := r.ready(); err != nil {
		return ItemPage{}, err
	}
	limit, err := listLimit(f.Limit)
	if err != nil {
		return ItemPage{}, err
	}
	if err := r.s.LookupName("Queue", f.Queue, migrations.MaxQueueLen); err != nil {
		return ItemPage{}, err
	}
	if err := validState("State", f.State); err != nil {
		return ItemPage{}, err
	}
	if err := r.s.LookupName("Kind", f.Kind, migrations.MaxKindLen); err != nil {
		return ItemPage{}, err
	}
	if f.SearchRows == 0 {
		f.SearchRows = ItemSearchRows
	}
	if f.SearchRows < 1 || f.SearchRows > ItemSearchRows {
		return ItemPage{}, invalid("SearchRows", "%d is outside [1, %d]", f.SearchRows, ItemSearchRows)
	}
	mf, margs, err := r.validMetaFilter(f)
	if err != nil {
		return ItemPage{}, err
	}
	bits := 0
	var eq []any
	if f.Queue != "" {
		bits |= 1
		eq = append(eq, f.Queue)
	}
	if f.State != "" {
		bits |= 2
	}
	if f.Kind != "" {
		bits |= 4
		eq = append(eq, f.Kind)
	}
	if f.Run != uuid.Nil {
		bits |= 8
		eq = append(eq, r.s.Dialect.UUID(f.Run))
	}
	if mf != metaNone {
		return r.metaItems(ctx, f, mf, margs, bits, eq, limit)
	}
	if !pagedShape(bits) {
		f.Limit = limit
		return r.searchItems(ctx, f)
	}
	args := r.pageArgs(itemShape(bits, f.State), eq, f.Before)
	items, err := storesql.Rows(ctx, r.s.Handle, "items", r.s.SQL(qItemsPage(r.s, bits, f.State, limit)), r.s.ScanItem, args...)
	if err != nil {
		return ItemPage{}, err
	}
	return fullPage(items, limit), nil
}

// fullPage is a page that ends where it is short of limit.
func fullPage(items []core.Item, limit int) ItemPage {
	p := ItemPage{Items: items}
	if len(items) == limit {
		p.Next = items[len(items)-1].ID
	}
	return p
}

// pageArgs are the arguments of a qNewestFirst page: the equality values
// and the bound id, once per merged page.
func (r *Reader) pageArgs(sh listShape, eq []any, before uuid.UUID) []any {
	if before == uuid.Nil {
		before = uuid.Max
	}
	one := append(eq, r.s.Dialect.UUID(before))
	if sh.split == "" {
		return one
	}
	var args []any
	for range sh.values {
		args = append(args, one...)
	}
	return args
}
