package dashboard

import (
	"net/http"
	"strconv"

	"github.com/plenumdb/plenum/core"
)

// itemPage is the data of an item's page.
type itemPage struct {
	Item     core.Item
	Attempts []core.Attempt
	// Barrier is the barrier the item reports to; JoinOf the barrier
	// whose firing enqueued it (each nil when there is none).
	Barrier, JoinOf *core.Barrier
	CanRevive       bool
	CanCancel       bool
	// Progress is the item's last progress report, nil when it made none;
	// Percent its fraction done, "" when its total is unknown.
	Progress *core.Progress
	Percent  string
	// Meta is the item's tags and metadata (empty when it has none).
	Meta core.Metadata
}

// item shows one item: payload, result, attempts, timing and links.
func (h *handler) item(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "id")
	if !ok {
		return
	}
	if q := newQuery(r.URL.RawQuery); !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	ctx := r.Context()
	it, err := h.store.Get(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "item", err)
		return
	}
	p := itemPage{Item: it}
	if p.Attempts, err = h.store.Attempts(ctx, id); err != nil {
		h.storeFailed(w, r, "item's attempts", err)
		return
	}
	meta, err := h.store.ItemMetadata(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "item's tags and metadata", err)
		return
	}
	p.Meta = meta[id]
	prog, reported, err := h.store.Progress(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "item's progress", err)
		return
	}
	if reported {
		p.Progress = &prog
		if f, ok := prog.Fraction(); ok {
			p.Percent = strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
		}
	}
	if p.Barrier, err = h.optionalBarrier(r, it.BarrierID); err != nil {
		h.storeFailed(w, r, "item's barrier", err)
		return
	}
	if p.JoinOf, err = h.optionalBarrier(r, it.JoinOf); err != nil {
		h.storeFailed(w, r, "join's barrier", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p.CanRevive = h.opts.Actions && it.State == core.StateDead
	p.CanCancel = h.opts.Actions && !it.State.Terminal()
	h.render(w, r, http.StatusOK, "item", "Item "+it.ID.String(), now, p)
}
