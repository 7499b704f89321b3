package dialect

import "context"

// TableProber is an optional capability of a Dialect: whether a table
// exists. The migrator (package migrations) finds it by type assertion, so
// that Version can tell a missing migrations table from a query that
// failed for another reason, and so that the statement-by-statement
// migrator skips a table that a half-done migration already created (or
// dropped). The sqlite, mysql, postgres, oracle and cockroach dialects
// implement it.
type TableProber interface {
	// TableExists reports whether table exists.
	TableExists(ctx context.Context, q Querier, table string) (bool, error)
}

// IndexProber is an optional capability of a Dialect whose DDL is not
// transactional and that cannot say CREATE INDEX IF NOT EXISTS or DROP
// INDEX IF EXISTS (MySQL 8): the statement-by-statement migrator asks it
// whether an index exists, and skips creating one that does (or dropping
// one that does not), so that running the migrator again completes a
// migration that failed half way. The mysql and oracle dialects implement
// it.
type IndexProber interface {
	// IndexExists reports whether table has an index named index.
	IndexExists(ctx context.Context, q Querier, table, index string) (bool, error)
}

// ColumnProber is IndexProber for columns: a dialect whose DDL is not
// transactional and that cannot say ADD COLUMN IF NOT EXISTS or DROP
// COLUMN IF EXISTS (MySQL 8) implements it. The mysql and oracle dialects
// do.
type ColumnProber interface {
	// ColumnExists reports whether table has a column named column.
	ColumnExists(ctx context.Context, q Querier, table, column string) (bool, error)
}
