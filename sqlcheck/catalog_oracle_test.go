package sqlcheck

import (
	"fmt"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/catalog"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/oracle"
)

// TestCatalog_Oracle checks every statement of the core's catalog, as the
// oracle dialect renders it, with Oracle's PL/SQL grammar and the traps a
// grammar cannot see (FOR UPDATE with a row limit, IN lists over 1,000,
// long identifiers, a bare bind for a CLOB). It covers what the
// fake-driver recording (TestOracle_CoreStatements) cannot reach: the
// statements sent only after a step that succeeded on a real server.
//
// Sizes 1 and 2 give every template's shape (one row or id, and the
// repeated part); the largest sizes repeat that part up to 1,000 times,
// which the slow grammar cannot parse in CI's time, so the size limits
// themselves are checked by the traps on TestOracle_Claim's 1,000-key
// read and by the core's own tests of the dialect's limits.
func TestCatalog_Oracle(t *testing.T) {
	t.Parallel()
	c, err := catalog.New(oracle.Dialect(), core.Options{ClockOffset: -time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := c.Statements(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	seen := map[string]bool{}
	for _, st := range sts {
		if seen[st.SQL] {
			continue
		}
		seen[st.SQL] = true
		checkOracle(t, fmt.Sprintf("%s at size %d", st.Name, st.Size), st.SQL)
	}
	if len(seen) < 60 {
		t.Errorf("only %d distinct catalog statements for Oracle", len(seen))
	}
	t.Logf("%d catalog statements checked with Oracle's grammar in %v", len(seen), time.Since(start).Round(time.Millisecond))
}
