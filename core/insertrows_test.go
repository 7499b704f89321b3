package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// longInserts is SQLite's dialect with a MaxInsertRows of its own.
type longInserts struct {
	dialect.Dialect
	rows int
}

func (d longInserts) Capabilities() dialect.Capabilities {
	c := d.Dialect.Capabilities()
	c.MaxInsertRows = d.rows
	return c
}

// TestEnqueue_EverySizeGetsItsOwnInsert checks that enqueues of many sizes
// around a dialect's MaxInsertRows, and around the sizes whose INSERT the
// store keeps built, each insert every row once: a kept statement is only
// ever reused for its own number of rows.
func TestEnqueue_EverySizeGetsItsOwnInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const most = 300
	s := openStore(t, longInserts{sqlite.Dialect(), most}, core.Options{}).store
	total := 0
	for round := range 2 {
		for _, n := range []int{1, 63, 64, 65, 100, most - 1, most, most + 1, 2*most + 7, 150, 64, 100} {
			specs := make([]core.ItemSpec, n)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: "q", Kind: "k", Key: fmt.Sprintf("%d/%d/%d", round, total, i)}
			}
			got, err := s.Enqueue(ctx, specs...)
			if err != nil {
				t.Fatalf("Enqueue of %d: %v", n, err)
			}
			for i, g := range got {
				if g.Existed {
					t.Fatalf("Enqueue of %d: row %d existed", n, i)
				}
			}
			total += n
		}
	}
	counts, err := s.Counts(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := counts[core.StateAvailable]; got != int64(total) {
		t.Fatalf("%d items available, want %d", got, total)
	}
}
