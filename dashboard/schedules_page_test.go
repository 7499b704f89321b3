package dashboard_test

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestSchedules_PageAndActions: the schedules page lists the stored
// schedules; each action, confirmed and posted with its CSRF token,
// changes them through the store (set creates and changes, pause,
// resume, trigger, backfill, delete), input the store refuses is a 400
// that says why, the audit trail names the schedule, and a read-only
// dashboard refuses every action.
func TestSchedules_PageAndActions(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		log := &records{}
		c := serve(t, newDashboard(t, st, dashboard.Options{Actions: true, Authorize: allow, Logger: slog.New(log)}), "")
		code, body := c.get("/schedules")
		wantStatus(t, "GET /schedules", code, http.StatusOK, body)
		if !strings.Contains(body, `id="empty"`) {
			t.Errorf("no empty state:\n%s", body)
		}
		const set = "/schedules/set?name=nightly%2Freport"
		code, body = c.act(set, url.Values{"cron": {"30 2 * * *"}, "zone": {"Europe/Paris"}, "queue": {"batch"}, "kind": {"report"}, "payload": {`{"full":true}`}})
		wantStatus(t, "set", code, http.StatusOK, body)
		if !strings.Contains(html.UnescapeString(body), `Created: schedule "nightly/report" ticks 30 2 * * * (Europe/Paris)`) {
			t.Errorf("set outcome:\n%s", body)
		}
		code, body = c.act(set, url.Values{"every": {"1h"}, "queue": {"batch"}})
		wantStatus(t, "change", code, http.StatusOK, body)
		sc, err := st.GetSchedule(ctx, "nightly/report")
		if err != nil || sc.Every != time.Hour || sc.Cron != "" || sc.Revision != 2 {
			t.Fatalf("schedule after the change = %+v, %v", sc, err)
		}
		_, body = c.get("/schedules")
		for _, want := range []string{`<tr data-name="nightly/report">`, `every 1h0m0s`, `data-action="pause-schedule"`, `data-action="trigger-schedule"`, `data-action="backfill-schedule"`, `data-action="delete-schedule"`} {
			if !strings.Contains(body, want) {
				t.Errorf("schedules page lacks %q:\n%s", want, body)
			}
		}
		for _, path := range []string{"/schedules/pause?name=nightly%2Freport", "/schedules/resume?name=nightly%2Freport", "/schedules/trigger?name=nightly%2Freport"} {
			code, body := c.act(path, nil)
			wantStatus(t, "POST "+path, code, http.StatusOK, body)
		}
		from := sc.Watermark.Add(-2 * time.Hour).Format(time.RFC3339)
		code, body = c.act("/schedules/backfill?name=nightly%2Freport", url.Values{"from": {from}})
		wantStatus(t, "backfill", code, http.StatusOK, body)
		if !strings.Contains(body, "3 ticks enqueued, 0 already in the queue") {
			t.Errorf("backfill outcome:\n%s", body)
		}
		if counts, err := st.Counts(ctx, "batch"); err != nil || counts[core.StateAvailable] != 4 {
			t.Errorf("batch after trigger and backfill = %v, %v; want 4 available", counts, err)
		}
		for _, bad := range []struct {
			path string
			form url.Values
			says string
		}{
			{set, url.Values{"cron": {"* *"}, "queue": {"batch"}}, "invalid Cron"},
			{set, url.Values{"cron": {"* * * * *"}, "zone": {"Mars/Base"}, "queue": {"batch"}}, "invalid TimeZone"},
			{set, url.Values{"every": {"soon"}, "queue": {"batch"}}, `every: "soon" is not a duration`},
			{"/schedules/backfill?name=nightly%2Freport", url.Values{"from": {"yesterday"}}, "is not an RFC 3339 time"},
		} {
			code, body := c.act(bad.path, bad.form)
			wantStatus(t, "refused "+bad.form.Encode(), code, http.StatusBadRequest, body)
			if !strings.Contains(html.UnescapeString(body), bad.says) {
				t.Errorf("%s: the outcome does not say %q:\n%s", bad.form.Encode(), bad.says, body)
			}
		}
		code, body = c.act("/schedules/pause?name=missing", nil)
		wantStatus(t, "pause of a missing schedule", code, http.StatusNotFound, body)
		code, body = c.act("/schedules/delete?name=nightly%2Freport", nil)
		wantStatus(t, "delete", code, http.StatusOK, body)
		if all, err := st.Schedules(ctx); err != nil || len(all) != 0 {
			t.Errorf("schedules after delete = %v, %v", all, err)
		}
		var done int
		for _, rec := range log.take() {
			if rec.msg != "dashboard action" || !strings.HasSuffix(rec.attrs["action"], "-schedule") {
				continue
			}
			if rec.attrs["outcome"] == "done" {
				done++
				if rec.attrs["name"] != "nightly/report" {
					t.Errorf("audit record %+v", rec.attrs)
				}
			}
		}
		if done != 7 {
			t.Errorf("audit: %d schedule actions done, want 7", done)
		}
		ro := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		for _, path := range []string{set, "/schedules/trigger?name=x"} {
			code, body := ro.get(path)
			wantStatus(t, "read-only GET "+path, code, http.StatusForbidden, body)
		}
	})
}
