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

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
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
