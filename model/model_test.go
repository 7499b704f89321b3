package model

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/oracle"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// prefix is the tables' prefix the catalog is rendered with, so that a
// write is told from its own SQL: its target is a table of that prefix.
const prefix = "plenum_"

// writes finds, in a statement's own text, a change to a Plenum table:
// UPDATE, INSERT (OR IGNORE, IGNORE), DELETE or MERGE on one.
var writes = regexp.MustCompile(`(?is)\b(?:UPDATE|INSERT\s+(?:OR\s+\w+\s+|IGNORE\s+|ALL\s+)?INTO|DELETE\s+FROM|MERGE\s+INTO)\s+["` + "`" + `]?` + prefix + `\w+`)

// writers is every catalog template whose statements, on some dialect,
// write a Plenum table.
func writers(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, d := range []dialect.Dialect{sqlite.Dialect(), postgres.Dialect(), mysql.Dialect(), oracle.Dialect(), cockroach.Dialect()} {
		c, err := catalog.New(d, core.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.Statements(1, 2, catalog.LargestSize)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if writes.MatchString(s.SQL) {
				out[s.Name] = true
			}
		}
	}
	return out
}

// allNames is every template name of the catalog, on every dialect.
func allNames(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, d := range []dialect.Dialect{sqlite.Dialect(), postgres.Dialect(), mysql.Dialect(), oracle.Dialect(), cockroach.Dialect()} {
		c, err := catalog.New(d, core.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.Statements(1)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			out[s.Name] = true
		}
	}
	return out
}

var (
	stepNames    = regexp.MustCompile(`catalog:([^\n]*)`)
	outsideNames = regexp.MustCompile(`outside:\s*(\S+)\s+--\s+(\S[^\n]*)`)
	aName        = regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$`)
)

// mapping reads the model's "catalog:" comments (each names the
// statements of one step) and "outside:" lines (one statement each, with
// its reason).
func mapping(t *testing.T, src string) (steps map[string]int, outside map[string]string) {
	t.Helper()
	steps, outside = map[string]int{}, map[string]string{}
	for _, m := range stepNames.FindAllStringSubmatch(src, -1) {
		text := strings.TrimSuffix(strings.TrimSpace(m[1]), "*/")
		for _, name := range strings.Fields(text) {
			if !aName.MatchString(name) {
				t.Errorf("model: %q in a catalog: comment is not a statement's name (no patterns: each step names its statements)", name)
				continue
			}
			steps[name]++
		}
	}
	for _, m := range outsideNames.FindAllStringSubmatch(src, -1) {
		if _, twice := outside[m[1]]; twice {
			t.Errorf("model: %s is listed outside twice", m[1])
		}
		outside[m[1]] = m[2]
	}
	return steps, outside
}

// TestModel_MapsEveryWrite fails when a catalog statement that writes a
// Plenum table is named by no step of the model and not listed, with its
// reason, as left outside it; and when the model names a statement the
// catalog does not have, or names one both ways.
func TestModel_MapsEveryWrite(t *testing.T) {
	src, err := os.ReadFile("plenum.pml")
	if err != nil {
		t.Fatal(err)
	}
	steps, outside := mapping(t, string(src))
	known := allNames(t)
	w := writers(t)
	if len(w) < 50 {
		t.Fatalf("only %d writing statements found in the catalog: the test no longer reads writes from the SQL", len(w))
	}
	var missing []string
	for name := range w {
		_, out := outside[name]
		if steps[name] == 0 && !out {
			missing = append(missing, name)
		}
		if steps[name] > 0 && out {
			t.Errorf("model: %s is both mapped to a step and listed outside the model", name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("model: these statements write Plenum tables and no step of plenum.pml names them (a comment \"catalog: <name>\" on the step that stands for each, or an \"outside: <name> -- <reason>\" line): %s", strings.Join(missing, ", "))
	}
	for name := range steps {
		if !known[name] {
			t.Errorf("model: a step names %s, which is no statement of the catalog", name)
		}
	}
	for name := range outside {
		if !w[name] {
			t.Errorf("model: %s is listed outside the model but writes no Plenum table (or is no statement)", name)
		}
	}
	mapped := 0
	for name := range w {
		if steps[name] > 0 {
			mapped++
		}
	}
	t.Logf("%d statements write Plenum tables: %d mapped to steps, %d left outside", len(w), mapped, len(w)-mapped)
}
