package cockroach

import (
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/postgres"
)

// TestClaim_FindsRowsBySemiJoin pins CockroachDB's claim, as a store
// sends it: PostgreSQL's, but for its update, which finds the rows chosen
// with IN (SELECT ...) where PostgreSQL's gathers their ids into an array
// (Claim says why).
func TestClaim_FindsRowsBySemiJoin(t *testing.T) {
	t.Parallel()
	claim := func(c *catalog.Catalog, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		st, ok := c.Statement("claim", 10, 0)
		if !ok {
			t.Fatal("no claim of 10 in the catalog")
		}
		return st.SQL
	}
	crdb := claim(catalog.New(Dialect(), core.Options{}))
	pg := claim(catalog.New(postgres.Dialect(), core.Options{}))
	const semi, array = " WHERE id IN (SELECT id FROM c) RETURNING ", " WHERE id = ANY(ARRAY(SELECT id FROM c)) RETURNING "
	if !strings.Contains(crdb, semi) {
		t.Errorf("CockroachDB's claim does not find its rows with %q:\n%s", semi, crdb)
	}
	if got := strings.Replace(pg, array, semi, 1); got != crdb {
		t.Errorf("CockroachDB's claim is not PostgreSQL's with a semi-join:\n got %s\nwant %s", crdb, got)
	}
}
