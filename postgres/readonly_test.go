package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// A role with nothing but SELECT on Plenum's tables opens a store and runs
// every read a dashboard makes: neither core.Open (without Migrate) nor the
// reads write. The role's first write is refused, which shows it really
// is read-only.
func TestReadOnlyRole_OpensAndReads(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := harness.DSN(t)
	admin := conformance.Opener(postgres.DriverName, dsn)(t)
	role := fmt.Sprintf("plenum_ro_%08x", rand.Uint32())
	if _, err := admin.ExecContext(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	p := fmt.Sprintf("ro%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, admin, postgres.Dialect(), p); err != nil {
			t.Errorf("drop: %v", err)
		}
	})
	s, err := core.Open(ctx, admin, postgres.Dialect(), core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "ro"}, core.ItemSpec{Queue: "ro", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.CreateRun(ctx, core.RunSpec{Name: "ro"}, core.ItemSpec{Queue: "ro"})
	if err != nil {
		t.Fatal(err)
	}
	n := migrations.NamesFor(p)
	for _, table := range []string{n.Items, n.Processes, n.Barriers, n.Attempts, n.Queues, n.Schedules, n.Runs, n.Signals, n.Migrations} {
		if _, err := admin.ExecContext(ctx, "GRANT SELECT ON "+table+" TO "+role); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	ro := conformance.Opener(postgres.DriverName, u.String())(t)
	ro.SetMaxOpenConns(2)
	r, err := core.Open(ctx, ro, postgres.Dialect(), core.Options{Prefix: p})
	if err != nil {
		t.Fatalf("core.Open as a read-only role: %v", err)
	}
	reads := map[string]func() error{
		"Items": func() error { _, err := browse.New(r).Items(ctx, browse.ItemFilter{Queue: "ro"}); return err },
		"Runs":  func() error { _, err := browse.New(r).Runs(ctx, browse.RunFilter{Name: "ro"}); return err },
		"RunBarriers": func() error {
			_, err := browse.New(r).RunBarriers(ctx, browse.RunBarriersParams{Run: rc.ID})
			return err
		},
		"RunItems":       func() error { _, err := r.RunItems(ctx, core.RunItemsParams{Run: rc.ID, Limit: 10}); return err },
		"Owners":         func() error { _, err := browse.New(r).Owners(ctx, browse.OwnersParams{}); return err },
		"QueueSummaries": func() error { _, err := browse.New(r).QueueSummaries(ctx, browse.QueueSummaryParams{}); return err },
		"Queues":         func() error { _, err := r.Queues(ctx); return err },
		"Counts":         func() error { _, err := r.Counts(ctx, "ro"); return err },
		"GetRun":         func() error { _, err := r.GetRun(ctx, rc.ID); return err },
		"Signals":        func() error { _, err := r.Signals(ctx, rc.ID); return err },
		"UnfiredBarriers": func() error {
			_, err := r.UnfiredBarriers(ctx, core.UnfiredBarriersParams{})
			return err
		},
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s as a read-only role: %v", name, err)
		}
	}
	if _, err := r.Enqueue(ctx, core.ItemSpec{Queue: "ro"}); err == nil {
		t.Error("the read-only role enqueued: it is not read-only, and the test proves nothing")
	}
}
