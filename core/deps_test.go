package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A user who imports core pays only for core: no database driver, no test
// container machinery. Each dialect package brings its own driver.
func TestDeps_CoreImportsNoDriver(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/plenumdb/plenum/core").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"modernc.org/", "github.com/jackc/", "github.com/go-sql-driver/", "github.com/sijms/", "github.com/testcontainers/", "github.com/jmoiron/sqlx", "github.com/plenumdb/plenum/sqlite", "github.com/plenumdb/plenum/conformance"} {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("core depends on %s", dep)
			}
		}
	}
}
