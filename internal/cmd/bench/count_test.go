package bench

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// The store the bench measures sends the statements a user's store sends:
// its counting dialect keeps the interfaces that shape them (a batch's ids
// bound as one uuid[] on PostgreSQL), and hides only the notifier.
func TestBench_CountingDialectKeepsStatementShapes(t *testing.T) {
	t.Parallel()
	d := countingDialectOf(postgres.Dialect(), &stmtCounter{})
	if _, ok := dialect.As[dialect.UUIDLister](d); !ok {
		t.Error("the counting dialect over postgres is no dialect.UUIDLister: Plenum's side would complete with IN lists no user's store sends")
	}
	if _, ok := dialect.As[dialect.KeyLister](d); !ok {
		t.Error("the counting dialect over postgres is no dialect.KeyLister: a claim of keyed items would read its lanes with one subquery a lane, as no user's store does")
	}
	if _, ok := dialect.As[dialect.Purger](d); !ok {
		t.Error("the counting dialect over postgres is no dialect.Purger: retention would delete through a read and a transaction no user's store runs")
	}
	if _, ok := d.(dialect.Notifier); ok {
		t.Error("the counting dialect over postgres is a dialect.Notifier, want it hidden")
	}
	if _, ok := dialect.As[dialect.RowLocker](countingDialectOf(mysql.Dialect(), &stmtCounter{})); !ok {
		t.Error("the counting dialect over mysql is no dialect.RowLocker: a claim of keyed items would take its lanes in three statements, as no user's store does")
	}
}
