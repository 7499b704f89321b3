package browse

import (
	"fmt"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
)

// Reader reads a store's tables for people: its methods list items, runs,
// a run's barriers, owners, queue summaries and a queue's lanes a keyset
// page at a time.
// It is safe for concurrent use, and as cheap to make as to keep.
type Reader struct {
	store *core.Store
	s     *seam
}

// errNoStore is the error of every read of a Reader made on no store.
var errNoStore = &core.InputError{Field: "store", Reason: "not an open store: pass browse.New a store core.Open returned"}

// New returns a Reader of store's tables. Its reads go through the
// store's handle, with its table prefix and clock offset, and retry
// transient errors as the store's own reads do. A Reader of a nil store
// (or of one core.Open did not return) answers every read with an
// *core.InputError.
func New(store *core.Store) *Reader {
	r := &Reader{store: store}
	if of, ok := storesql.Exposed[storesql.StoreOf[*core.Store, core.Item, core.Run, core.Barrier]](); ok {
		r.s = of(store)
	}
	return r
}

// ready is nil when r has a store to read.
func (r *Reader) ready() error {
	if r == nil || r.s == nil {
		return errNoStore
	}
	return nil
}

// Page sizes of the dashboard's reads (Items, Runs, Owners, RunBarriers,
// QueueSummaries).
const (
	// MaxListLimit is the largest page a list read returns.
	MaxListLimit = 500
	// DefaultListLimit is the page size of a Limit of 0.
	DefaultListLimit = 50
)

// invalid is the *core.InputError of a refused field, as core's own.
func invalid(field, format string, args ...any) error {
	return &core.InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
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
func validState(field string, st core.State) error {
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
func validRunState(field string, st core.RunState) error {
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

// seam is a store as this package reads it: see internal/storesql.
type seam = storesql.Store[core.Item, core.Run, core.Barrier]
