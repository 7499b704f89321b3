package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// The filler's rows are items core reads back: every state of the mix,
// in every queue, the claimed ones held by the owners.
func TestFill_SQLiteRowsAreItemsCoreReads(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "fill.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkFill(t, db, sqlite.Dialect())
}

func TestFill_PostgresRowsAreItemsCoreReads(t *testing.T) {
	dsn := os.Getenv("PLENUM_POSTGRES_DSN")
	if dsn == "" {
		if strings.Contains(os.Getenv("PLENUM_REQUIRE"), "postgres") {
			t.Fatal("PLENUM_REQUIRE names postgres but PLENUM_POSTGRES_DSN is empty")
		}
		t.Skip("PLENUM_POSTGRES_DSN is not set")
	}
	db, err := postgres.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the drop, then the close.
	t.Cleanup(func() { db.Close() })
	t.Cleanup(func() {
		if err := migrations.Drop(context.Background(), db, postgres.Dialect(), "lt_fill_"); err != nil {
			t.Errorf("drop: %v", err)
		}
	})
	checkFill(t, db, postgres.Dialect())
}

func checkFill(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	prefix := "lt_fill_"
	_ = migrations.Drop(ctx, db, d, prefix)
	store, err := core.Open(ctx, db, d, core.Options{Migrate: true, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "fill"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	if err := fillers[d.Name()](ctx, db, migrations.NamesFor(prefix).Items, n, []uuid.UUID{owner}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := extras(ctx, store, owner); err != nil {
		t.Fatal(err)
	}
	sums, err := browse.New(store).QueueSummaries(ctx, browse.QueueSummaryParams{Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	total := map[core.State]int64{}
	for _, s := range sums {
		for st, c := range s.Counts {
			total[st] += c
		}
	}
	want := map[core.State]int64{core.StateAvailable: n * 2 / 100, core.StateClaimed: n / 100, core.StateDead: n * 3 / 100, core.StateCancelled: n / 100}
	for st, c := range want {
		if total[st] < c {
			t.Errorf("%s: %d items, want at least %d (%v)", st, total[st], c, total)
		}
	}
	page, err := browse.New(store).Items(ctx, browse.ItemFilter{State: core.StateClaimed, Queue: "q2", Limit: 5})
	items := page.Items
	if err != nil || len(items) == 0 {
		t.Fatalf("claimed in q2: %v, %v", items, err)
	}
	if items[0].ClaimedBy != owner || items[0].LeaseExpiresAt.Before(time.Now()) {
		t.Errorf("claimed item %+v: want held by %s, lease in the future", items[0], owner)
	}
	owners, err := browse.New(store).Owners(ctx, browse.OwnersParams{})
	if err != nil || len(owners) != 1 || owners[0].Claims == 0 {
		t.Errorf("owners %+v, %v: want one holding claims", owners, err)
	}
}
