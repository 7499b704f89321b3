package core

import (
	"context"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/migrations"
)

// Page sizes of the dashboard's reads (Items, Runs, Owners, RunBarriers,
// QueueSummaries).
const (
	// MaxListLimit is the largest page a list read returns.
	MaxListLimit = 500
	// DefaultListLimit is the page size of a Limit of 0.
	DefaultListLimit = 50
)

// ItemFilter chooses the items Items lists. Zero fields match any item.
type ItemFilter struct {
	// Queue, when set, lists only that queue's items: up to 128
	// characters.
	Queue string
	// State, when set, is one of the five item states.
	State State
	// Kind, when set, lists only items of that kind: up to 128
	// characters.
	Kind string
	// Run, when set, lists only the items of that run.
	Run uuid.UUID
	// Before is the id of the last item of the previous page; uuid.Nil
	// for the first page.
	Before uuid.UUID
	// Limit is the page size: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
	// SearchRows bounds the rows a Kind filter (without a Run) examines
	// in one call of ItemsPage: 1 to ItemSearchRows; 0 means
	// ItemSearchRows. The other filters ignore it.
	SearchRows int
}

// Items lists the items matching f, newest first (ids are UUIDv7: creation
// order), one keyset page at a time: pass the last id of a page as the
// next page's Before. It is ItemsPage's Items: see ItemsPage for what a
// page costs, and for a Kind filter, whose page may be short before the
// end (ItemPage.Next says where to go on).
func (s *Store) Items(ctx context.Context, f ItemFilter) ([]Item, error) {
	p, err := s.ItemsPage(ctx, f)
	return p.Items, err
}

// ItemPage is one page of Items, and where the next one starts.
type ItemPage struct {
	Items []Item
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

// ItemsPage lists the items matching f, newest first, as Items does, and
// says where the next page starts. A page costs the same however deep it
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
//
// An item inserted while paging has a newer id than the pages already
// read, so it never shows up in a later page, and paging never repeats or
// skips an item that existed, in the state filtered on, when it began.
func (s *Store) ItemsPage(ctx context.Context, f ItemFilter) (ItemPage, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return ItemPage{}, err
	}
	if err := lookupName("Queue", f.Queue, migrations.MaxQueueLen, false); err != nil {
		return ItemPage{}, err
	}
	if err := validState("State", f.State); err != nil {
		return ItemPage{}, err
	}
	if err := lookupName("Kind", f.Kind, migrations.MaxKindLen, false); err != nil {
		return ItemPage{}, err
	}
	if f.SearchRows == 0 {
		f.SearchRows = ItemSearchRows
	}
	if f.SearchRows < 1 || f.SearchRows > ItemSearchRows {
		return ItemPage{}, invalid("SearchRows", "%d is outside [1, %d]", f.SearchRows, ItemSearchRows)
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
		eq = append(eq, s.d.UUID(f.Run))
	}
	if !pagedShape(bits) {
		f.Limit = limit
		return s.searchItems(ctx, f)
	}
	args := s.pageArgs(itemShape(bits, f.State), eq, f.Before)
	items, err := readRows(ctx, s, "items", s.sql(qItemsPage(s.d, bits, f.State, limit)), func(r scanner) (Item, error) { return scanItem(s.d, r) }, args...)
	if err != nil {
		return ItemPage{}, err
	}
	return fullPage(items, limit), nil
}

// fullPage is a page that ends where it is short of limit.
func fullPage(items []Item, limit int) ItemPage {
	p := ItemPage{Items: items}
	if len(items) == limit {
		p.Next = items[len(items)-1].ID
	}
	return p
}

// pageArgs are the arguments of a qNewestFirst page: the equality values
// and the bound id, once per merged page.
func (s *Store) pageArgs(sh listShape, eq []any, before uuid.UUID) []any {
	if before == uuid.Nil {
		before = uuid.Max
	}
	one := append(eq, s.d.UUID(before))
	if sh.split == "" {
		return one
	}
	var args []any
	for range sh.values {
		args = append(args, one...)
	}
	return args
}

// listLimit is a page size: 0 gives the default, and anything outside
// [1, MaxListLimit] an *InputError.
func listLimit(n int) (int, error) {
	if n == 0 {
		return DefaultListLimit, nil
	}
	if n < 1 || n > MaxListLimit {
		return 0, invalid("Limit", "%d is outside [1, %d]", n, MaxListLimit)
	}
	return n, nil
}

// validState accepts "" (any state) and the five item states.
func validState(field string, st State) error {
	if st == "" {
		return nil
	}
	for _, v := range itemStates {
		if st == v {
			return nil
		}
	}
	return invalid(field, "%q is not an item state", truncated(string(st)))
}

// validRunState accepts "" (any state) and the five run states.
func validRunState(field string, st RunState) error {
	if st == "" {
		return nil
	}
	for _, v := range runStates {
		if st == v {
			return nil
		}
	}
	return invalid(field, "%q is not a run state", truncated(string(st)))
}

// truncated keeps an error about a refused value short.
func truncated(v string) string {
	if r := []rune(v); len(r) > 32 {
		return string(r[:32]) + "..."
	}
	return v
}
