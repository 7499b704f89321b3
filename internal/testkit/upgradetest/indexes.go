package upgradetest

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// checkIndexes checks, where the dialect can tell (IndexProber), which of
// the items table's indexes exist at the point named by at: want maps each
// index name, without the prefix, to whether it should.
func checkIndexes(t *testing.T, c Config, prefix, at string, want map[string]bool) {
	t.Helper()
	pr, ok := c.Dialect.(dialect.IndexProber)
	if !ok {
		return
	}
	db := c.Open(t)
	for name, exists := range want {
		got, err := pr.IndexExists(t.Context(), db, migrations.NamesFor(prefix).Items, prefix+name)
		if err != nil || got != exists {
			t.Errorf("at %s: index %s%s exists = %v, %v; want %v", at, prefix, name, got, err, exists)
		}
	}
}
