package dialect_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// drivers are the database drivers of the module's dialects, by the
// prefix of their import paths.
var drivers = []string{"modernc.org/sqlite", "github.com/jackc/", "github.com/go-sql-driver/", "github.com/sijms/"}

// A user who imports core and one dialect package links that dialect's
// driver and no other, nor the test machinery: the contract and its kit
// (dialect, dialect/sqlkit) bring none. CockroachDB's dialect builds on
// PostgreSQL's, and so links pgx.
func TestDeps_CoreAndOneDialectLinkOneDriver(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	own := map[string]string{
		"sqlite":    "modernc.org/sqlite",
		"postgres":  "github.com/jackc/",
		"mysql":     "github.com/go-sql-driver/",
		"oracle":    "github.com/sijms/",
		"cockroach": "github.com/jackc/",
	}
	for name, driver := range own {
		pkg := "github.com/plenumdb/plenum/" + name
		out, err := exec.Command(goTool, "list", "-deps", "github.com/plenumdb/plenum/core", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		forbidden := append(slices.DeleteFunc(slices.Clone(drivers), func(d string) bool { return d == driver }),
			"github.com/testcontainers/", "github.com/jmoiron/sqlx", "github.com/plenumdb/plenum/conformance")
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("core with %s links %s", name, dep)
				}
			}
		}
	}
}
