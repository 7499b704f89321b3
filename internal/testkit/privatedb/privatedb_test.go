package privatedb_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/privatedb"
)

// TestServers_SurviveRestarts checks that each private server answers,
// keeps its data over a fast and an immediate restart, and answers again
// after each.
func TestServers_SurviveRestarts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		start  func(privatedb.TB, privatedb.Options) *privatedb.Server
		driver string
	}{
		{"postgres", privatedb.Postgres, "pgx"},
		{"mariadb", privatedb.MariaDB, "mysql"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := c.start(t, privatedb.Options{})
			db, err := sql.Open(c.driver, s.DSN())
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(2)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := db.ExecContext(ctx, "CREATE TABLE kept (n INT)"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (7)"); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []privatedb.Shutdown{privatedb.Fast, privatedb.Immediate} {
				if err := s.Restart(mode); err != nil {
					t.Fatalf("restart (%v): %v", mode, err)
				}
				// The pool's connections to the old server fail once each.
				var n int
				for try := 0; ; try++ {
					err = db.QueryRowContext(ctx, "SELECT n FROM kept").Scan(&n)
					if err == nil || try == 10 {
						break
					}
				}
				if err != nil || n != 7 {
					t.Fatalf("after a restart (%v): %d, %v; want 7", mode, n, err)
				}
			}
		})
	}
}
