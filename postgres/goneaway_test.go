package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/goneaway"
	"github.com/plenumdb/plenum/postgres"
)

// A session terminated in the middle of a store operation.
func TestGoneAway_TerminatedSession(t *testing.T) {
	t.Parallel()
	goneaway.Run(t, goneaway.Config{
		Dialect:   postgres.Dialect(),
		Open:      conformance.Opener(postgres.DriverName, harness.DSN(t)),
		SessionID: "SELECT pg_backend_pid()",
		Kill: func(ctx context.Context, db *sql.DB, pid int64) error {
			if _, err := db.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
				return err
			}
			for range 500 {
				var n int
				if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil || n == 0 {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
			return fmt.Errorf("backend %d still there after pg_terminate_backend", pid)
		},
	})
}
