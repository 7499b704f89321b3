package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// logServer logs, once per Run, the server and version the suite runs
// on, as its dialect's registration reads it. The line ("conformance:
// server: PRODUCT VERSION") is what the test summary of
// internal/cmd/gotest shows beside the suite, so that a run on MariaDB
// through PLENUM_MYSQL_DSN says so: keep its shape.
func logServer(t *testing.T, cfg Config) {
	t.Helper()
	r, err := dialect.Registered(cfg.Dialect.Name())
	if err != nil || r.Version == nil {
		t.Logf("conformance: server: %s (version unknown)", cfg.Dialect.Name())
		return
	}
	db := cfg.Open(t)
	if db == nil {
		return // Open failed t already
	}
	defer db.Close() // closing twice is harmless: Open's cleanup closes it again
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	v, err := r.Version(ctx, db)
	if err != nil {
		t.Logf("conformance: server: %s (version unreadable: %v)", cfg.Dialect.Name(), err)
		return
	}
	t.Logf("conformance: server: %s", v)
}
