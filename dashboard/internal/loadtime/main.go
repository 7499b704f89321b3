// Command loadtime times every dashboard page on a table of many items:
// it fills the tables (1,000,000 items by default, across queues, states
// and kinds, plus runs, owners and unfired fan-outs), serves the
// dashboard over HTTP, requests each page --n times, and prints p50, p95
// and max per page.
//
//	go run ./dashboard/internal/loadtime --dialect sqlite --items 1000000
//	go run ./dashboard/internal/loadtime --dialect postgres --dsn 'postgres://...' --drop
//
// On SQLite without --dsn the database is a temporary file. The tables
// have their own prefix (--prefix, default loadtime_); filled tables are
// reused when they already hold --items items, and --drop drops them at
// the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/pipeline"
	_ "github.com/plenumdb/plenum/postgres"
	_ "github.com/plenumdb/plenum/sqlite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadtime:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dialectName = flag.String("dialect", "sqlite", "sqlite or postgres")
		dsn         = flag.String("dsn", "", "the database (a file path for sqlite; default a temporary file)")
		items       = flag.Int("items", 1_000_000, "how many items to fill the table with")
		n           = flag.Int("n", 20, "requests per page")
		prefix      = flag.String("prefix", "loadtime_", "the tables' prefix")
		drop        = flag.Bool("drop", false, "drop the tables at the end")
	)
	flag.Parse()
	fill, ok := fillers[*dialectName]
	if !ok {
		return fmt.Errorf("--dialect %q: want sqlite or postgres", *dialectName)
	}
	if *n < 1 || *items < 1000 {
		return fmt.Errorf("--n must be at least 1 and --items at least 1000")
	}
	if *dsn == "" {
		if *dialectName != "sqlite" {
			return fmt.Errorf("--dsn is required for %s", *dialectName)
		}
		dir, err := os.MkdirTemp("", "plenum-loadtime")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*dsn = filepath.Join(dir, "loadtime.db")
	}
	reg, err := dialect.Registered(*dialectName)
	if err != nil {
		return err
	}
	db, err := reg.Open(*dsn)
	if err != nil {
		return fmt.Errorf("--dsn: %w", err)
	}
	defer db.Close()
	ctx := context.Background()
	store, err := core.Open(ctx, db, reg.Dialect, core.Options{Migrate: true, Prefix: *prefix})
	if err != nil {
		return err
	}
	if *drop {
		defer func() {
			if err := migrations.Drop(context.Background(), db, reg.Dialect, *prefix); err != nil {
				fmt.Fprintln(os.Stderr, "loadtime: drop:", err)
			}
		}()
	}

	table := migrations.NamesFor(*prefix).Items
	var have int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&have); err != nil {
		return err
	}
	var owners []uuid.UUID
	for i := range 4 {
		o, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{Host: fmt.Sprintf("loadtime-%d", i)})
		if err != nil {
			return err
		}
		owners = append(owners, o)
	}
	if have < *items {
		start := time.Now()
		if err := fill(ctx, db, table, *items-have, owners); err != nil {
			return err
		}
		if _, _, err := extras(ctx, store, owners[0]); err != nil {
			return err
		}
		fmt.Printf("filled %d items in %v\n", *items-have, time.Since(start).Round(time.Millisecond))
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&have); err != nil {
		return err
	}

	// The runs' pipelines, so that a run's page draws its graph with its
	// steps' states, as an application's dashboard would.
	var graphs []pipeline.Graph
	for i := range 3 {
		graphs = append(graphs, pipeline.Graph{Pipeline: "loadtime-" + strconv.Itoa(i),
			Root: pipeline.GraphNode{Kind: "step", Name: "first"}})
	}
	h, err := dashboard.New(store, dashboard.Options{Pipelines: graphs})
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	pages, err := pageList(ctx, store, srv.URL)
	if err != nil {
		return err
	}
	fmt.Printf("%s, %d items, %d requests per page (after one warm-up)\n", *dialectName, have, *n)
	fmt.Printf("%-44s %9s %9s %9s  %s\n", "page", "p50", "p95", "max", "")
	worst := time.Duration(0)
	for _, p := range pages {
		ds, err := timePage(srv.URL+p.path, *n)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		p95 := ds[(len(ds)*95+99)/100-1]
		mark := ""
		if p95 >= 300*time.Millisecond {
			mark = "MISSES 300 ms"
		}
		worst = max(worst, p95)
		fmt.Printf("%-44s %9s %9s %9s  %s\n", p.name, ms(ds[len(ds)/2]), ms(p95), ms(ds[len(ds)-1]), mark)
	}
	fmt.Printf("worst p95 %s\n", ms(worst))
	return nil
}

