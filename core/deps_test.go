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
	for _, dep := range deps(t, "github.com/plenumdb/plenum/core") {
		for _, heavy := range []string{"modernc.org/", "github.com/jackc/", "github.com/go-sql-driver/", "github.com/sijms/", "github.com/testcontainers/", "github.com/jmoiron/sqlx", "github.com/plenumdb/plenum/sqlite", "github.com/plenumdb/plenum/conformance"} {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("core depends on %s", dep)
			}
		}
	}
}

// productionHelpers are the internal packages that may be linked into a
// user's binary: everything else under internal/ is a test harness
// (internal/testkit) or a command's (internal/cmd).
var productionHelpers = []string{
	"github.com/plenumdb/plenum/internal/fault",
	"github.com/plenumdb/plenum/internal/skipprobe",
	"github.com/plenumdb/plenum/internal/storesql",
	"github.com/plenumdb/plenum/internal/pgbounds",
}

// libraryPackages are what users import to run Plenum: the test suites
// they import into their own tests (conformance, workersuite,
// pipelinesuite, workertest) may use the test harnesses too.
var libraryPackages = []string{
	"github.com/plenumdb/plenum/core",
	"github.com/plenumdb/plenum/browse",
	"github.com/plenumdb/plenum/dialect/...",
	"github.com/plenumdb/plenum/sqlite",
	"github.com/plenumdb/plenum/postgres",
	"github.com/plenumdb/plenum/mysql",
	"github.com/plenumdb/plenum/oracle",
	"github.com/plenumdb/plenum/cockroach",
	"github.com/plenumdb/plenum/migrations",
	"github.com/plenumdb/plenum/migrations/gen",
	"github.com/plenumdb/plenum/worker",
	"github.com/plenumdb/plenum/pipeline",
	"github.com/plenumdb/plenum/dashboard",
}

// A library package links only the production helpers of internal/: no
// test harness, no command's code ends up in a user's binary.
func TestDeps_LibrariesImportOnlyProductionHelpers(t *testing.T) {
	t.Parallel()
	for _, dep := range deps(t, libraryPackages...) {
		if !strings.HasPrefix(dep, "github.com/plenumdb/plenum/internal/") {
			continue
		}
		allowed := false
		for _, h := range productionHelpers {
			if dep == h || strings.HasPrefix(dep, h+"/") {
				allowed = true
			}
		}
		if !allowed {
			t.Errorf("a library package links %s, which is not a production helper", dep)
		}
	}
}

// deps lists the packages the given ones import, directly or not.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
