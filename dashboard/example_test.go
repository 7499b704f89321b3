package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
)

// Mount the dashboard in your own server, under /admin/plenum, behind your
// own check of who may see it and act.
func Example() {
	dir, _ := os.MkdirTemp("", "plenum-dashboard-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	store.Enqueue(ctx, core.ItemSpec{Queue: "emails", Kind: "welcome"})

	dash, err := dashboard.New(store, dashboard.Options{
		Prefix:  "/admin/plenum",
		Actions: true,
		Authorize: func(r *http.Request) error {
			// Your own session or SSO check goes here.
			if r.Header.Get("X-Admin") != "yes" {
				return errors.New("not an admin")
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/plenum/", dash)

	// A request, as your server would receive it.
	for _, admin := range []string{"no", "yes"} {
		req := httptest.NewRequest(http.MethodGet, "/admin/plenum/items?queue=emails", nil)
		req.Header.Set("X-Admin", admin)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println("admin:", admin, "status:", rec.Code)
	}
	// Output:
	// admin: no status: 403
	// admin: yes status: 200
}

// Give the dashboard the program's pipelines, which the database does not
// hold: each gets a page that draws its definition, and the page of a
// run draws its steps' states over it.
func Example_pipelines() {
	dir, _ := os.MkdirTemp("", "plenum-dashboard-pipelines")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	double := pipeline.Step("double", func(_ context.Context, n int) (int, error) { return 2 * n, nil })
	count := func(_ context.Context, r *pipeline.Results[int]) (int, error) { return r.Len(), nil }
	upTo := func(_ context.Context, n int) ([]int, error) { return make([]int, n), nil }
	p, err := pipeline.Define("doubles", pipeline.Expand("each", upTo, double, count))
	if err != nil {
		log.Fatal(err)
	}
	// With an engine, eng.Graphs() describes every pipeline it runs.
	g, err := pipeline.Describe(p)
	if err != nil {
		log.Fatal(err)
	}
	dash, err := dashboard.New(store, dashboard.Options{Pipelines: []pipeline.Graph{g}})
	if err != nil {
		log.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/pipelines/doubles", nil)
	req.Host = "localhost" // a read-only dashboard answers loopback names
	rec := httptest.NewRecorder()
	dash.ServeHTTP(rec, req)
	body := rec.Body.String()
	fmt.Println("status:", rec.Code)
	for _, box := range []string{`data-node="each" data-role=""`, `data-node="double"`, `data-node="each" data-role="collapse"`} {
		fmt.Println(box, strings.Contains(body, box))
	}
	// Output:
	// status: 200
	// data-node="each" data-role="" true
	// data-node="double" true
	// data-node="each" data-role="collapse" true
}
