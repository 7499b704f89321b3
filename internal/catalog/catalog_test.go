package catalog_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// TestCatalog_MatchFindsEveryRendering renders the catalog of every dialect
// at sizes 1, 2, 7 and the largest, and finds each statement back with
// Match, at its name and size; near misses are not matched.
func TestCatalog_MatchFindsEveryRendering(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect.Dialect{sqlite.Dialect(), postgres.Dialect(), mysql.Dialect(), cockroach.Dialect()} {
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			c, err := catalog.New(d, core.Options{Prefix: "cat_", ClockOffset: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			all, err := c.Statements(1, 2, 7, catalog.LargestSize)
			if err != nil {
				t.Fatal(err)
			}
			largest := map[string]int{}
			kinds := map[int]bool{}
			for _, st := range all {
				largest[st.Name] = max(largest[st.Name], st.Size)
				if st.Name == "claim.max-attempts" {
					kinds[st.Kinds] = true
				}
				got, ok := c.Match(st.SQL)
				if !ok {
					t.Errorf("%s at %d not matched: %.200s", st.Name, st.Size, st.SQL)
					continue
				}
				// Two templates may render one text at a size (a claim's
				// statements are one entry); the size must agree.
				if got.Name != st.Name || got.Size != st.Size {
					// Then the text must be that entry's at that size too.
					// (at its count of kinds too: the claim of lanes' chosen
					// items sends statements of the claim with kind limits).
					again, err := c.Statements(max(1, got.Size), max(1, got.Kinds))
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(again, got) {
						t.Errorf("%s at %d matched as %s at %d, which does not render it", st.Name, st.Size, got.Name, got.Size)
					}
				}
				if _, ok := c.Match(st.SQL + " "); ok {
					t.Errorf("%s at %d: a near miss matched", st.Name, st.Size)
				}
			}
			if largest["lost"] < 1000 || largest["enqueue.now"] < 100 {
				t.Errorf("largest sizes %v: the bind limits were not reached", largest)
			}
			if want := map[int]bool{1: true, 2: true, 7: true, core.MaxClaimKinds: true}; !maps.Equal(kinds, want) {
				t.Errorf("claims with kind limits rendered for %v kinds, want %v", kinds, want)
			}
			t.Logf("%d statements of %d templates", len(all), len(largest))
		})
	}
}

func TestCatalog_RefusesBadInput(t *testing.T) {
	t.Parallel()
	var in *core.InputError
	if _, err := catalog.New(nil, core.Options{}); !errors.As(err, &in) {
		t.Errorf("nil dialect: %v", err)
	}
	if _, err := catalog.New(sqlite.Dialect(), core.Options{Prefix: "bad prefix"}); !errors.As(err, &in) {
		t.Errorf("bad prefix: %v", err)
	}
	c, err := catalog.New(sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Statements(0); !errors.As(err, &in) {
		t.Errorf("size 0: %v", err)
	}
	if _, ok := c.Match("SELECT 1"); ok {
		t.Error("SELECT 1 matched")
	}
}

// TestCatalog_MatchTellsClaimsByKindsAndSize renders the claims with kind
// limits at every pair of 3 and 5 kinds and rows, and finds each back with
// Match at its count of kinds and size.
func TestCatalog_MatchTellsClaimsByKindsAndSize(t *testing.T) {
	t.Parallel()
	for _, d := range []dialect.Dialect{sqlite.Dialect(), postgres.Dialect(), cockroach.Dialect()} {
		c, err := catalog.New(d, core.Options{})
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.Statements(3, 5)
		if err != nil {
			t.Fatal(err)
		}
		pairs := 0
		for _, st := range all {
			if st.Name != "claim.max-attempts" || strings.Contains(st.SQL, "1 = 0") {
				continue
			}
			pairs++
			if got, ok := c.Match(st.SQL); !ok || got != st {
				t.Errorf("%s: %d kinds at %d matched as %+v, %v", d.Name(), st.Kinds, st.Size, got, ok)
			}
		}
		if pairs != 4 {
			t.Errorf("%s: %d claims with kind limits rendered, want 4 (3 and 5 kinds, 3 and 5 rows)", d.Name(), pairs)
		}
	}
}

// TestCatalog_StatementByName finds a sized template's statement at a
// size and count of kinds, a fixed one's at any size, and none for a
// name, size or count of kinds the catalog does not have.
func TestCatalog_StatementByName(t *testing.T) {
	c, err := catalog.New(sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := c.Statements(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range sts {
		got, ok := c.Statement(want.Name, max(want.Size, 1), want.Kinds)
		if !ok {
			t.Errorf("no %s at size %d with %d kinds", want.Name, want.Size, want.Kinds)
			continue
		}
		if got.Name != want.Name || got.Kinds != want.Kinds || got.Size != want.Size {
			t.Errorf("Statement(%s, %d, %d) = %+v", want.Name, want.Size, want.Kinds, got)
		}
	}
	for _, c2 := range []struct {
		name        string
		size, kinds int
	}{{"no.such", 1, 0}, {"lanes.candidates", 1, 0}, {"lanes.candidates", core.MaxClaimLimit + 1, 1}} {
		if st, ok := c.Statement(c2.name, c2.size, c2.kinds); ok {
			t.Errorf("Statement(%s, %d, %d) = %+v, want none", c2.name, c2.size, c2.kinds, st)
		}
	}
}
