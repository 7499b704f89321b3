package storeworkload

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadSchedules reaches the statements of schedules kept in the
// database: set (created, then changed), listed and read, paused and
// resumed, their due ticks enqueued on a clock four hours ahead,
// triggered, backfilled, and deleted.
func workloadSchedules(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	ahead := open(t, db, d, core.Options{ClockOffset: 4 * time.Hour})
	spec := core.ScheduleSpec{Name: "stored", Cron: "0 * * * *", TimeZone: "Europe/Paris", MaxCatchUp: 2,
		Item: core.ItemSpec{Queue: "stored", Payload: json.RawMessage(`{"n":1}`)}}
	_, err := s.SetSchedule(ctx, spec)
	must(err)
	spec.Item.Priority = 1
	_, err = s.SetSchedule(ctx, spec)
	must(err)
	if all, err := s.Schedules(ctx); err != nil || len(all) != 1 {
		t.Fatalf("Schedules = %v, %v; want the one set", all, err)
	}
	must(s.PauseSchedule(ctx, "stored"))
	must(s.ResumeSchedule(ctx, "stored"))
	ticks, err := ahead.EnqueueStoredDue(ctx)
	must(err)
	if len(ticks) != 2 {
		t.Errorf("EnqueueStoredDue 4 h ahead: %d ticks, want 2", len(ticks))
	}
	_, err = s.TriggerSchedule(ctx, "stored")
	must(err)
	sc, err := ahead.GetSchedule(ctx, "stored")
	must(err)
	_, err = s.BackfillSchedule(ctx, "stored", sc.Watermark.Add(-4*time.Hour), sc.Watermark)
	must(err)
	must(s.DeleteSchedule(ctx, "stored"))
}
