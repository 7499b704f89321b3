package bench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// bareOn returns a baseline on fresh tables of db, dropped at the end of
// the test.
func bareOn(t *testing.T, db *sql.DB, d dialect.Dialect) *baseline {
	t.Helper()
	prefix := "bare_" + randomTag() + "_"
	if _, err := migrations.Apply(t.Context(), db, d, prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := migrations.Drop(context.Background(), db, d, prefix); err != nil {
			t.Errorf("drop %s*: %v", prefix, err)
		}
	})
	b := newBaseline(db, d, migrations.NamesFor(prefix), 10, bareShape{})
	t.Cleanup(b.close)
	return b
}

// checkShapesFenced claims with every shape of b and checks that a
// completion under another token changes nothing and one under the
// claim's token completes every item, and that the claim returned each
// item once.
func checkShapesFenced(t *testing.T, b *baseline) {
	checkFenced(t, b, shapesFor(b), func(queue string, n int) error { return b.enqueue(t.Context(), queue, n, uuid.Nil) })
}

// checkFenced is checkShapesFenced for shapes on b's table, which enqueue
// fills.
func checkFenced(t *testing.T, b *baseline, shapes []bareShape, enqueue func(queue string, n int) error) {
	ctx := t.Context()
	for _, shape := range shapes {
		t.Run(shape.name, func(t *testing.T) {
			b.shape = shape
			queue := "fenced." + randomTag()
			if err := enqueue(queue, 7); err != nil {
				t.Fatal(err)
			}
			s, err := b.session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			c := bareClaim{queue: queue, limit: 10, token: uuid.Must(uuid.NewV7()), worker: uuid.Must(uuid.NewV7())}
			var items []bareItem
			if err := s.tx(ctx, func(tx bareTx) error {
				var err error
				items, err = b.shape.sql.claim(ctx, b, tx, c)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			ids := map[uuid.UUID]bool{}
			var list []uuid.UUID
			for _, it := range items {
				ids[it.id] = true
				list = append(list, it.id)
			}
			if len(items) != 7 || len(ids) != 7 {
				t.Fatalf("claimed %d items, %d distinct; want 7", len(items), len(ids))
			}
			complete := func(token uuid.UUID) int64 {
				var n int64
				if err := s.tx(ctx, func(tx bareTx) error {
					var err error
					n, err = b.shape.sql.complete(ctx, b, tx, list, token)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := complete(uuid.Must(uuid.NewV7())); n != 0 {
				t.Errorf("a completion under another token changed %d items, want 0", n)
			}
			if n := complete(c.token); n != 7 {
				t.Errorf("the completion under the claim's token changed %d items, want 7", n)
			}
			if n := complete(c.token); n != 0 {
				t.Errorf("completing again changed %d items, want 0", n)
			}
		})
	}
}

// Every hand-written shape completes only the items that still hold its
// claim's token: the baseline does the same fenced work as Plenum.
func TestBench_BaselineCompletesOnlyItsOwnClaims(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the tables are dropped
	checkShapesFenced(t, bareOn(t, db, sqlite.Dialect()))
}

// The same on the database the environment names (see envBenchDialect).
func TestBench_BaselineCompletesOnlyItsOwnClaimsOnEnvDialect(t *testing.T) {
	t.Parallel()
	name, dsn := envBenchTarget(t)
	db, d, err := cmdline.OpenDialect(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	checkShapesFenced(t, bareOn(t, db, d))
}

// A completion that matches fewer rows than it was given is an error of
// the run, not a slower rate.
func TestBench_BaselineDrainFailsOnLostClaims(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the tables are dropped
	b := bareOn(t, db, sqlite.Dialect())
	b.shape = bareShape{name: "loses", sql: losingBare{b.shape.sql}}
	if err := b.enqueue(t.Context(), "lost", 5, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if err := b.drain(t.Context(), "lost", 1, nil); !errors.Is(err, errBareLost) {
		t.Fatalf("drain: %v, want errBareLost", err)
	}
}

// losingBare completes under a token nobody claimed with.
type losingBare struct{ bareSQL }

func (l losingBare) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, _ uuid.UUID) (int64, error) {
	return l.bareSQL.complete(ctx, b, tx, ids, uuid.Must(uuid.NewV7()))
}

// The bench counts each side's statements and transactions: the
// baseline's claim+complete on SQLite is one statement per transaction,
// two transactions per batch and one empty claim per worker at the end.
func TestBench_CountsStatementsPerItem(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := benchOptions{Database: cmdline.Database{DB: filepath.Join(t.TempDir(), "bench.db")}, Items: 95, Batch: 10, Workers: 2}
	rep, err := runBench(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	for _, r := range rep.Rows {
		if r.Name != "claim+complete" {
			continue
		}
		batches := int64((o.Items + o.Batch - 1) / o.Batch)
		want := counts{stmts: 2*batches + int64(o.Workers), txs: 2*batches + int64(o.Workers)}
		if r.BaseCounts != want {
			t.Errorf("baseline counted %+v, want %+v", r.BaseCounts, want)
		}
		// Plenum claims and completes in as many transactions, with at
		// least a statement each.
		if r.PlenumCounts.txs < 2*batches || r.PlenumCounts.stmts < r.PlenumCounts.txs {
			t.Errorf("plenum counted %+v, want at least %d transactions of a statement or more", r.PlenumCounts, 2*batches)
		}
		if !strings.Contains(out.String(), "statements per item, claim+complete: plenum ") {
			t.Errorf("output lacks the statements line:\n%s", out.String())
		}
		return
	}
	t.Fatalf("no claim+complete row: %+v", rep.Rows)
}

// --sql prints the statements of both sides, --shapes measures every
// shape and keeps the fastest.
func TestBench_SQLAndShapesFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := benchOptions{Database: cmdline.Database{DB: filepath.Join(t.TempDir(), "bench.db")}, Items: 60, Batch: 10, Workers: 2, SQL: true, Shapes: true}
	rep, err := runBench(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"SQL of claim+complete, Plenum", "SQL of claim+complete, bare SQL", "SQL of fan-in arrivals, bare SQL",
		"UPDATE " + rep.Prefixes[1] + "items SET state = 'claimed', claim_token = ?", "arrived = arrived + ?",
		"SQL of minimal, bare SQL", "UPDATE " + minimalTable(rep.Prefixes[1]) + " SET state = 'completed' WHERE id IN (SELECT unhex(value) FROM json_each(?)) AND claim_token = ?"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if len(rep.Shapes) != 4 {
		t.Fatalf("shapes measured: %+v, want sqlite's 4", rep.Shapes)
	}
	best := rep.Shapes[0]
	for _, s := range rep.Shapes {
		if s.Rate <= 0 {
			t.Errorf("shape %+v: no rate", s)
		}
		if s.Rate > best.Rate {
			best = s
		}
	}
	if rep.Shape != best.Name {
		t.Errorf("kept shape %q, want the fastest, %q (%+v)", rep.Shape, best.Name, rep.Shapes)
	}
}

func TestBench_ShapeFlag(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := benchOptions{Database: cmdline.Database{DB: filepath.Join(t.TempDir(), "bench.db")}, Items: 30, Batch: 10, Workers: 2, Shape: "prepared json_each"}
	rep, err := runBench(t.Context(), &out, o)
	if err != nil || rep.Shape != "prepared json_each" {
		t.Fatalf("runBench: shape %q, %v\n%s", rep.Shape, err, out.String())
	}
	o.Shape = "nonesuch"
	var ue *cmdline.UsageError
	if _, err := runBench(t.Context(), &out, o); !errors.As(err, &ue) || !strings.Contains(err.Error(), `"json_each"`) {
		t.Errorf("unknown shape: %v, want a usage error naming the shapes", err)
	}
}

// The measurements at scale run, tiny, and report what they measured.
func TestBench_ScaleFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	// Small, for CI: more filler than one purge pass takes.
	o := benchOptions{Database: cmdline.Database{DB: filepath.Join(t.TempDir(), "bench.db")}, Items: 40, Batch: 10, Workers: 2,
		Rounds: 2, Scale: scaleOptions{NoTable: true, FanOut: 300, Completed: 1200, Retention: true, PurgeLimit: 50}}
	rep, err := runBench(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	text := out.String()
	if len(rep.Rows) != 0 || strings.Contains(text, "fan-in arrivals") {
		t.Errorf("--no-table measured rows %+v", rep.Rows)
	}
	f := rep.Scale.FanOut
	if f == nil || f.Children != 300 || f.Plenum <= 0 || f.Baseline <= 0 || f.PlenumPeakRSS <= 0 {
		t.Errorf("fan-out %+v", f)
	}
	if e, full := rep.Scale.Empty, rep.Scale.Full; e == nil || full == nil || e.Plenum <= 0 || full.Baseline <= 0 {
		t.Errorf("flat tables: empty %+v, full %+v", e, full)
	}
	if len(rep.Scale.FlatRounds) != 2 || !rep.Scale.FlatRounds[0].EmptyFirst || rep.Scale.FlatRounds[1].EmptyFirst {
		t.Errorf("flat rounds %+v, want two, the empty tables first in the first", rep.Scale.FlatRounds)
	}
	if rep.Scale.Retained <= 0 || rep.Scale.Unretained <= 0 || rep.Scale.Purged <= 0 || len(rep.Scale.RetentionRounds) != 2 {
		t.Errorf("retention: claims %v/s with, %v/s without, purged %v/s, rounds %+v", rep.Scale.Retained, rep.Scale.Unretained, rep.Scale.Purged, rep.Scale.RetentionRounds)
	}
	for _, want := range []string{"peak RSS", "plan of the claim's read, plenum, 1,200 completed items", "plan of the claim's read, bare SQL, empty tables",
		"round 2 (full first)", "full / empty, over all rounds", "round 2 (with first)", "retention deleted"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	o.Scale = scaleOptions{Retention: true}
	var ue *cmdline.UsageError
	if _, err := runBench(t.Context(), &out, o); !errors.As(err, &ue) {
		t.Errorf("--retention without --completed: %v, want a usage error", err)
	}
}

// minimalOn returns the minimal baseline on a fresh minimal table of db,
// dropped at the end of the test.
func minimalOn(t *testing.T, db *sql.DB, d dialect.Dialect) *baseline {
	t.Helper()
	prefix := "bare_" + randomTag() + "_"
	m, ddl, ok, err := newMinimal(t.Context(), db, d, prefix, 10)
	if !ok {
		t.Skipf("no minimal table for %s", d.Name())
	}
	t.Cleanup(func() {
		if err := dropMinimal(context.Background(), db, d, prefix); err != nil {
			t.Errorf("drop %s: %v", minimalTable(prefix), err)
		}
	})
	if err != nil {
		t.Fatalf("%v: %q", err, ddl)
	}
	t.Cleanup(m.close)
	return m
}

// The minimal table's loop is fenced as the baseline's is: a completion
// under another token changes nothing, completing again changes nothing.
func TestBench_MinimalCompletesOnlyItsOwnClaims(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the table is dropped
	m := minimalOn(t, db, sqlite.Dialect())
	checkFenced(t, m, []bareShape{m.shape}, func(queue string, n int) error { return m.enqueueMinimal(t.Context(), queue, n) })
}

// The same on PostgreSQL and MariaDB where their DSNs are set (see
// envBenchDialect for any other).
func TestBench_MinimalCompletesOnlyItsOwnClaimsOnServers(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"postgres", "mysql"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := os.Getenv(conformance.Harness{Name: name}.EnvName())
			if dsn == "" {
				t.Skipf("%s is not set", conformance.Harness{Name: name}.EnvName())
			}
			db, d, err := cmdline.OpenDialect(name, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			m := minimalOn(t, db, d)
			checkFenced(t, m, []bareShape{m.shape}, func(queue string, n int) error { return m.enqueueMinimal(t.Context(), queue, n) })
		})
	}
}
