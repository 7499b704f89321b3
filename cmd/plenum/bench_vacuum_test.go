package main

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// Only PostgreSQL's tables are vacuumed between measurements: the other
// databases keep no dead row versions for a later measurement to read past.
func TestBench_VacuumOnlyOnPostgreSQL(t *testing.T) {
	if vacuumFor(postgres.Dialect(), "t") == nil {
		t.Error("vacuumFor(postgres) = nil")
	}
	if vacuumFor(sqlite.Dialect(), "t") != nil || vacuumFor(mysql.Dialect(), "t") != nil {
		t.Error("vacuumFor vacuums a database other than PostgreSQL")
	}
}

// On a PostgreSQL server, the vacuum really vacuums each table it names:
// the server's statistics record it.
func TestBench_VacuumVacuumsTheTables(t *testing.T) {
	dsn := conformance.Harness{Name: "postgres"}.DSN(t)
	if dsn == "" {
		return // Harness.DSN skips, or fails under PLENUM_REQUIRE
	}
	db, d, err := openDialect("postgres", dsn)
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
	if err := vacuumFor(d, n.Items, n.Barriers)(ctx, db); err != nil {
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
