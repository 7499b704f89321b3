package storesql

import (
	"context"
	"database/sql"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// Scanner is a row to scan: a *sql.Row or a *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Handle is what a store's reads go through.
type Handle struct {
	// DB is the store's database; nil in the catalog's stand-in store.
	DB *sql.DB
	// Dialect is the store's dialect.
	Dialect dialect.Dialect
	// SQL expands the table and clock placeholders of a statement written
	// with '?' ({items}, {now}, {now+?}, ...: see core's sqltext.go) and
	// rebinds it to the dialect's style.
	SQL func(raw string) string
	// Read runs fn, a read outside any transaction, again after a
	// jittered backoff when it fails with a transient error, as the store
	// retries its own reads. fn must set its results afresh on every
	// call.
	Read func(ctx context.Context, op string, fn func() error) error
}

// Store is a core.Store as a package beside core reads it: its handle, and
// the rows it reads, I, R and B being core's Item, Run and Barrier.
type Store[I, R, B any] struct {
	*Handle
	// LookupName checks a name that selects rows the store holds (a
	// filter's queue or kind), as core checks its own: an
	// *core.InputError naming field when it is refused.
	LookupName func(field, v string, max int) error
	// ValidName checks a name as core checks one it writes (LookupName's
	// rules, and no control characters), "" accepted: for a filter on
	// what only such names were ever written to (tags, metadata).
	ValidName func(field, v string, max int) error
	// ItemColumns, RunColumns and BarrierColumns are the column lists
	// ScanItem, ScanRun and ScanBarrier read, in their order.
	ItemColumns, RunColumns, BarrierColumns string
	ScanItem                                func(Scanner) (I, error)
	ScanRun                                 func(Scanner) (R, error)
	ScanBarrier                             func(Scanner) (B, error)
}

// Rows runs query outside any transaction (retried as h.Read retries) and
// scans every row it returns: the shape of each keyset page a store reads.
func Rows[T any](ctx context.Context, h *Handle, what, query string, scan func(Scanner) (T, error), args ...any) ([]T, error) {
	var out []T
	err := h.Read(ctx, what, func() error {
		rows, err := h.DB.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = nil
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Time scans a time column through Dialect; NULL gives the zero time.
type Time struct {
	Dialect dialect.Dialect
	T       time.Time
}

// Scan reads src as the dialect reads its times.
func (v *Time) Scan(src any) error {
	t, err := ScanTime(v.Dialect, src)
	if err != nil {
		return err
	}
	v.T = t
	return nil
}

// ScanTime reads a time column's value through d; NULL gives the zero
// time.
func ScanTime(d dialect.Dialect, src any) (time.Time, error) {
	if src == nil {
		return time.Time{}, nil
	}
	return d.ScanTime(src)
}

// OneState is "state = st" written as a range of one value, which matches
// no partial index's predicate: PostgreSQL proves that "state =
// 'claimed'" implies the predicate of an index of claimed items only,
// and may then read all of them through it.
func OneState(st string) string {
	v := "'" + st + "'"
	return "state >= " + v + " AND state <= " + v
}