// page is one URL to time, under the server's root.
type page struct{ name, path string }

// pageList lists every page, with real ids for the detail pages and the
// URL of a deep page reached by following "next".
func pageList(ctx context.Context, store *core.Store, root string) ([]page, error) {
	ps := []page{
		{"overview /", "/"},
		{"items", "/items"},
		{"items queue=q3", "/items?queue=q3"},
		{"items kind=kind.5", "/items?kind=kind.5"},
		{"items queue=q3 kind=kind.5", "/items?queue=q3&kind=kind.5"},
		{"items queue=q3 state=dead kind=kind.5", "/items?queue=q3&state=dead&kind=kind.5"},
		{"items kind=nosuch (empty)", "/items?kind=nosuch"},
	}
	for _, st := range []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled} {
		ps = append(ps, page{"items state=" + string(st), "/items?state=" + string(st)})
		ps = append(ps, page{"items queue=q3 state=" + string(st), "/items?queue=q3&state=" + string(st)})
		its, err := browse.New(store).Items(ctx, browse.ItemFilter{State: st, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(its.Items) > 0 {
			ps = append(ps, page{"item " + string(st), "/items/" + its.Items[0].ID.String()})
		}
	}
	for _, start := range []string{"/items", "/items?state=completed", "/items?queue=q3&state=completed"} {
		deep, err := follow(root, start, 20)
		if err != nil {
			return nil, err
		}
		ps = append(ps, page{"deep page 21 of " + start, deep})
	}
	ps = append(ps, page{"pipelines", "/pipelines"}, page{"pipeline loadtime-0 (graph)", "/pipelines/loadtime-0"})
	ps = append(ps, page{"runs", "/runs"}, page{"runs state=running", "/runs?state=running"}, page{"runs name=loadtime-1", "/runs?name=loadtime-1"})
	runs, err := browse.New(store).Runs(ctx, browse.RunFilter{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(runs) > 0 {
		ps = append(ps, page{"run detail", "/runs/" + runs[0].ID.String()})
	}
	ps = append(ps, page{"owners", "/owners"}, page{"stuck fan-ins", "/stuck"})
	bs, err := store.UnfiredBarriers(ctx, core.UnfiredBarriersParams{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(bs) > 0 {
		ps = append(ps, page{"barrier detail", "/barriers/" + bs[0].ID.String()})
	}
	return ps, nil
}

// follow follows the rel="next" link from path n times and returns the
// path it reached.
func follow(root, path string, n int) (string, error) {
	for range n {
		body, err := get(root + path)
		if err != nil {
			return "", err
		}
		next, ok := nextLink(body)
		if !ok {
			return path, nil
		}
		path = next
	}
	return path, nil
}

// nextLink finds the href of the page's rel="next" link.
func nextLink(body string) (string, bool) {
	i := strings.Index(body, `rel="next"`)
	if i < 0 {
		return "", false
	}
	tag := body[strings.LastIndex(body[:i], "<"):]
	j := strings.Index(tag, `href="`)
	if j < 0 {
		return "", false
	}
	href := tag[j+len(`href="`):]
	href = href[:strings.IndexByte(href, '"')]
	return strings.ReplaceAll(href, "&amp;", "&"), true
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %.300s", url, resp.Status, b)
	}
	return string(b), nil
}

// timePage requests url once to warm up, then n times, and returns the
// times sorted.
func timePage(url string, n int) ([]time.Duration, error) {
	if _, err := get(url); err != nil {
		return nil, err
	}
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		if _, err := get(url); err != nil {
			return nil, err
		}
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
