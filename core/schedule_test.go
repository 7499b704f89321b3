package core_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/cron"
	"github.com/plenumdb/plenum/sqlite"
)

func TestTickKey_RoundTrips(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.FixedZone("x", 3600))
	key := core.TickKey("a/b", at)
	if key != "plenum.tick/a/b/2026-12-01T09:00:00.123456Z" {
		t.Fatalf("TickKey = %q", key)
	}
	name, got, ok := core.ParseTickKey(key)
	if !ok || name != "a/b" || !got.Equal(at) {
		t.Fatalf("ParseTickKey(%q) = %q, %v, %v", key, name, got, ok)
	}
	for _, k := range []string{"", "plenum.tick/", "plenum.tick//2026-12-01T09:00:00.123456Z", "plenum.tick/a/now", "other/a/2026-12-01T09:00:00.123456Z"} {
		if _, _, ok := core.ParseTickKey(k); ok {
			t.Errorf("ParseTickKey(%q) ok", k)
		}
	}
}

// TestEnqueueDue_BadSpecsChangeNothing: each spec no schedule could honour
// is refused with an error naming its field, before anything is written.
func TestEnqueueDue_BadSpecsChangeNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "due.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	item := core.ItemSpec{Queue: "q"}
	cases := []struct {
		field string
		specs []core.ScheduleSpec
	}{
		{"specs", nil},
		{"specs[0].Name", []core.ScheduleSpec{{Every: time.Minute, Item: item}}},
		{"specs[0].Name", []core.ScheduleSpec{{Name: strings.Repeat("n", 129), Every: time.Minute, Item: item}}},
		{"specs[1].Name", []core.ScheduleSpec{{Name: "a", Every: time.Minute, Item: item}, {Name: "a", Every: time.Hour, Item: item}}},
		{"specs[0].Every", []core.ScheduleSpec{{Name: "a", Item: item}}},
		{"specs[0].Every", []core.ScheduleSpec{{Name: "a", Every: time.Millisecond, Item: item}}},
		{"specs[0].Every", []core.ScheduleSpec{{Name: "a", Every: -time.Hour, Item: item}}},
		{"specs[0].Every", []core.ScheduleSpec{{Name: "a", Every: time.Minute, Cron: "* * * * *", Item: item}}},
		{"specs[0].MaxCatchUp", []core.ScheduleSpec{{Name: "a", Every: time.Minute, MaxCatchUp: -1, Item: item}}},
		{"specs[0].MaxCatchUp", []core.ScheduleSpec{{Name: "a", Every: time.Minute, MaxCatchUp: core.MaxCatchUpCeiling + 1, Item: item}}},
		{"specs[0].Item.Key", []core.ScheduleSpec{{Name: "a", Every: time.Minute, Item: core.ItemSpec{Queue: "q", Key: "k"}}}},
		{"specs[0].Item.Delay", []core.ScheduleSpec{{Name: "a", Every: time.Minute, Item: core.ItemSpec{Queue: "q", Delay: time.Second}}}},
		{"specs[0].Item.Queue", []core.ScheduleSpec{{Name: "a", Every: time.Minute}}},
		{"specs[0].Item.Payload", []core.ScheduleSpec{{Name: "a", Every: time.Minute, Item: core.ItemSpec{Queue: "q", Payload: []byte("{")}}}},
	}
	for _, c := range cases {
		_, err := s.EnqueueDue(ctx, c.specs...)
		var ie *core.InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("EnqueueDue(%+v) = %v, want an InputError on %s", c.specs, err, c.field)
		}
	}
	_, err = s.EnqueueDue(ctx, core.ScheduleSpec{Name: "a", Cron: "61 * * * *", Item: item})
	var ce *cron.Error
	var ie *core.InputError
	if !errors.As(err, &ce) || ce.Field != "minute" || !errors.As(err, &ie) || ie.Field != "specs[0].Cron" || !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("bad cron = %v, want an InputError on specs[0].Cron wrapping a cron.Error on the minute", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM plenum_schedules").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d schedules written, %v; want none", n, err)
	}
}
