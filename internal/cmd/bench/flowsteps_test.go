package bench

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// stepDialect is a dialect whose transactions time their statements by
// step (flowStep): a statement's time runs from its call to the next
// statement's call in the transaction, or to its commit, so that it
// holds the reading of its rows too. A commit's time is a step of its own.
type stepDialect struct {
	dialect.Dialect
	names migrations.Names

	mu   sync.Mutex
	took map[string]time.Duration
	runs map[string]int
	text map[string]string // a statement of each step
}

// newStepDialect returns d timed by step, with the optional interfaces
// of d that shape statements passed on (dialect.Wrapper), so that the
// claims timed are the ones users run.
func newStepDialect(d dialect.Dialect, prefix string) *stepDialect {
	return &stepDialect{Dialect: d, names: migrations.NamesFor(prefix), took: map[string]time.Duration{}, runs: map[string]int{}, text: map[string]string{}}
}

// Unwrap returns the dialect timed.
func (d *stepDialect) Unwrap() dialect.Dialect { return d.Dialect }

func (d *stepDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	tx, err := d.Dialect.Begin(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	return &stepTx{Tx: tx, d: d}, nil
}

// add counts took against step.
func (d *stepDialect) add(step string, took time.Duration) {
	d.mu.Lock()
	d.took[step] += took
	d.runs[step]++
	d.mu.Unlock()
}

// reset forgets every step's time.
func (d *stepDialect) reset() {
	d.mu.Lock()
	d.took, d.runs, d.text = map[string]time.Duration{}, map[string]int{}, map[string]string{}
	d.mu.Unlock()
}

// flowStep names the step of the claim (or the completion) q is, after
// core/laneclaim.go's steps.
func (d *stepDialect) flowStep(q string) string {
	lanes, items := d.names.Lanes, d.names.Items
	switch {
	case strings.Contains(q, items) && strings.Contains(q, "flow_key IS NULL"):
		return "queue's claim (no flow key)"
	case strings.HasPrefix(q, "WITH RECURSIVE"):
		return "2 keys read (no limits)"
	case strings.Contains(q, d.names.Queues) && strings.Contains(q, "paused"):
		return "1 queue default read"
	case strings.Contains(q, lanes) && strings.Contains(q, "CASE id"):
		return "6 lanes update"
	case strings.Contains(q, lanes) && (strings.Contains(q, "served_at") || strings.Contains(q, "SKIP LOCKED") || strings.HasPrefix(q, "SELECT id, lane_key")):
		return "2 lanes claim"
	case strings.Contains(q, "SUM(CASE WHEN claimed_by"):
		return "3 count claimed"
	case strings.Contains(q, "SELECT * FROM (SELECT id, flow_key"):
		return "4 UNION read of candidates"
	case strings.Contains(q, ") p0") || strings.Contains(q, "LATERAL"):
		return "4+5 claim of the lanes' items (no rate limit)"
	case strings.Contains(q, "MIN(available_at)"):
		return "6a lanes' first item (idle lanes)"
	case strings.Contains(q, items) && (strings.Contains(q, "claim_token = ?, claimed_by") || strings.Contains(q, "SKIP LOCKED") || strings.Contains(q, "state = 'claimed', claim_token")):
		return "5 claim of chosen ids"
	case strings.Contains(q, "state = 'completed'"):
		return "completion"
	}
	if len(q) > 70 {
		q = q[:70]
	}
	return "other: " + q
}

// stepTx times the statements of one transaction.
type stepTx struct {
	dialect.Tx
	d    *stepDialect
	last string
	at   time.Time
}

// mark ends the step running, if any, and starts step.
func (t *stepTx) mark(step string) {
	now := time.Now()
	if t.last != "" {
		t.d.add(t.last, now.Sub(t.at))
	}
	t.last, t.at = step, now
}

// step names the step of q and keeps q as its statement.
func (d *stepDialect) step(q string) string {
	s := d.flowStep(q)
	d.mu.Lock()
	d.text[s] = q
	d.mu.Unlock()
	return s
}

func (t *stepTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	t.mark(t.d.step(q))
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t *stepTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.mark(t.d.step(q))
	return t.Tx.QueryContext(ctx, q, args...)
}

func (t *stepTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	t.mark(t.d.step(q))
	return t.Tx.QueryRowContext(ctx, q, args...)
}

func (t *stepTx) Commit() error {
	t.mark("commit")
	err := t.Tx.Commit()
	t.mark("")
	return err
}

func (t *stepTx) Rollback() error {
	t.mark("rollback")
	err := t.Tx.Rollback()
	t.mark("")
	return err
}

// BenchmarkFlowClaimSteps drains --items-sized queues of the flow rows
// (no flow keys; keys with a concurrency limit of 5) with flowDrain and
// logs where the wall time of Plenum's transactions goes, step by step
// of core/laneclaim.go's claim: on a temporary SQLite file and, when
// PLENUM_BENCH_DIALECT names one, on that database. With -cpuprofile it
// is the profile of the flow rows' claim+complete.
// Run: go test ./internal/cmd/bench -run '^$' -bench FlowClaimSteps -benchtime 1x -v
func BenchmarkFlowClaimSteps(b *testing.B) {
	b.Run(sqlite.Name, func(b *testing.B) {
		db, err := sqlite.Open(filepath.Join(b.TempDir(), "steps.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		flowSteps(b, db, sqlite.Dialect())
	})
	b.Run("env", func(b *testing.B) {
		name, dsn := envBenchTarget(b)
		db, d, err := cmdline.OpenDialect(name, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		flowSteps(b, db, d)
	})
}

func flowSteps(b *testing.B, db *sql.DB, d dialect.Dialect) {
	ctx := b.Context()
	o := benchOptions{Items: 20000, Batch: 100, Workers: 4}
	prefix := "steps_" + randomTag() + "_"
	sd := newStepDialect(d, prefix)
	st, err := core.Open(ctx, db, sd, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := migrations.Drop(context.WithoutCancel(ctx), db, d, prefix); err != nil {
			b.Errorf("drop %s*: %v", prefix, err)
		}
	}()
	db.SetMaxIdleConns(5*o.Workers + 2)
	vs := flowVariants(o)
	// The concurrency row, and the same keys with a limit as large as a
	// claim: one lane per claim, its items next to each other, where the
	// row's claim takes five items of each of twenty lanes.
	wide := vs[2]
	wide.name, wide.limit = "200 keys, concurrency 100 (one lane a claim)", core.Limit{Concurrency: o.Batch}
	// Then the same items over few keys and over many.
	vs = []flowVariant{vs[0], vs[2], wide, vs[5], vs[6]}
	for b.Loop() {
		for i, v := range vs {
			queue := fmt.Sprintf("steps.%d.%s", i, randomTag())
			if err := flowEnqueue(ctx, st, queue, o.Items, v); err != nil {
				b.Fatal(err)
			}
			if settle := checkpointFor(d); settle != nil {
				if err := settle(ctx, db); err != nil {
					b.Fatal(err)
				}
			}
			if maintain := settleFor(d, sd.names.Items, sd.names.Lanes); maintain != nil {
				if err := maintain(ctx, db); err != nil {
					b.Fatal(err)
				}
			}
			sd.reset()
			took, err := timedRun(ctx, func(ctx context.Context) error { return flowDrain(ctx, st, queue, o.Items, o) })
			if err != nil {
				b.Fatal(err)
			}
			logSteps(b, sd, v.name, o.Items, took)
			if d.Name() == sqlite.Name {
				logPlans(b, db, sd)
			}
		}
	}
}

// logSteps logs the time of each step over a drain of n items that took
// took.
func logSteps(b *testing.B, sd *stepDialect, name string, n int, took time.Duration) {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	var total time.Duration
	steps := make([]string, 0, len(sd.took))
	for s, t := range sd.took {
		steps = append(steps, s)
		total += t
	}
	slices.Sort(steps)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %s: %s items in %v, %s/s; time in Plenum's transactions, all workers: %v\n",
		sd.Dialect.Name(), name, cmdline.Commas(int64(n)), took.Round(time.Millisecond), cmdline.Commas(int64(perSecond(n, took))), total.Round(time.Millisecond))
	for _, s := range steps {
		fmt.Fprintf(&sb, "  %-36s %7d runs %10v %8.1f µs/run %5.1f%%\n", s, sd.runs[s], sd.took[s].Round(time.Millisecond),
			float64(sd.took[s])/float64(time.Microsecond)/float64(sd.runs[s]), 100*float64(sd.took[s])/float64(total))
	}
	b.Log("\n" + sb.String())
}

// logPlans logs SQLite's plan of each step's statement (its parameters
// unbound).
func logPlans(b *testing.B, db *sql.DB, sd *stepDialect) {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	var sb strings.Builder
	for _, s := range slices.Sorted(maps.Keys(sd.text)) {
		if strings.HasPrefix(s, "other") || s == "commit" {
			continue
		}
		plan, err := sqlitePlan(b.Context(), db, sd.text[s])
		if err != nil {
			plan = err.Error()
		}
		fmt.Fprintf(&sb, "%s:\n    %s\n", s, strings.ReplaceAll(plan, "\n", "\n    "))
	}
	b.Log("\n" + sb.String())
}

// sqlitePlan is SQLite's plan of q, its parameters bound to NULL.
func sqlitePlan(ctx context.Context, db *sql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, make([]any, strings.Count(q, "?"))...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
