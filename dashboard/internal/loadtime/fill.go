package main

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// fillChunk is how many rows one filling statement inserts.
const fillChunk = 100_000

// The mix of the filled items, by g % 100: 2% available, 1% claimed, 3%
// dead, 1% cancelled, the rest completed; over 8 queues (by g / 100) and
// 13 kinds (by g / 3), so that every queue and kind has every state;
// created 1 ms apart up to now, so that the newest finished in the
// throughput window.
const (
	queues = 8
	kinds  = 13
)

// fillers generate n items in the database itself (a million rows
// through bind parameters would measure the driver, not the pages),
// the claimed ones held by owners. Only the dialects the timing is asked
// of have one.
var fillers = map[string]func(ctx context.Context, db *sql.DB, table string, n int, owners []uuid.UUID) error{
	"postgres": func(ctx context.Context, db *sql.DB, table string, n int, owners []uuid.UUID) error {
		q := `INSERT INTO ` + table + ` (id, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, claim_token, claimed_by, claimed_at, lease_expires_at, result, last_error, created_at, finished_at)
SELECT md5($1 || g::text)::uuid, 'q' || ((g / 100) % ` + strconv.Itoa(queues) + `), 'kind.' || ((g / 3) % ` + strconv.Itoa(kinds) + `), jsonb_build_object('n', g), 0, st, ts,
  CASE st WHEN 'available' THEN 0 WHEN 'dead' THEN 3 ELSE 1 END, 3, 0,
  CASE st WHEN 'claimed' THEN md5('t' || g::text)::uuid END,
  CASE st WHEN 'claimed' THEN ($4::uuid[])[1 + g % array_length($4::uuid[], 1)] END,
  CASE st WHEN 'claimed' THEN ts END,
  CASE st WHEN 'claimed' THEN ts + interval '1 hour' END,
  CASE st WHEN 'completed' THEN '{"ok":true}'::jsonb END,
  CASE st WHEN 'dead' THEN 'boom: the handler failed' END,
  ts,
  CASE WHEN st IN ('completed', 'dead', 'cancelled') THEN ts + interval '50 milliseconds' END
FROM (SELECT g, statement_timestamp() - ((` + strconv.Itoa(n) + ` - g) * interval '1 millisecond') AS ts,
  CASE WHEN g % 100 < 2 THEN 'available' WHEN g % 100 = 2 THEN 'claimed' WHEN g % 100 < 6 THEN 'dead' WHEN g % 100 = 6 THEN 'cancelled' ELSE 'completed' END AS st
  FROM generate_series($2::bigint, $3::bigint) AS g) AS s`
		arr := "{"
		for i, o := range owners {
			if i > 0 {
				arr += ","
			}
			arr += o.String()
		}
		arr += "}"
		salt := strconv.FormatInt(time.Now().UnixNano(), 10)
		for from := 0; from < n; from += fillChunk {
			to := min(from+fillChunk, n) - 1
			if _, err := db.ExecContext(ctx, q, salt, from, to, arr); err != nil {
				return fmt.Errorf("fill rows %d-%d: %w", from, to, err)
			}
		}
		_, err := db.ExecContext(ctx, "ANALYZE "+table)
		return err
	},
	"sqlite": func(ctx context.Context, db *sql.DB, table string, n int, owners []uuid.UUID) error {
		const now = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) * 1000"
		// The owners, by g % len: a CASE over their blobs.
		own := "CASE g % " + strconv.Itoa(len(owners))
		for i, o := range owners {
			own += fmt.Sprintf(" WHEN %d THEN X'%x'", i, o[:])
		}
		own += " END"
		q := `WITH RECURSIVE g(g) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT g + 1 FROM g WHERE g < CAST(? AS INTEGER)),
s AS (SELECT g, ` + now + ` - (` + strconv.Itoa(n) + ` - g) * 1000 AS ts,
  CASE WHEN g % 100 < 2 THEN 'available' WHEN g % 100 = 2 THEN 'claimed' WHEN g % 100 < 6 THEN 'dead' WHEN g % 100 = 6 THEN 'cancelled' ELSE 'completed' END AS st FROM g)
INSERT INTO ` + table + ` (id, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, claim_token, claimed_by, claimed_at, lease_expires_at, result, last_error, created_at, finished_at)
SELECT randomblob(16), 'q' || ((g / 100) % ` + strconv.Itoa(queues) + `), 'kind.' || ((g / 3) % ` + strconv.Itoa(kinds) + `), '{"n":' || g || '}', 0, st, ts,
  CASE st WHEN 'available' THEN 0 WHEN 'dead' THEN 3 ELSE 1 END, 3, 0,
  CASE st WHEN 'claimed' THEN randomblob(16) END,
  CASE st WHEN 'claimed' THEN ` + own + ` END,
  CASE st WHEN 'claimed' THEN ts END,
  CASE st WHEN 'claimed' THEN ts + 3600000000 END,
  CASE st WHEN 'completed' THEN '{"ok":true}' END,
  CASE st WHEN 'dead' THEN 'boom: the handler failed' END,
  ts,
  CASE WHEN st IN ('completed', 'dead', 'cancelled') THEN ts + 50000 END
FROM s`
		for from := 0; from < n; from += fillChunk {
			to := min(from+fillChunk, n) - 1
			if _, err := db.ExecContext(ctx, q, from, to); err != nil {
				return fmt.Errorf("fill rows %d-%d: %w", from, to, err)
			}
		}
		_, err := db.ExecContext(ctx, "ANALYZE")
		return err
	},
}

// extras adds, through core's API, what the pages show beside the items:
// runs (one of them with its first step), and fan-outs whose barriers have
// not fired (their children wait in a queue no one claims).
func extras(ctx context.Context, store *core.Store, owner uuid.UUID) (runs []uuid.UUID, barriers []uuid.UUID, err error) {
	for i := range 30 {
		r, _, err := store.CreateRun(ctx, core.RunSpec{Name: "loadtime-" + strconv.Itoa(i%3), Input: []byte(`{"i":` + strconv.Itoa(i) + `}`)},
			core.ItemSpec{Queue: "lt-runs", Kind: "step.first", Payload: []byte(`{}`)})
		if err != nil {
			return nil, nil, fmt.Errorf("create run: %w", err)
		}
		runs = append(runs, r.ID)
	}
	var specs []core.ItemSpec
	for range 10 {
		specs = append(specs, core.ItemSpec{Queue: "lt-fan", Kind: "fan.parent", Payload: []byte(`{}`)})
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		return nil, nil, fmt.Errorf("enqueue fan-outs: %w", err)
	}
	claims, err := store.Claim(ctx, core.ClaimParams{Queue: "lt-fan", Owner: owner, Limit: 10, Lease: time.Hour})
	if err != nil {
		return nil, nil, fmt.Errorf("claim fan-outs: %w", err)
	}
	for _, c := range claims {
		var id uuid.UUID
		_, err := store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "parts", Join: core.JoinSpec{Queue: "lt-fan", Kind: "fan.join"}})
			if err != nil {
				return err
			}
			var kids []core.ChildSpec
			for i := range 5 {
				kids = append(kids, core.ChildSpec{Key: strconv.Itoa(i), Queue: "lt-stuck", Kind: "fan.part"})
			}
			if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "done", Children: kids}); err != nil {
				return err
			}
			if _, err := f.Seal(ctx, b.ID); err != nil {
				return err
			}
			id = b.ID
			return f.Complete(ctx, nil)
		})
		if err != nil {
			return nil, nil, fmt.Errorf("fan out: %w", err)
		}
		barriers = append(barriers, id)
	}
	return runs, barriers, nil
}
