package migrations_test

import (
	"slices"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Every index knows which of its columns may be NULL, from its table's
// definition (Empty columns too: Oracle stores "" as NULL), and exactly one
// index, on the items table, serves the claim.
func TestAll_IndexesKnowTheirNullableColumns(t *testing.T) {
	t.Parallel()
	got := map[string][]string{}
	var claims []string
	tables := map[string]dialect.Table{}
	for _, m := range migrations.All("p_") {
		for _, c := range m.Changes {
			if c.Table != nil {
				tables[c.Table.Name] = *c.Table
			}
			if c.Index != nil {
				got[c.Index.Name] = c.Index.Nullable
				if c.Index.Claim {
					claims = append(claims, c.Index.Name)
				}
			}
		}
	}
	for name, want := range map[string][]string{
		"p_items_key":      {"unique_key"},
		"p_barriers_owner": nil,
		"p_items_claim":    nil,
		"p_items_owner":    {"claimed_by"},
		"p_items_barrier":  {"barrier_id"},
	} {
		if !slices.Equal(got[name], want) {
			t.Errorf("%s: Nullable = %q, want %q", name, got[name], want)
		}
	}
	// Version 8 creates items_claim again under its name.
	if !slices.Equal(claims, []string{"p_items_claim", "p_items_claim"}) {
		t.Errorf("claim indexes = %q", claims)
	}
	for _, c := range []struct{ table, col string }{{"p_items", "kind"}, {"p_barriers", "join_kind"}, {"p_processes", "host"}} {
		col, ok := tables[c.table].Column(c.col)
		if !ok || !col.Empty || col.Nullable {
			t.Errorf("%s.%s = %+v, want a NOT NULL column that may be empty", c.table, c.col, col)
		}
	}
}
