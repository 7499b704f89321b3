package testdb

import (
	"testing"
	"time"
)

// TestDocker_AnswersQuickly checks that the probe gives an answer and a
// reason, so that a machine without Docker skips instead of hanging.
func TestDocker_AnswersQuickly(t *testing.T) {
	start := time.Now()
	ok, reason := Docker()
	if !ok && reason == "" {
		t.Fatal("Docker() = false with no reason")
	}
	if ok && reason != "" {
		t.Fatalf("Docker() = true with a reason %q", reason)
	}
	t.Logf("docker: ok=%v reason=%q in %v", ok, reason, time.Since(start))
}

// TestStart_WithoutDockerIsNotOK checks the fallback shape where there is no
// engine: not ok, no DSN, no skip or failure of the caller.
func TestStart_WithoutDockerIsNotOK(t *testing.T) {
	if ok, _ := Docker(); ok {
		t.Skip("a Docker engine answers here; the no-engine path is not reachable")
	}
	for name, f := range map[string]func(testing.TB) (string, bool){
		"postgres": Postgres, "cockroach": Cockroach, "mysql": MySQL, "mariadb": MariaDB, "oracle": Oracle,
	} {
		if dsn, ok := f(t); ok || dsn != "" {
			t.Errorf("%s: got (%q, %v) without Docker, want (\"\", false)", name, dsn, ok)
		}
	}
}
