package bench

import (
	"testing"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// Only PostgreSQL's tables are settled between measurements: the other
// databases keep no dead row versions for a later measurement to read
// past, and CockroachDB, which shares PostgreSQL's statements, has no
// VACUUM.
func TestBench_SettleOnlyOnPostgreSQL(t *testing.T) {
	if settleFor(postgres.Dialect(), "t") == nil {
		t.Error("settleFor(postgres) = nil")
	}
	for _, d := range []dialect.Dialect{sqlite.Dialect(), mysql.Dialect(), cockroach.Dialect()} {
		if settleFor(d, "t") != nil {
			t.Errorf("settleFor(%s) settles", d.Name())
		}
	}
}

// On a PostgreSQL server, settling really vacuums each table it names:
// the server's statistics record it.
func TestBench_SettleVacuumsTheTables(t *testing.T) {
	dsn := conformance.Harness{Name: "postgres"}.DSN(t)
	if dsn == "" {
		return // Harness.DSN skips, or fails under PLENUM_REQUIRE
	}
	db, d, err := cmdline.OpenDialect("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	prefix := "vac_" + randomTag() + "_"
	if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
		t.Fatal(err)
	}
	defer migrations.Drop(ctx, db, d, prefix)
	n := migrations.NamesFor(prefix)
	if err := settleFor(d, n.Items, n.Barriers)(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{n.Items, n.Barriers} {
		var vacuumed bool
		err := db.QueryRowContext(ctx, "SELECT last_vacuum IS NOT NULL AND last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1", table).Scan(&vacuumed)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if !vacuumed {
			t.Errorf("%s: not vacuumed and analyzed", table)
		}
	}
}
