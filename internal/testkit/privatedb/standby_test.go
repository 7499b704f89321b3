package privatedb_test

import (
	"context"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/privatedb"
	"github.com/plenumdb/plenum/postgres"
)

// TestStandby_FollowsAndTakesOver checks that a standby, synchronous or
// not, receives its primary's commits (it reads them), and that after the primary is
// killed and the standby promoted, a client of the failover DSN writes
// to the standby, with what the primary had committed.
func TestStandby_FollowsAndTakesOver(t *testing.T) {
	t.Parallel()
	for _, sync := range []bool{false, true} {
		name := "async"
		if sync {
			name = "sync"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			primary := privatedb.Postgres(t, privatedb.Options{})
			standby := primary.Standby(t, privatedb.StandbyOptions{Synchronous: sync})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			db, err := postgres.Open(privatedb.FailoverDSN(primary, standby))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, "CREATE TABLE kept (n INT)"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (7)"); err != nil {
				t.Fatal(err)
			}
			// An asynchronous standby receives the row after its commit.
			replica, err := postgres.Open(standby.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer replica.Close()
			for n := 0; n != 1; {
				if err := replica.QueryRowContext(ctx, "SELECT COUNT(*) FROM kept").Scan(&n); err != nil && ctx.Err() != nil {
					t.Fatalf("the standby did not receive the primary's row: %v", err)
				}
				time.Sleep(20 * time.Millisecond) // poll the condition
			}
			if err := primary.Stop(privatedb.Immediate); err != nil {
				t.Fatal(err)
			}
			if err := standby.Promote(); err != nil {
				t.Fatal(err)
			}
			// The pool's connections to the old primary fail once each.
			for try := 0; ; try++ {
				_, err = db.ExecContext(ctx, "INSERT INTO kept VALUES (8)")
				if err == nil || try == 30 {
					break
				}
			}
			if err != nil {
				t.Fatalf("no write through the failover DSN after the promotion: %v", err)
			}
			var n, sum int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(n) FROM kept").Scan(&n, &sum); err != nil {
				t.Fatal(err)
			}
			if n != 2 || sum != 15 {
				t.Fatalf("the promoted standby holds %d rows summing to %d, want 7 and 8", n, sum)
			}
		})
	}
}
