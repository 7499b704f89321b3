package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Settle runs VACUUM (ANALYZE) on each table, as autovacuum would in
// time: every claim and completion leaves a dead row version and dead
// index entries behind, which later claims read past until a vacuum
// removes them, and the planner's statistics age as the tables fill.
// It is the dialect's dialect.Registration.Settle, for benchmarks that
// measure one workload after another on the same tables; an application
// leaves this to autovacuum. Tables are names as the search path resolves
// them.
func Settle(ctx context.Context, db *sql.DB, tables ...string) error {
	if db == nil {
		return errors.New("postgres: settle: nil database")
	}
	for _, t := range tables {
		if t == "" {
			return errors.New("postgres: settle: empty table name")
		}
		if _, err := db.ExecContext(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("postgres: settle %s: %w", t, err)
		}
	}
	return nil
}
