package sqlcheck

import (
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/catalog"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
)

// catalogStatements renders the core's catalog for d at sizes 1, 2 and
// the largest the store sends, under the default prefix, with a clock
// offset (a test's) and without (a production store's: its clock has
// another shape).
func catalogStatements(t *testing.T, d dialect.Dialect) []catalog.Statement {
	t.Helper()
	var out []catalog.Statement
	for _, off := range []time.Duration{0, -time.Hour} {
		c, err := catalog.New(d, core.Options{ClockOffset: off})
		if err != nil {
			t.Fatal(err)
		}
		sts, err := c.Statements(1, 2, catalog.LargestSize)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sts...)
	}
	return out
}

// checkCatalog checks every catalog statement of d with check, and wants
// at least one claim among them.
func checkCatalog(t *testing.T, d dialect.Dialect, check func(string) (bool, error)) {
	t.Helper()
	start := time.Now()
	claims, n := 0, 0
	for _, st := range catalogStatements(t, d) {
		n++
		claim, err := check(st.SQL)
		if err != nil {
			t.Errorf("%s at size %d refused: %v\n%.300s", st.Name, st.Size, err, st.SQL)
		}
		if claim {
			claims++
		}
	}
	if claims == 0 {
		t.Error("no claim among the catalog's statements: the catalog or the claim detection is broken")
	}
	t.Logf("%d catalog statements checked in %v, %d claims", n, time.Since(start).Round(time.Millisecond), claims)
}

// TestCatalog_Cockroach checks every statement of the core's catalog, as
// the cockroach dialect renders it at sizes 1, 2 and the largest, with
// CockroachDB's grammar and the claim rule. It needs no server: it covers
// the statements (and sizes) the suite's run does not reach.
func TestCatalog_Cockroach(t *testing.T) {
	t.Parallel()
	checkCatalog(t, cockroach.Dialect(), CheckCockroach)
}

// TestCatalog_MySQL8 does the same with the mysql dialect and MySQL 8's
// grammar and rules (RETURNING never reaches it: the dialect has no
// UPDATE ... RETURNING, and the catalog renders the path without it).
func TestCatalog_MySQL8(t *testing.T) {
	t.Parallel()
	checkCatalog(t, mysql.Dialect(), CheckMySQL8)
}

// TestCatalog_PlantedStatementsRefused shows the catalog check bites: a
// statement the catalog would render wrong for a dialect (the RETURNING
// path for MySQL 8) is refused.
func TestCatalog_PlantedStatementsRefused(t *testing.T) {
	t.Parallel()
	c, err := catalog.New(returningMySQL{mysql.Dialect()}, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := c.Statements(2)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, st := range sts {
		if _, err := CheckMySQL8(st.SQL); err != nil {
			refused++
		}
	}
	if refused == 0 {
		t.Error("the mysql rendering with RETURNING passed MySQL 8's grammar")
	}
	t.Logf("%d statements with RETURNING refused", refused)
}

// returningMySQL is the mysql dialect claiming UPDATE ... RETURNING, which
// MySQL 8 lacks.
type returningMySQL struct{ dialect.Dialect }

func (r returningMySQL) Capabilities() dialect.Capabilities {
	c := r.Dialect.Capabilities()
	c.ReturningUpdate = true
	return c
}
