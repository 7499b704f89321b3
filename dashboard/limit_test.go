package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/postgres"
)

// TestDashboard_BurstWithinConnectionLimit sends 200 requests, 50 at a
// time, to a dashboard on PostgreSQL under a role the server refuses past
// 5 sessions: each is served (200) or told the dashboard is busy (503),
// none fails (500), and the pool never opens more than the dashboard's 4
// concurrent reads need. Without a bound, the requests would open a
// session each and the server would refuse the ones past the limit, as it
// refused every other client once its max_connections were taken.
func TestDashboard_BurstWithinConnectionLimit(t *testing.T) {
	t.Parallel()
	const limit, requests, parallel = 5, 200, 50
	var pg database
	for _, d := range databases {
		if d.Name == "postgres" {
			pg = d
		}
	}
	st := openStore(t, pg)
	fill(t, st)
	db, err := postgres.Open(testdb.LimitedRole(t, conformance.DSN(t, "postgres"), limit, st.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rst, err := core.Open(ctx, db, pg.Dialect, core.Options{Prefix: st.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, newDashboard(t, rst, dashboard.Options{}), "")

	paths := []string{"/", "/items?queue=emails", "/owners", "/runs"}
	codes := make(chan int, requests)
	turns := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range requests {
		turns <- struct{}{}
		wg.Go(func() {
			defer func() { <-turns }()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+paths[i%len(paths)], nil)
			resp, err := c.http.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for code := range codes {
		got[code]++
	}
	if got[http.StatusOK]+got[http.StatusServiceUnavailable] != requests {
		t.Fatalf("responses by status: %v, want %d of 200 or 503", got, requests)
	}
	if got[http.StatusOK] == 0 {
		t.Fatalf("responses by status: %v, want some served", got)
	}
	if n := db.Stats().OpenConnections; n > dashboard.DefaultMaxConcurrentReads {
		t.Fatalf("%d connections open, more than the %d concurrent reads", n, dashboard.DefaultMaxConcurrentReads)
	}
}
