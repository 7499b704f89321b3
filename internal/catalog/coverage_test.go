package catalog_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/internal/testkit/storeworkload"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// openWire opens a new SQLite file whose statements tap records.
func openWire(t *testing.T, tap *wiretap.Tap, name string) *sql.DB {
	t.Helper()
	return wiretap.Open(t, tap, filepath.Join(t.TempDir(), name))
}

// queries are the texts of what tap recorded since the last call.
func queries(tap *wiretap.Tap) []string {
	var out []string
	for _, st := range tap.Take() {
		out = append(out, st.Query)
	}
	return out
}

// ownStatements are what the dialect and the migrations package send on
// their own, without the core: migrating, reading the schema version,
// checking the connection, beginning and ending transactions.
func ownStatements(t *testing.T, d dialect.Dialect) map[string]bool {
	t.Helper()
	ctx := context.Background()
	var tap wiretap.Tap
	db := openWire(t, &tap, "own.db")
	tap.Take()
	if _, err := migrations.Apply(ctx, db, d, core.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Version(ctx, db, d, core.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []dialect.TxOptions{{}, {ReadOnly: true}} {
		for _, commit := range []bool{true, false} {
			tx, err := d.Begin(ctx, db, opts)
			if err != nil {
				t.Fatal(err)
			}
			end := tx.Rollback
			if commit {
				end = tx.Commit
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
		}
	}
	own := map[string]bool{}
	for _, q := range queries(&tap) {
		own[q] = true
	}
	return own
}

// TestCatalog_CoversEveryStatement runs every operation of the store, on
// both completion paths, through a driver that records each statement
// sent, and fails on one that is neither the dialect's or the migrations'
// own (what they send run on their own) nor the rendering of a catalog
// entry at some size, for the options of the store that sent it.
func TestCatalog_CoversEveryStatement(t *testing.T) {
	reached := map[string]bool{}
	var names []string
	for _, d := range []dialect.Dialect{sqlite.Dialect(), storeworkload.NoReturning{Dialect: sqlite.Dialect()}} {
		t.Run(fmt.Sprintf("ReturningUpdate=%v", d.Capabilities().ReturningUpdate), func(t *testing.T) {
			own := ownStatements(t, d)
			var cats []*catalog.Catalog
			for _, off := range []time.Duration{0, 2 * time.Hour, 4 * time.Hour} { // the workload's stores
				c, err := catalog.New(d, core.Options{ClockOffset: off})
				if err != nil {
					t.Fatal(err)
				}
				cats = append(cats, c)
			}
			var tap wiretap.Tap
			db := openWire(t, &tap, "catalog.db")
			tap.Take()
			storeworkload.Run(t, db, d)
			sent := queries(&tap)
			if len(sent) < 100 {
				t.Fatalf("only %d statements recorded", len(sent))
			}
			used := map[string]int{}
			missing := map[string]bool{}
			owned := 0
		next:
			for _, q := range sent {
				if own[q] {
					owned++
					continue
				}
				for _, c := range cats {
					if st, ok := c.Match(q); ok {
						used[st.Name]++
						continue next
					}
				}
				missing[q] = true
			}
			for q := range missing {
				t.Errorf("sent, and in no catalog entry: %s", q)
			}
			all, err := cats[0].Statements(1)
			if err != nil {
				t.Fatal(err)
			}
			var unused []string
			for _, st := range all {
				if !slices.Contains(names, st.Name) {
					names = append(names, st.Name)
				}
				if used[st.Name] > 0 {
					reached[st.Name] = true
				}
				if used[st.Name] == 0 && !slices.Contains(unused, st.Name) {
					unused = append(unused, st.Name)
				}
			}
			t.Logf("%d statements sent: %d the dialect's or migrations' own, %d of %d catalog templates; not reached by this workload: %s",
				len(sent), owned, len(used), len(used)+len(unused), strings.Join(unused, ", "))
		})
	}
	// Every entry is reached on one path or the other: an entry no
	// statement matches is a template the core no longer sends, or sends
	// in another shape.
	for _, n := range names {
		if !reached[n] {
			t.Errorf("catalog entry %q: no statement sent matched it", n)
		}
	}
}
