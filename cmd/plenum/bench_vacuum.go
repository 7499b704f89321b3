package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/plenumdb/plenum/dialect"
)

// vacuumFor returns what settles tables between measurements besides the
// registration's Checkpoint, or nil. On PostgreSQL that is a VACUUM
// (ANALYZE) of each: every claim and completion leaves a dead row version
// and dead index entries behind, and with autovacuum off or behind, each
// later measurement reads past more of them (the claim index's, and,
// before both sides' fences tested the state as a range, the partial index
// of claimed items, which their completions were planned to scan whole),
// so the side that came second, or the later round, paid for the earlier
// ones. Vacuumed before each side, both start from tables as
// clean as autovacuum keeps them. It goes by the dialect's name, as the
// baseline's shapes do.
func vacuumFor(d dialect.Dialect, tables ...string) func(context.Context, *sql.DB) error {
	if d.Name() != "postgres" {
		return nil
	}
	return func(ctx context.Context, db *sql.DB) error {
		for _, t := range tables {
			if _, err := db.ExecContext(ctx, "VACUUM (ANALYZE) "+t); err != nil {
				return fmt.Errorf("vacuum %s: %w", t, err)
			}
		}
		return nil
	}
}
