package browse

import (
	"bytes"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
)

// ItemSearchRows is the largest and the default ItemFilter.SearchRows: the
// rows one call of Items examines for a Kind filter, across the queues
// and states it searches. Kinds are not indexed: an index costs every
// write of the items table, the hot path.
const ItemSearchRows = 10000

// searchWindows are the sizes the ids of a queue and state are read in
// (qSearchIDs), largest first. A fixed set, so that the statements are a
// fixed set too.
var searchWindows = []int{10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1}

// searchWindow is the largest window of which streams fit in bound rows
// (1 when none does).
func searchWindow(streams, bound int) int {
	for _, w := range searchWindows {
		if w*streams <= bound {
			return w
		}
	}
	return 1
}

// widerWindow is the window after w, twice or more its size (the largest
// at most).
func widerWindow(w int) int {
	for i := len(searchWindows) - 1; i >= 0; i-- {
		if searchWindows[i] >= 2*w {
			return searchWindows[i]
		}
	}
	return searchWindows[0]
}

// stream is one queue and state a kind's search reads, newest first.
type stream struct {
	queue string
	state core.State
	// ids are the ids read so far, newest first.
	ids []uuid.UUID
	// window is the size of the last read.
	window int
	// done is set once the stream is read to its end.
	done bool
}

// low is the lowest id read (uuid.Max before the first read).
func (st *stream) low() uuid.UUID {
	if len(st.ids) == 0 {
		return uuid.Max
	}
	return st.ids[len(st.ids)-1]
}

// searchItems serves the filters no index leads with (Items): a state
// without a queue, and a kind. A kind's page searches a range of ids,
// [floor, Before): searchFloor finds, from the (queue, state, id) index
// alone, the floor under which that range holds SearchRows rows across
// every queue and state, and each of them that has rows there is then read
// for the kind over exactly that range. The next page starts at the floor:
// a page covers the rows it examined, however unevenly they are spread
// over the queues and states.
func (r *Reader) searchItems(ctx context.Context, f ItemFilter) (ItemPage, error) {
	queues := []string{f.Queue}
	if f.Queue == "" {
		var err error
		if queues, err = r.allQueueNames(ctx); err != nil {
			return ItemPage{}, err
		}
	}
	states := itemStates
	if f.State != "" {
		states = []core.State{f.State}
	}
	before := f.Before
	if before == uuid.Nil {
		before = uuid.Max
	}
	if f.Kind == "" {
		return r.mergeQueues(ctx, queues, f.State, before, f.Limit)
	}
	streams := make([]*stream, 0, len(queues)*len(states))
	for _, q := range queues {
		for _, st := range states {
			streams = append(streams, &stream{queue: q, state: st})
		}
	}
	floor, examined, err := r.searchFloor(ctx, streams, before, f.SearchRows)
	if err != nil {
		return ItemPage{}, err
	}
	var found []core.Item
	scan := r.s.ScanItem
	for _, st := range streams {
		// A stream with no id read at or above the floor has no row in
		// the range: every row of it above its lowest id read was read.
		if len(st.ids) == 0 || idLess(st.ids[0], floor) {
			continue
		}
		matches, err := storesql.Rows(ctx, r.s.Handle, "items by kind", r.s.SQL(qSearchRange(r.s, st.state, f.Limit)), scan,
			st.queue, r.s.Dialect.UUID(before), r.s.Dialect.UUID(floor), f.Kind)
		if err != nil {
			return ItemPage{}, err
		}
		found = append(found, matches...)
	}
	page := searchPage(found, floor, f.Limit)
	page.Examined = examined
	return page, nil
}

