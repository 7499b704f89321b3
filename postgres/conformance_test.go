package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/dsnparams"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// harness finds the PostgreSQL server of the tests: PLENUM_POSTGRES_DSN,
// else a skip (a failure when PLENUM_REQUIRE lists postgres). The
// containers module (containers/) runs the suite on a PostgreSQL it starts
// in a container, where a Docker engine answers.
var harness = conformance.Harness{Name: "postgres"}

// missingSchema opens handles whose search_path names only a schema that
// does not exist: nothing could be created or found.
func missingSchema(dsn string) func(t testing.TB) *sql.DB {
	return func(t testing.TB) *sql.DB {
		return conformance.Opener(postgres.DriverName, dsnparams.Postgres(t, dsn, map[string]string{"search_path": "plenum_no_such_schema"}))(t)
	}
}

func TestConformance(t *testing.T) {
	dsn := harness.DSN(t)
	conformance.Run(t, conformance.Config{
		Dialect:       postgres.Dialect(),
		Open:          conformance.Opener(postgres.DriverName, dsn),
		Misconfigured: missingSchema(dsn),
	})
}

// TestConformance_NonDefaultSchema runs the whole suite with search_path
// set, in the DSN, to a schema of its own (and only that schema, so that a
// table created or looked up anywhere else would fail), checks that the
// tables land there and not in public, and drops the schema.
func TestConformance_NonDefaultSchema(t *testing.T) {
	dsn := harness.DSN(t)
	admin, err := sql.Open(postgres.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx := t.Context()
	schema := fmt.Sprintf("plenum_s%08x", rand.Uint32())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	inSchema := dsnparams.Postgres(t, dsn, map[string]string{"search_path": schema})

	t.Run("TablesLandInTheSchema", func(t *testing.T) {
		db := conformance.Opener(postgres.DriverName, inSchema)(t)
		prefix := fmt.Sprintf("ps%08x_", rand.Uint32())
		s, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Prefix: prefix, Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := migrations.Drop(context.Background(), db, postgres.Dialect(), prefix); err != nil {
				t.Error(err)
			}
		}()
		tables := func(where string) map[string]int {
			rows, err := admin.QueryContext(ctx, "SELECT table_schema, count(*) FROM information_schema.tables WHERE table_name LIKE $1 "+where+" GROUP BY table_schema", prefix+"%")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			out := map[string]int{}
			for rows.Next() {
				var sch string
				var n int
				if err := rows.Scan(&sch, &n); err != nil {
					t.Fatal(err)
				}
				out[sch] = n
			}
			return out
		}
		got := tables("")
		if want := map[string]int{schema: 13}; fmt.Sprint(got) != fmt.Sprint(want) { // every table of the schema
			t.Fatalf("tables of prefix %s by schema: %v, want %v", prefix, got, want)
		}
		// And they work there.
		if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q"}); err != nil {
			t.Fatal(err)
		}
		owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 5, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("Claim = %d items, %v", len(cs), err)
		}
		if err := s.Complete(ctx, cs[0], nil); err != nil {
			t.Fatal(err)
		}
		if v, err := migrations.Version(ctx, db, postgres.Dialect(), prefix); err != nil || v != migrations.LatestVersion {
			t.Fatalf("Version = %d, %v", v, err)
		}
	})

	t.Run("Suite", func(t *testing.T) {
		conformance.Run(t, conformance.Config{
			Dialect:       postgres.Dialect(),
			Open:          conformance.Opener(postgres.DriverName, inSchema),
			Misconfigured: missingSchema(dsn),
		})
	})

	// Every table the suite created was dropped, and none ever went to
	// public: search_path named only the schema.
	var left int
	if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", schema).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d tables left in schema %s after the suite", left, schema)
	}
}
