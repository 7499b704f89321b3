package migrations_test

import (
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/internal/testkit/plantedclaim"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/migrations"
)

// The migrator, from Go (Apply) and through core.Open's Migrate, refuses a
// database whose claim does not skip the rows another session holds: a
// planted dialect whose claim locks nothing, and one whose claim waits,
// each wrapping the real one, are refused with a *dialect.SkipLockedError
// that says which; the real dialects pass; SQLite, of one writer, is not
// probed (Capabilities.SingleWriter). Nothing of the probe's is left.
func TestApply_RefusesAClaimThatDoesNotSkipLockedRows(t *testing.T) {
	t.Parallel()
	for _, dbase := range testdb.All("skiplocked.db") {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := dbase.Open(t)
			p := plantedclaim.Prefix(t, db, dbase.Dialect)
			if _, err := migrations.Apply(ctx, db, dbase.Dialect, p); err != nil {
				t.Fatalf("Apply with the real dialect: %v", err)
			}
			left := func(when string) {
				t.Helper()
				var n int
				q := "SELECT COUNT(*) FROM " + migrations.NamesFor(p).Items + " WHERE kind = '" + skipprobe.Kind + "'"
				if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %d probe rows left, %v; want none", when, n, err)
				}
			}
			left("after Apply")
			for _, v := range plantedclaim.Variants(dbase.Dialect) {
				// One after the other: each checks that nothing is left.
				t.Run(v.Name, func(t *testing.T) {
					_, applyErr := migrations.Apply(ctx, db, v.Dialect, p)
					_, openErr := core.Open(ctx, db, v.Dialect, core.Options{Prefix: p, Migrate: true})
					if dbase.Dialect.Capabilities().SingleWriter {
						if applyErr != nil || openErr != nil {
							t.Errorf("one writer, nothing to probe: Apply = %v, Open(Migrate) = %v; want both nil", applyErr, openErr)
						}
						return
					}
					if err := v.Refused(applyErr); err != nil {
						t.Errorf("Apply: %v", err)
					}
					if err := v.Refused(openErr); err != nil {
						t.Errorf("core.Open(Migrate): %v", err)
					}
					t.Logf("Apply: %v", applyErr)
					left("after the refusals")
				})
			}
		})
	}
}
