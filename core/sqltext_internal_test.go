package core

import (
	"testing"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// countBinds counts the '?' of a statement outside quoted literals and
// identifiers.
func countBinds(q string) int {
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
		}
	}
	return n
}

// TestExpansions_ShowEveryBind checks, for every dialect in the module,
// that each placeholder the core writes statements with shows as many '?'
// as the text it stands for takes, so that a statement as written counts
// its arguments truly.
func TestExpansions_ShowEveryBind(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect.Dialect{sqlite.Dialect(), postgres.Dialect(), mysql.Dialect(), cockroach.Dialect()} {
		pairs := expansions(d, migrations.NamesFor("p_"), 0)
		for i := 0; i < len(pairs); i += 2 {
			if a, b := countBinds(pairs[i]), countBinds(pairs[i+1]); a != b {
				t.Errorf("%s: %s shows %d binds, stands for %q with %d", d.Name(), pairs[i], a, pairs[i+1], b)
			}
		}
	}
}
