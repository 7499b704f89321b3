package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/goneaway"
	"github.com/plenumdb/plenum/mysql"
)

// A connection killed (KILL CONNECTION) in the middle of a store
// operation.
func TestGoneAway_KilledConnection(t *testing.T) {
	t.Parallel()
	if openDB(t) == nil {
		return // skipped
	}
	goneaway.Run(t, goneaway.Config{
		Dialect:   mysql.Dialect(),
		Open:      openDB,
		SessionID: "SELECT CONNECTION_ID()",
		Kill: func(ctx context.Context, db *sql.DB, id int64) error {
			if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
				return err
			}
			for range 500 {
				var n int
				if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil || n == 0 {
					return err
				}
				time.Sleep(10 * time.Millisecond)
			}
			return fmt.Errorf("connection %d still there after KILL", id)
		},
	})
}
