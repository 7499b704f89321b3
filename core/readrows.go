package core

import (
	"context"

	"github.com/plenumdb/plenum/internal/storesql"
)

// readRows runs query outside any transaction (retried as s.read retries)
// and scans every row it returns: the shape of each keyset page the store
// reads (children, a run's items, unfired barriers, signals).
func readRows[T any](ctx context.Context, s *Store, what, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	return storesql.Rows(ctx, s.handle, what, query, scan, args...)
}
