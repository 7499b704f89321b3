package builtin_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin"
)

// TestRowLocker_LocksWhatClaimWouldTake checks the shipped dialects'
// RowLocker: the SELECT of the claim's rows and columns, in its order and
// limit, with its filter's arguments, locking and passing over held rows;
// and refusals of an incomplete spec. Only MySQL's Claim is several
// statements where LockRows is one; the others claim their lanes with
// Claim, and have none.
func TestRowLocker_LocksWhatClaimWouldTake(t *testing.T) {
	spec := dialect.ClaimSpec{
		Table: "t", Key: "id", Filter: "q = ? AND n < ?", FilterArgs: []any{"a", 2},
		OrderBy: "n, id", Limit: 3, Set: "x = 1", Returning: []string{"id", "n"},
	}
	for name, want := range map[string]string{
		"mysql":     "SELECT id, n FROM t WHERE q = ? AND n < ? ORDER BY n, id LIMIT 3 FOR UPDATE SKIP LOCKED",
		"postgres":  "",
		"sqlite":    "",
		"cockroach": "",
		"oracle":    "",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := dialect.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			l, ok := d.(dialect.RowLocker)
			if ok != (want != "") {
				t.Fatalf("RowLocker: %v, want %v", ok, want != "")
			}
			if !ok {
				return
			}
			stmt, args, err := l.LockRows(spec)
			if err != nil || stmt != want || !slices.Equal(args, spec.FilterArgs) {
				t.Errorf("LockRows = %q, %v, %v; want %q, %v", stmt, args, err, want, spec.FilterArgs)
			}
			if strings.Contains(stmt, spec.Set) {
				t.Errorf("LockRows writes: %q", stmt)
			}
			for why, mod := range map[string]func(*dialect.ClaimSpec){
				"limit 0":      func(s *dialect.ClaimSpec) { s.Limit = 0 },
				"no table":     func(s *dialect.ClaimSpec) { s.Table = "" },
				"no filter":    func(s *dialect.ClaimSpec) { s.Filter = "" },
				"no order":     func(s *dialect.ClaimSpec) { s.OrderBy = "" },
				"no returning": func(s *dialect.ClaimSpec) { s.Returning = nil },
			} {
				bad := spec
				mod(&bad)
				if stmt, _, err := l.LockRows(bad); err == nil {
					t.Errorf("%s: LockRows accepted it: %q", why, stmt)
				}
			}
		})
	}
}
