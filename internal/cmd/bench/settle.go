package bench

import (
	"context"
	"database/sql"

	"github.com/plenumdb/plenum/dialect"
)

// settleFor returns what settles tables between measurements besides the
// registration's Checkpoint (the registration's Settle), or nil. On
// PostgreSQL that is a VACUUM (ANALYZE) of each: every claim and
// completion leaves a dead row version and dead index entries behind,
// and with autovacuum off or behind, each later measurement reads past
// more of them (the claim index's, and, before both sides' fences tested
// the state as a range, the partial index of claimed items, which their
// completions were planned to scan whole), so the side that came second,
// or the later round, paid for the earlier ones. Settled before each
// side, both start from tables as clean as autovacuum keeps them.
func settleFor(d dialect.Dialect, tables ...string) func(context.Context, *sql.DB) error {
	r, err := dialect.Registered(d.Name())
	if err != nil || r.Settle == nil {
		return nil
	}
	return func(ctx context.Context, db *sql.DB) error { return r.Settle(ctx, db, tables...) }
}
