package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// runTreeCap bounds the items and the barriers a run's page reads: a run
// larger than that shows its first ones, and links to the items list.
const runTreeCap = 1000

// runPage is the data of a run's page.
type runPage struct {
	Run     core.Run
	Tree    []*node
	Waiting []core.Item
	Dead    []core.Item
	Signals []core.Signal
	// Context is the run's context: what its steps wrote for later ones.
	Context  []core.RunContextEntry
	Items    int
	Barriers int
	// Cut says the run has more items or barriers than the page read.
	Cut       bool
	CanRevive bool
	CanCancel bool
	CanSignal bool
	// Graph is the run's pipeline drawn with its items' states, nil when
	// the program did not give the dashboard its definition
	// (Options.Pipelines), or gave a version other than the run's.
	Graph *graphView
	// GraphVersion is the version of the pipeline's definition the
	// dashboard was given when it is not the run's (which it then does
	// not draw), 0 otherwise.
	GraphVersion int
}

// node is one entry of a run's tree: an item with the barriers it opened
// below it, or a barrier with its children and its join below it.
type node struct {
	Item    *core.Item
	Barrier *core.Barrier
	// Join marks the item as the join of the barrier above it.
	Join bool
	// Step and Role name the pipeline step the item runs and what it
	// does there (step, expand, collapse, await, ...), for a pipeline's
	// item; both are empty for any other item, shown by its kind.
	Step, Role string
	Kids       []*node
}

// run shows one run: its state and halt, its context, the tree of its
// steps and barriers, waiting steps and signals.
func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "id")
	if !ok {
		return
	}
	if q := newQuery(r.URL.RawQuery); !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	ctx := r.Context()
	run, err := h.store.GetRun(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "run", err)
		return
	}
	items, cutItems, err := h.runItems(r, id)
	if err != nil {
		h.storeFailed(w, r, "run's items", err)
		return
	}
	barriers, cutBarriers, err := h.runBarriers(r, id)
	if err != nil {
		h.storeFailed(w, r, "run's barriers", err)
		return
	}
	sigs, err := h.store.Signals(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "run's signals", err)
		return
	}
	runCtx, err := h.store.RunContext(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "run's context", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := runPage{Run: run, Tree: buildTree(items, barriers), Signals: sigs, Context: runCtx,
		Items: len(items), Barriers: len(barriers), Cut: cutItems || cutBarriers}
	for _, it := range items {
		if waits(now, it) {
			p.Waiting = append(p.Waiting, it)
		}
		if it.State == core.StateDead {
			p.Dead = append(p.Dead, it)
		}
	}
	if g, ok := h.graph(run.Name); ok {
		// A run's version is a pipeline's (pipeline.Options.Version, 1
		// when the run names none); a graph of no version is drawn over
		// any run.
		if g.Version != 0 && g.Version != max(run.Version, 1) {
			p.GraphVersion = g.Version
		} else {
			p.Graph = layoutGraph(g, stepStates(items, barriers))
		}
	}
	p.CanRevive = h.opts.Actions && run.State == core.RunHalted
	p.CanCancel = h.opts.Actions && !run.State.Final()
	p.CanSignal = h.opts.Actions && !run.State.Final()
	h.render(w, r, http.StatusOK, "run", "Run "+run.Name, now, p)
}

// runItems reads up to runTreeCap items of the run, page by page.
func (h *handler) runItems(r *http.Request, run uuid.UUID) ([]core.Item, bool, error) {
	return upToTreeCap(func(after uuid.UUID, n int) ([]core.Item, error) {
		return h.store.RunItems(r.Context(), core.RunItemsParams{Run: run, After: after, Limit: n})
	}, func(it core.Item) uuid.UUID { return it.ID })
}

// runBarriers reads up to runTreeCap barriers of the run, page by page.
func (h *handler) runBarriers(r *http.Request, run uuid.UUID) ([]core.Barrier, bool, error) {
	return upToTreeCap(func(after uuid.UUID, n int) ([]core.Barrier, error) {
		return h.read.RunBarriers(r.Context(), browse.RunBarriersParams{Run: run, After: after, Limit: n})
	}, func(b core.Barrier) uuid.UUID { return b.ID })
}

// upToTreeCap reads keyset pages of up to 500 rows until a short page or
// runTreeCap rows; cut says the cap stopped it.
func upToTreeCap[T any](page func(after uuid.UUID, n int) ([]T, error), id func(T) uuid.UUID) (all []T, cut bool, err error) {
	after := uuid.Nil
	for len(all) < runTreeCap {
		want := min(500, runTreeCap-len(all))
		rows, err := page(after, want)
		if err != nil {
			return nil, false, err
		}
		all = append(all, rows...)
		if len(rows) < want {
			return all, false, nil
		}
		after = id(rows[len(rows)-1])
	}
	return all, true, nil
}

// buildTree arranges a run's items and barriers: the items that report to
// no barrier (or to one not read) at the top, each item's barriers below
// it, each barrier's children and then its join below the barrier.
func buildTree(items []core.Item, barriers []core.Barrier) []*node {
	byOwner := map[uuid.UUID][]*core.Barrier{}
	known := map[uuid.UUID]bool{}
	for i := range barriers {
		b := &barriers[i]
		byOwner[b.OwnerID] = append(byOwner[b.OwnerID], b)
		known[b.ID] = true
	}
	members := map[uuid.UUID][]*core.Item{}
	joins := map[uuid.UUID][]*core.Item{}
	var roots []*core.Item
	for i := range items {
		it := &items[i]
		switch {
		case it.JoinOf != uuid.Nil && known[it.JoinOf]:
			joins[it.JoinOf] = append(joins[it.JoinOf], it)
		case it.BarrierID != uuid.Nil && known[it.BarrierID]:
			members[it.BarrierID] = append(members[it.BarrierID], it)
		default:
			roots = append(roots, it)
		}
	}
	seen := map[uuid.UUID]bool{}
	var itemNode func(it *core.Item, join bool) *node
	barrierNode := func(b *core.Barrier) *node {
		seen[b.ID] = true
		bn := &node{Barrier: b}
		for _, m := range members[b.ID] {
			bn.Kids = append(bn.Kids, itemNode(m, false))
		}
		for _, j := range joins[b.ID] {
			bn.Kids = append(bn.Kids, itemNode(j, true))
		}
		return bn
	}
	itemNode = func(it *core.Item, join bool) *node {
		n := &node{Item: it, Join: join}
		n.Step, n.Role = stepOf(it)
		if seen[it.ID] {
			return n
		}
		seen[it.ID] = true
		for _, b := range byOwner[it.ID] {
			if !seen[b.ID] {
				n.Kids = append(n.Kids, barrierNode(b))
			}
		}
		return n
	}
	var tree []*node
	for _, it := range roots {
		tree = append(tree, itemNode(it, false))
	}
	// Barriers whose owner was not read (or is not in the run) still show.
	for i := range barriers {
		if b := &barriers[i]; !seen[b.ID] {
			tree = append(tree, barrierNode(b))
		}
	}
	return tree
}
