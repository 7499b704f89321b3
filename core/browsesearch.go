package core

import (
	"bytes"
	"context"
	"database/sql"
	"slices"

	"github.com/google/uuid"
)

// ItemSearchRows is the largest and the default ItemFilter.SearchRows: the
// rows one call of ItemsPage examines for a Kind filter, spread over the
// queues and states it searches (at least one row each). Kinds are not
// indexed: an index costs every write of the items table, the hot path.
const ItemSearchRows = 10000

// searchWindows are the rows examined per queue and state, largest first:
// the largest at most the bound over the number of queues and states
// searched. A fixed set, so that the statements are a fixed set too.
var searchWindows = []int{10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1}

// searchWindow is the window of each of streams (queue, state) pairs
// searched within bound rows.
func searchWindow(streams, bound int) int {
	for _, w := range searchWindows {
		if w*streams <= bound {
			return w
		}
	}
	return 1
}

// searchItems serves the filters no index leads with (ItemsPage): a state
// without a queue, and a kind. Each queue and state is read newest first
// from items_browse (queue, state, id); the pages are merged in id order.
func (s *Store) searchItems(ctx context.Context, f ItemFilter) (ItemPage, error) {
	queues := []string{f.Queue}
	if f.Queue == "" {
		var err error
		if queues, err = s.allQueueNames(ctx); err != nil {
			return ItemPage{}, err
		}
	}
	states := itemStates
	if f.State != "" {
		states = []State{f.State}
	}
	before := f.Before
	if before == uuid.Nil {
		before = uuid.Max
	}
	if f.Kind == "" {
		return s.mergeQueues(ctx, queues, f.State, before, f.Limit)
	}
	w := searchWindow(len(queues)*len(states), f.SearchRows)
	var (
		found    []Item
		frontier uuid.UUID // the highest id below which a stream was not read
		examined = w * len(queues) * len(states)
	)
	scan := func(r scanner) (Item, error) { return scanItem(s.d, r) }
	for _, q := range queues {
		for _, st := range states {
			matches, err := readRows(ctx, s, "items by kind", s.sql(qSearchWindow(s.d, st, w, f.Limit)), scan, q, s.d.UUID(before), f.Kind)
			if err != nil {
				return ItemPage{}, err
			}
			found = append(found, matches...)
			low, err := s.streamLow(ctx, q, st, before, w, matches, f.Limit)
			if err != nil {
				return ItemPage{}, err
			}
			if low != uuid.Nil && idLess(frontier, low) {
				frontier = low
			}
		}
	}
	page := searchPage(found, frontier, f.Limit)
	page.Examined = examined
	return page, nil
}

// searchPage makes the page of a search from the matches of every stream
// and the frontier, the highest id below which some stream was not read.
func searchPage(found []Item, frontier uuid.UUID, limit int) ItemPage {
	// Only the matches at or above the frontier are certain: below it,
	// some stream was not read.
	found = slices.DeleteFunc(found, func(it Item) bool { return idLess(it.ID, frontier) })
	sortNewestFirst(found)
	// Each stream is its own statement: an item that changed state
	// between two of them can be read in both.
	found = slices.CompactFunc(found, func(a, b Item) bool { return a.ID == b.ID })
	if len(found) >= limit {
		found = found[:limit]
		return ItemPage{Items: found, Next: found[len(found)-1].ID}
	}
	return ItemPage{Items: found, Next: frontier, Searched: frontier != uuid.Nil}
}

// streamLow is where the search of one queue and state stopped: the
// lowest id it examined when rows remain below it, else uuid.Nil (the
// stream is read to its end). A stream that gave a full page of matches
// stopped at its last match: what lies below is not needed.
func (s *Store) streamLow(ctx context.Context, queue string, st State, before uuid.UUID, w int, matches []Item, limit int) (uuid.UUID, error) {
	if len(matches) >= limit {
		return matches[limit-1].ID, nil
	}
	lowest := func(from uuid.UUID, n int) (uuid.UUID, error) {
		var id uuid.NullUUID
		err := s.read(ctx, "items by kind", func() error {
			err := s.db.QueryRowContext(ctx, s.sql(qSearchLowest(s.d, st, n)), queue, s.d.UUID(from)).Scan(&id)
			if err == sql.ErrNoRows {
				id, err = uuid.NullUUID{}, nil
			}
			return err
		})
		return id.UUID, err
	}
	low, err := lowest(before, w)
	if err != nil || low == uuid.Nil {
		return uuid.Nil, err
	}
	more, err := lowest(low, 1)
	if err != nil || more == uuid.Nil {
		return uuid.Nil, err
	}
	return low, nil
}

// mergeQueues is a page of one state's items across queues: one page per
// queue, merged newest first.
func (s *Store) mergeQueues(ctx context.Context, queues []string, st State, before uuid.UUID, limit int) (ItemPage, error) {
	var all []Item
	q := s.sql(qItemsPage(s.d, 1|2, st, limit))
	for _, queue := range queues {
		items, err := readRows(ctx, s, "items", q, func(r scanner) (Item, error) { return scanItem(s.d, r) }, queue, s.d.UUID(before))
		if err != nil {
			return ItemPage{}, err
		}
		all = append(all, items...)
	}
	sortNewestFirst(all)
	return fullPage(all[:min(len(all), limit)], limit), nil
}

// allQueueNames lists every queue, one index probe each.
func (s *Store) allQueueNames(ctx context.Context) ([]string, error) {
	var out []string
	for {
		after := ""
		if len(out) > 0 {
			after = out[len(out)-1]
		}
		names, err := s.queueNames(ctx, after, MaxListLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
		if len(names) < MaxListLimit {
			return out, nil
		}
	}
}

// idLess orders ids as the databases do: byte by byte.
func idLess(a, b uuid.UUID) bool { return bytes.Compare(a[:], b[:]) < 0 }

func sortNewestFirst(items []Item) {
	slices.SortFunc(items, func(a, b Item) int { return bytes.Compare(b.ID[:], a.ID[:]) })
}
