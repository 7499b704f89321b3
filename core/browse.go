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
}

// Items lists the items matching f, newest first (ids are UUIDv7: creation
// order), one keyset page at a time: pass the last id of a page as the
// next page's Before. A page costs the same however deep it is and however
// many items the table holds: each filter combination is read in id order
// from an index that leads with its filters (a queue without a state is
// the merge of one such page per state). An item inserted while paging has
// a newer id than the pages already read, so it never shows up in a later
// page, and paging never repeats or skips an item that existed when it
// began.
func (s *Store) Items(ctx context.Context, f ItemFilter) ([]Item, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if err := validName("Queue", f.Queue, migrations.MaxQueueLen, false); err != nil {
		return nil, err
	}
	if err := validState("State", f.State); err != nil {
		return nil, err
	}
	if err := validName("Kind", f.Kind, migrations.MaxKindLen, false); err != nil {
		return nil, err
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
	args := s.pageArgs(itemShape(bits, f.State), eq, f.Before)
	return readRows(ctx, s, "items", s.sql(qItemsPage(s.d, bits, f.State, limit)), func(r scanner) (Item, error) { return scanItem(s.d, r) }, args...)
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
