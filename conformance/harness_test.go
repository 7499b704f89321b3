package conformance

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of ending
// the test, so that the harness's decisions can be checked.
type recorder struct {
	testing.TB
	skipped, failed, logged string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Skipf(f string, args ...any)  { r.skipped = fmt.Sprintf(f, args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...) }
func (r *recorder) Fatal(args ...any)            { r.failed = fmt.Sprint(args...) }
func (r *recorder) Logf(f string, args ...any)   { r.logged = fmt.Sprintf(f, args...) }

func TestHarnessEnvName(t *testing.T) {
	for name, want := range map[string]string{
		"postgres":  "PLENUM_POSTGRES_DSN",
		"mysql":     "PLENUM_MYSQL_DSN",
		"cockroach": "PLENUM_COCKROACH_DSN",
		"oracle":    "PLENUM_ORACLE_DSN",
		"tidb-x":    "PLENUM_TIDB_X_DSN",
	} {
		if got := (Harness{Name: name}).EnvName(); got != want {
			t.Errorf("EnvName(%s) = %s, want %s", name, got, want)
		}
	}
	if got := (Harness{Name: "postgres", Env: "MY_DSN"}).EnvName(); got != "MY_DSN" {
		t.Errorf("EnvName with Env set = %s", got)
	}
}

func TestHarnessDSNFromEnv(t *testing.T) {
	t.Setenv("PLENUM_POSTGRES_DSN", " postgres://x/y ")
	t.Setenv(RequireEnv, "")
	r := &recorder{}
	if got := DSN(r, "postgres"); got != "postgres://x/y" || r.skipped != "" || r.failed != "" {
		t.Errorf("DSN = %q (skipped %q, failed %q)", got, r.skipped, r.failed)
	}
	// The test summary (internal/cmd/gotest) reads this line.
	if want := "conformance: postgres: testing the database of PLENUM_POSTGRES_DSN"; r.logged != want {
		t.Errorf("logged %q, want %q", r.logged, want)
	}
}

func TestHarnessSkipsSayingHowToEnable(t *testing.T) {
	t.Setenv("PLENUM_MYSQL_DSN", "")
	t.Setenv(RequireEnv, "postgres")
	r := &recorder{}
	if got := DSN(r, "mysql"); got != "" || r.failed != "" {
		t.Fatalf("DSN = %q, failed %q; want a skip", got, r.failed)
	}
	for _, want := range []string{"conformance: no mysql database: ", "PLENUM_MYSQL_DSN", "PLENUM_REQUIRE=mysql", "tcp(localhost:3306)"} {
		if !strings.Contains(r.skipped, want) {
			t.Errorf("skip message %q does not mention %q", r.skipped, want)
		}
	}
}

func TestHarnessRequiredFails(t *testing.T) {
	t.Setenv("PLENUM_ORACLE_DSN", "")
	t.Setenv(RequireEnv, "postgres, Oracle")
	r := &recorder{}
	if got := DSN(r, "oracle"); got != "" || r.skipped != "" || !strings.Contains(r.failed, "PLENUM_ORACLE_DSN") {
		t.Errorf("DSN = %q, skipped %q, failed %q; want a failure naming PLENUM_ORACLE_DSN", got, r.skipped, r.failed)
	}
}

func TestHarnessFallback(t *testing.T) {
	t.Setenv("PLENUM_COCKROACH_DSN", "")
	t.Setenv(RequireEnv, "cockroach")
	r := &recorder{}
	h := Harness{Name: "cockroach", Fallback: func(testing.TB) (string, bool) { return "postgresql://started", true }}
	if got := h.DSN(r); got != "postgresql://started" || r.failed != "" || r.skipped != "" {
		t.Errorf("DSN with a fallback = %q (skipped %q, failed %q)", got, r.skipped, r.failed)
	}
	r = &recorder{}
	h.Fallback = func(testing.TB) (string, bool) { return "", false }
	if got := h.DSN(r); got != "" || r.failed == "" {
		t.Errorf("DSN with a fallback that has none, required = %q, failed %q; want a failure", got, r.failed)
	}
	r = &recorder{}
	if got := (Harness{}).DSN(r); got != "" || r.failed == "" {
		t.Errorf("DSN without a name = %q, failed %q; want a failure", got, r.failed)
	}
}

func TestRequired(t *testing.T) {
	t.Setenv(RequireEnv, " postgres ,MYSQL,,")
	for name, want := range map[string]bool{"postgres": true, "mysql": true, "oracle": false, "": false, "post": false} {
		if got := Required(name); got != want {
			t.Errorf("Required(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, n := range Names() {
		if seen[n] || !strings.Contains(n, "_") {
			t.Errorf("subtest name %q is repeated or does not say Area_Guarantee", n)
		}
		seen[n] = true
	}
	// Every guarantee of the design has at least one subtest.
	for _, area := range []string{"Claim_", "Fence_", "Recovery_", "Clock_", "FanOut_", "FanIn_", "Transient_", "BadInput_"} {
		found := false
		for n := range seen {
			found = found || strings.HasPrefix(n, area)
		}
		if !found {
			t.Errorf("no subtest proves the %s guarantees", strings.TrimSuffix(area, "_"))
		}
	}
}
