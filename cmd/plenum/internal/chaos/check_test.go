package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/migrations"
)

// databases are the databases the checker's tests run on: SQLite always,
// the servers whose DSN is set.
func databases(t *testing.T) map[string]string {
	dbs := map[string]string{"sqlite": filepath.Join(t.TempDir(), "check.db")}
	if dsn := os.Getenv("PLENUM_POSTGRES_DSN"); dsn != "" {
		dbs["postgres"] = dsn
	}
	if dsn := os.Getenv("PLENUM_MYSQL_DSN"); dsn != "" {
		dbs["mysql"] = dsn
	}
	return dbs
}

// finished is a small workload run to its end by two in-process workers,
// without faults, under a prefix of its own.
type finished struct {
	db     *sql.DB
	d      dialect.Dialect
	prefix string
	plan   Plan
}

func finish(t *testing.T, name, dsn string, plan Plan) *finished {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reg, err := dialect.Registered(name)
	if err != nil {
		t.Fatal(err)
	}
	db, err := reg.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "chk_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "") + "_"
	store, err := core.Open(ctx, db, reg.Dialect, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := dropAudit(ctx, db, prefix); err != nil {
			t.Error(err)
		}
		if err := migrations.Drop(ctx, db, reg.Dialect, prefix); err != nil {
			t.Error(err)
		}
		db.Close()
	})
	if err := createAudit(ctx, db, reg.Dialect, prefix); err != nil {
		t.Fatal(err)
	}
	if err := seed(ctx, store, plan, 0); err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for slot := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := WorkerSpec{Dialect: name, DSN: dsn, Prefix: prefix, Slot: slot, Slots: 4, Plan: plan, Timing: DefaultTiming()}
			if err := RunWorker(run, spec, io.Discard); err != nil {
				t.Error(err)
			}
		}()
	}
	r := &round{cfg: Config{Prefix: prefix}, db: db}
	for {
		left, err := r.left(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d items left unfinished", left)
		}
		sleep(ctx, 100*time.Millisecond)
	}
	stop()
	wg.Wait()
	return &finished{db: db, d: reg.Dialect, prefix: prefix, plan: plan}
}