// searchFloor reads the streams' ids below before from the index, newest
// first, until the range [floor, before) holds bound rows of which every
// one has been read, and returns the floor and those rows' count; the
// floor is uuid.Nil when fewer than bound rows are left. Every stream is
// read once, in windows that share the bound; then, while the rows read
// fall short, the stream whose lowest id read is the highest (the one
// that keeps the range from going lower) is read further, in windows that
// double, up to what is missing. The rows examined are bounded; the ids
// read from the index are at most about three times the bound (or one per
// stream).
func (r *Reader) searchFloor(ctx context.Context, streams []*stream, before uuid.UUID, bound int) (uuid.UUID, int, error) {
	first := searchWindow(len(streams), bound)
	for _, st := range streams {
		if err := r.readStream(ctx, st, before, first); err != nil {
			return uuid.Nil, 0, err
		}
	}
	for {
		// frontier: every row at or above it has been read, in every
		// stream.
		var neck *stream
		for _, st := range streams {
			if !st.done && (neck == nil || idLess(neck.low(), st.low())) {
				neck = st
			}
		}
		frontier := uuid.Nil
		if neck != nil {
			frontier = neck.low()
		}
		var certain []uuid.UUID
		for _, st := range streams {
			for _, id := range st.ids {
				if idLess(id, frontier) {
					break
				}
				certain = append(certain, id)
			}
		}
		if len(certain) >= bound {
			slices.SortFunc(certain, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
			return certain[bound-1], bound, nil
		}
		if neck == nil {
			return uuid.Nil, len(certain), nil
		}
		w := min(widerWindow(neck.window), searchWindow(1, bound-len(certain)))
		if err := r.readStream(ctx, neck, neck.low(), w); err != nil {
			return uuid.Nil, 0, err
		}
	}
}

// readStream reads the next w ids of st below from.
func (r *Reader) readStream(ctx context.Context, st *stream, from uuid.UUID, w int) error {
	ids, err := storesql.Rows(ctx, r.s.Handle, "items by kind", r.s.SQL(qSearchIDs(r.s.Dialect, st.state, w)), func(row storesql.Scanner) (uuid.UUID, error) {
		var id uuid.UUID
		err := row.Scan(&id)
		return id, err
	}, st.queue, r.s.Dialect.UUID(from))
	if err != nil {
		return err
	}
	st.ids = append(st.ids, ids...)
	st.window = w
	st.done = len(ids) < w
	return nil
}

// searchPage makes the page of a search from the matches of every stream
// in the range it searched, whose lowest id is floor (uuid.Nil: the
// search reached the end).
func searchPage(found []core.Item, floor uuid.UUID, limit int) ItemPage {
	// Each stream is its own statement: an item that changed state
	// between two of them can be read in both.
	found = slices.DeleteFunc(found, func(it core.Item) bool { return idLess(it.ID, floor) })
	sortNewestFirst(found)
	found = slices.CompactFunc(found, func(a, b core.Item) bool { return a.ID == b.ID })
	if len(found) >= limit {
		found = found[:limit]
		return ItemPage{Items: found, Next: found[len(found)-1].ID}
	}
	return ItemPage{Items: found, Next: floor, Searched: floor != uuid.Nil}
}

// mergeQueues is a page of one state's items across queues: one page per
// queue, merged newest first.
func (r *Reader) mergeQueues(ctx context.Context, queues []string, st core.State, before uuid.UUID, limit int) (ItemPage, error) {
	var all []core.Item
	q := r.s.SQL(qItemsPage(r.s, 1|2, st, limit))
	for _, queue := range queues {
		items, err := storesql.Rows(ctx, r.s.Handle, "items", q, r.s.ScanItem, queue, r.s.Dialect.UUID(before))
		if err != nil {
			return ItemPage{}, err
		}
		all = append(all, items...)
	}
	sortNewestFirst(all)
	return fullPage(all[:min(len(all), limit)], limit), nil
}

// allQueueNames lists every queue, one index probe each.
func (r *Reader) allQueueNames(ctx context.Context) ([]string, error) {
	var out []string
	for {
		after := ""
		if len(out) > 0 {
			after = out[len(out)-1]
		}
		names, err := r.queueNames(ctx, after, MaxListLimit)
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

func sortNewestFirst(items []core.Item) {
	slices.SortFunc(items, func(a, b core.Item) int { return bytes.Compare(b.ID[:], a.ID[:]) })
}
