package core_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/storeworkload"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
)

// TestStatements_BindsMatchArguments runs every operation of the store,
// on both completion paths, through a driver that counts each statement's
// '?' against its arguments. With the placeholders showing their binds
// (TestExpansions_ShowEveryBind), a statement as written in the core has
// exactly as many '?' as it is given arguments.
func TestStatements_BindsMatchArguments(t *testing.T) {
	for _, d := range []dialect.Dialect{sqlite.Dialect(), storeworkload.NoReturning{Dialect: sqlite.Dialect()}} {
		t.Run(fmt.Sprintf("ReturningUpdate=%v", d.Capabilities().ReturningUpdate), func(t *testing.T) {
			var tap wiretap.Tap
			storeworkload.Run(t, wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "binds.db")), d)
			sent := tap.Take()
			if len(sent) < 100 {
				t.Fatalf("only %d statements went through the counter", len(sent))
			}
			for _, st := range sent {
				if got := core.CountBinds(st.Query); got != st.Args {
					t.Errorf("%d '?' for %d arguments: %s", got, st.Args, st.Query)
				}
			}
			t.Logf("%d statements counted", len(sent))
		})
	}
}
