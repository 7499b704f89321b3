package core

import "context"

// readRows runs query outside any transaction (retried as s.read retries)
// and scans every row it returns: the shape of each keyset page the store
// reads (children, a run's items, unfired barriers, signals).
func readRows[T any](ctx context.Context, s *Store, what, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	var out []T
	err := s.read(ctx, what, func() error {
		rows, err := s.db.QueryContext(ctx, query, args...)
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
