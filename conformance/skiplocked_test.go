package conformance

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/internal/testkit/plantedclaim"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
)

// The guarantee Claim_SkipsHeldRowsWithoutWaiting breaks on a planted
// dialect whose claim locks nothing, and on one whose claim waits (each
// wrapping the real postgres or mysql dialect, on tables the real one
// migrated), and says which; it holds with the real dialects.
func TestClaimSkipsHeld_BreaksOnPlantedDialects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		d    dialect.Dialect
		open func(dsn string) (*sql.DB, error)
	}{
		{"postgres", postgres.Dialect(), postgres.Open},
		{"mysql", mysql.Dialect(), mysql.Open},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dsn := DSN(t, c.name)
			if dsn == "" {
				return
			}
			db, err := c.open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			ctx := t.Context()
			p := plantedclaim.Prefix(t, db, c.d)
			real, err := core.Open(ctx, db, c.d, core.Options{Prefix: p, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := skipsHeld(ctx, real, "real", skipprobe.Wait); err != nil {
				t.Fatalf("with the real dialect: %v", err)
			}
			broken := map[string]string{"NoLock": "two claimers held the same item", "Waits": "it waited for the held item"}
			for _, v := range plantedclaim.Variants(c.d) {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					s, err := core.Open(ctx, db, v.Dialect, core.Options{Prefix: p})
					if err != nil {
						t.Fatal(err)
					}
					err = skipsHeld(ctx, s, v.Name, 5*time.Second)
					if err == nil || !strings.Contains(err.Error(), broken[v.Name]) {
						t.Fatalf("the guarantee on the planted dialect: %v; want it broken, saying %q", err, broken[v.Name])
					}
					t.Logf("the guarantee: %v", err)
					if err := v.Refused(s.ProveSkipLocked(ctx)); err != nil {
						t.Errorf("ProveSkipLocked: %v", err)
					}
				})
			}
		})
	}
}
