package bench

import (
	"bytes"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// The PostgreSQL shape without BEGIN runs each step as one statement: its
// claims and completions are fenced as the others' are, and its fan-in's
// single statement counts every child and fires the barrier once, with
// workers racing on the barrier's row (runBench checks both barriers).
func TestBench_NoBeginShapeOnPostgreSQL(t *testing.T) {
	t.Parallel()
	dsn := (conformance.Harness{Name: "postgres"}).DSN(t)
	if dsn == "" {
		return // Harness.DSN skips, or fails under PLENUM_REQUIRE
	}
	db, d, err := cmdline.OpenDialect("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the tables' drop
	checkShapesFenced(t, bareOn(t, db, d))

	const shape = "array binds, no BEGIN"
	var out bytes.Buffer
	rep, err := runBench(t.Context(), &out, benchOptions{Database: cmdline.Database{Dialect: "postgres", DSN: dsn}, Items: 400, Batch: 10, Workers: 4, Shape: shape})
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	if rep.Shape != shape {
		t.Errorf("shape %q, want %q", rep.Shape, shape)
	}
	checkTinyRun(t, rep, out.String())
	checkDropped(t, db, rep)
}
