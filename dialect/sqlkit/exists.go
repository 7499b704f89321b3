package sqlkit

import (
	"context"
	"fmt"

	"github.com/plenumdb/plenum/dialect"
)

// Exists runs query, a SELECT COUNT(*) of a catalog (the probes a
// migrator asks where DDL is not transactional: dialect.TableProber,
// IndexProber, ColumnProber), and reports whether it counted a row. what names the
// probe in an error ("mysql: table exists").
func Exists(ctx context.Context, q dialect.Querier, what, query string, args ...any) (bool, error) {
	var n int64
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}
