package cockroach_test

import (
	"testing"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/postgres"
)

// TestDialect_IsNoNotifier checks that the cockroach dialect, though it
// takes most of its pieces from the postgres one, does not offer
// PostgreSQL's wake-ups: CockroachDB has neither LISTEN nor NOTIFY (its
// parser refuses LISTEN), so its workers find other processes' items by
// polling.
func TestDialect_IsNoNotifier(t *testing.T) {
	if _, ok := postgres.Dialect().(dialect.Notifier); !ok {
		t.Fatal("the postgres dialect is no dialect.Notifier: this test checks nothing")
	}
	if _, ok := cockroach.Dialect().(dialect.Notifier); ok {
		t.Fatal("the cockroach dialect is a dialect.Notifier: CockroachDB has no LISTEN or NOTIFY")
	}
}
