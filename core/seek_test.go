package core_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/sqlite"
)

// seekSpy is SQLite's dialect, keeping the last ClaimSpec of items it was
// given (a claim of an empty queue also looks at its lanes).
type seekSpy struct {
	dialect.Dialect
	spec dialect.ClaimSpec
}

func (s *seekSpy) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if strings.HasSuffix(spec.Table, "items") {
		s.spec = spec
	}
	return s.Dialect.Claim(ctx, q, spec)
}

// The claim hands the dialect the schema's claim index as Seek, shaped as
// the contract says: its conditions are in the filter, its first columns
// are compared with the first filter arguments in order, and its other
// columns are the ORDER BY list. A dialect that writes its claim through
// the index's expressions (Oracle) depends on that shape.
func TestClaim_SeekIsTheClaimIndexTheFilterUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy := &seekSpy{Dialect: sqlite.Dialect()}
	o := openStore(t, spy, core.Options{Prefix: "p_"})
	s, owner := o.store, o.owner
	if _, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	spec := spy.spec
	ix := spec.Seek
	if ix == nil {
		t.Fatal("the claim has no Seek")
	}
	if ix.Name != "p_items_claim" || !ix.Claim {
		t.Fatalf("Seek = %+v, want the claim index", ix)
	}
	order := strings.Split(spec.OrderBy, ", ")
	eq := len(ix.Columns) - len(order)
	if eq < 1 || !slices.Equal(ix.Columns[eq:], order) {
		t.Fatalf("index columns %q do not end with the ORDER BY list %q", ix.Columns, order)
	}
	for i, c := range ix.Columns[:eq] {
		if !strings.Contains(spec.Filter, c+" = ?") || spec.FilterArgs[i] != "q" {
			t.Fatalf("the filter %q does not compare %s with argument %d", spec.Filter, c, i)
		}
	}
	if !strings.Contains(spec.Filter, sqlkit.Condition(ix.Where)) {
		t.Fatalf("the filter %q lacks the index's condition %s", spec.Filter, sqlkit.Condition(ix.Where))
	}
}