func (f *finished) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := f.db.Exec(f.d.Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func (f *finished) check(t *testing.T) *Findings {
	t.Helper()
	got, err := Check(context.Background(), f.db, f.d, f.prefix, f.plan, DefaultTiming().StaleAfter)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// wantViolation checks that the findings hold a violation of inv whose
// detail contains text.
func wantViolation(t *testing.T, got *Findings, inv, text string) {
	t.Helper()
	for _, v := range got.Violations {
		if v.Invariant == inv && strings.Contains(v.Detail, text) {
			return
		}
	}
	t.Errorf("no violation of %q saying %q among %+v", inv, text, got.Violations)
}

// The checker passes a finished workload, and catches each kind of
// violation planted in its tables: a unit completed by a second holder,
// a lost unit, an item left unfinished, a barrier fired twice, a join that
// missed a child, a crash count that does not add up, a claim held by an
// owner that is gone.
func TestCheck_CatchesPlantedViolations(t *testing.T) {
	for name, dsn := range databases(t) {
		t.Run(name, func(t *testing.T) {
			plan := Plan{Chains: 3, ChainSteps: 5, Fanouts: 2, Children: 20, Page: 7, FailEvery: 3,
				// A rate's cell of a second: the checker counts claims by
				// claimed_at, stamped a statement or three after the lane's
				// turn that the rate spaces, which a loaded machine delays.
				FlowKeys: 2, FlowItems: 4, FlowLimit: 2, RateKeys: 1, RateItems: 3, Rate: 1, RatePer: time.Second}
			f := finish(t, name, dsn, plan)
			if got := f.check(t); !got.OK() {
				t.Fatalf("a clean workload: %+v", got.Violations)
			}
			n := migrations.NamesFor(f.prefix)
			audit := auditTable(f.prefix)

			// A skip-locked probe's rows, left by a worker killed
			// mid-probe, are not the workload's: the drain does not wait
			// for them, and the check passes them over.
			probe := skipprobe.Insert(f.d, n.Items)
			for _, id := range []uuid.UUID{uuid.New(), uuid.New()} {
				f.exec(t, probe, f.d.UUID(id), 1, time.Hour.Microseconds())
			}
			r := &round{cfg: Config{Prefix: f.prefix}, db: f.db}
			if left, err := r.left(t.Context()); err != nil || left != 0 {
				t.Fatalf("with a probe's leftover rows: %d items left to drain, %v; want 0", left, err)
			}
			if got := f.check(t); !got.OK() {
				t.Fatalf("with a probe's leftover rows: %+v", got.Violations)
			}

			// A second holder completing a unit leaves a second audit row
			// with another token.
			f.exec(t, "INSERT INTO "+audit+" (unit, kind, item_id, token, owner_id, worker, attempt, seen, total, app_time)"+
				" SELECT unit, kind, item_id, 'planted', owner_id, worker, attempt, seen, total, app_time FROM "+audit+" WHERE unit = ?", stepUnit(0, 1))
			wantViolation(t, f.check(t), InvExactlyOnce, stepUnit(0, 1)+" completed 2 times, by 2 holders")

			// A lost unit: its completion and its audit row gone.
			f.exec(t, "DELETE FROM "+audit+" WHERE unit = ?", stepUnit(1, 2))
			got := f.check(t)
			wantViolation(t, got, InvExactlyOnce, stepUnit(1, 2)+" was never completed (lost)")
			wantViolation(t, got, InvExactlyOnce, "items completed but")

			// An item that never finished.
			f.exec(t, "UPDATE "+n.Items+" SET state = 'available' WHERE unique_key = ?", stepKey(2, 3))
			wantViolation(t, f.check(t), InvTerminal, fmt.Sprintf("(key %q) is available", stepKey(2, 3)))

			// A barrier fired twice: a second join item for it.
			f.exec(t, "INSERT INTO "+n.Items+" (id, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, join_barrier_id, created_at)"+
				" SELECT ?, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, join_barrier_id, created_at FROM "+n.Items+
				" WHERE id IN (SELECT b.join_item_id FROM "+n.Barriers+" b WHERE b.owner_id IN (SELECT p.id FROM "+n.Items+" p WHERE p.unique_key = ?))",
				f.d.UUID(uuid.New()), parentKey(0))
			wantViolation(t, f.check(t), InvBarrier, "fired twice")

			// A join that did not see every child.
			f.exec(t, "UPDATE "+audit+" SET seen = seen - 1 WHERE unit = ?", joinUnit(1))
			wantViolation(t, f.check(t), InvBarrier, joinUnit(1)+" saw")

			// A crash counted on the item but not in its history.
			f.exec(t, "UPDATE "+n.Items+" SET crash_count = crash_count + 1 WHERE unique_key = ?", stepKey(0, 0))
			got = f.check(t)
			wantViolation(t, got, InvAttempts, "crash count differs")

			// A key over its concurrency limit: two more runs of a key
			// limited to two, each as long as every run of it, so that
			// wherever one of its runs was held three were (one copy
			// gives a third only where two of its runs overlapped, which
			// the workload does not make sure of).
			f.copyRuns(t, flowKey(0), "", 2)
			wantViolation(t, f.check(t), InvConcurrency, "key "+flowKey(0)+" had ")

			// A key over its rate: all its claims again, an hour later and
			// at once.
			f.copyRuns(t, rateKey(0), f.d.Now(time.Hour), 1)
			wantViolation(t, f.check(t), InvRate, "key "+rateKey(0)+" had ")

			// A claim held by an owner that is not registered.
			f.exec(t, "UPDATE "+n.Items+" SET state = 'claimed', claimed_by = ? WHERE unique_key = ?", f.d.UUID(uuid.New()), stepKey(1, 0))
			wantViolation(t, f.check(t), InvOwner, "claimed by owners that are gone")
		})
	}
}

// copyRuns plants copies (at most 4) of the flow audit's rows of key,
// each under other item ids, stamped with the expression at instead of
// their own time when given.
func (f *finished) copyRuns(t *testing.T, key, at string, copies int) {
	t.Helper()
	table := flowAudit(f.prefix).Name
	rows, err := f.db.Query(f.d.Rebind("SELECT item, token, event FROM "+table+" WHERE flow_key = ?"), key)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ item, token, event string }
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.item, &r.token, &r.event); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	stamp := "at"
	if at != "" {
		stamp = at
	}
	for _, mark := range "pqrs"[:copies] {
		for _, r := range rs {
			f.exec(t, "INSERT INTO "+table+" (item, token, event, flow_key, at) SELECT ?, token, event, flow_key, "+stamp+
				" FROM "+table+" WHERE item = ? AND token = ? AND event = ?", string(mark)+r.item[1:], r.item, r.token, r.event)
		}
	}
}
