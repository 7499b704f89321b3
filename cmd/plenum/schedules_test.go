package main

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// schedules sets, lists, pauses, resumes, triggers, backfills and deletes
// a stored schedule, on SQLite and on each server database the
// environment names; input the store refuses is a usage error that says
// why.
func TestSchedules_Lifecycle(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, checkSchedules)
}

func checkSchedules(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, o inspectOptions, _ string) {
	ctx := context.Background()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	dbArgs := []string{"--prefix", prefix}
	if o.DB != "" {
		dbArgs = append(dbArgs, "--db", o.DB)
	} else {
		dbArgs = append(dbArgs, "--dialect", o.Dialect, "--dsn", o.DSN)
	}
	schedules := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(append([]string{"schedules"}, args...), dbArgs...)...)
		if code != want {
			t.Fatalf("schedules %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
		}
		return out + errOut
	}
	if out := schedules(cmdline.ExitOK, "list"); !strings.Contains(out, "No schedules stored") {
		t.Errorf("list of none: %s", out)
	}
	out := schedules(cmdline.ExitOK, "set", "--name", "nightly", "--cron", "30 2 * * *", "--zone", "Europe/Paris", "--queue", "batch", "--kind", "report", "--payload", `{"full":true}`)
	if !strings.Contains(out, "Created schedule nightly: cron 30 2 * * * in Europe/Paris") {
		t.Errorf("set: %s", out)
	}
	out = schedules(cmdline.ExitOK, "set", "--name", "hourly", "--every", "1h", "--queue", "batch")
	if !strings.Contains(out, "Created schedule hourly: every 1h0m0s") {
		t.Errorf("set hourly: %s", out)
	}
	schedules(cmdline.ExitOK, "pause", "--name", "nightly")
	out = schedules(cmdline.ExitOK, "list")
	for _, want := range []string{
		`NAME +TIMING +QUEUE +KIND +STATE +WATERMARK +NEXT TICK\n`,
		`hourly +every 1h0m0s +batch +- +active +\S+ +\S+\n`,
		`nightly +cron 30 2 \* \* \* in Europe/Paris +batch +report +paused +\S+ +-\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list does not match %q:\n%s", want, out)
		}
	}
	schedules(cmdline.ExitOK, "resume", "--name", "nightly")
	if out = schedules(cmdline.ExitOK, "trigger", "--name", "nightly"); !strings.Contains(out, "Triggered schedule nightly: item ") {
		t.Errorf("trigger: %s", out)
	}
	// Six ticks: from five hours before the watermark to it.
	hourly, err := st.GetSchedule(ctx, "hourly")
	if err != nil {
		t.Fatal(err)
	}
	from := hourly.Watermark.Add(-5 * time.Hour).Format(time.RFC3339)
	out = schedules(cmdline.ExitOK, "backfill", "--name", "hourly", "--from", from)
	if !regexp.MustCompile(`Backfilled schedule hourly through \S+: 6 ticks enqueued, 0 already in the queue`).MatchString(out) {
		t.Errorf("backfill: %s", out)
	}
	if c, err := st.Counts(ctx, "batch"); err != nil || c[core.StateAvailable] != 7 {
		t.Errorf("queue after trigger and backfill = %v, %v; want 7 available", c, err)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"set", "--name", "x", "--cron", "* * *", "--queue", "q"}, "invalid Cron"},
		{[]string{"set", "--name", "x", "--cron", "* * * * *", "--zone", "Mars/Base", "--queue", "q"}, "invalid TimeZone"},
		{[]string{"set", "--name", "x", "--every", "1h"}, "invalid Item.Queue"},
		{[]string{"backfill", "--name", "hourly", "--from", "yesterday"}, "want an RFC 3339 time"},
		{[]string{"pause"}, "--name is required"},
	} {
		if out := schedules(cmdline.ExitUsage, bad.args...); !strings.Contains(out, bad.says) {
			t.Errorf("%v: %s, want %q", bad.args, out, bad.says)
		}
	}
	if out := schedules(cmdline.ExitFailure, "pause", "--name", "missing"); !strings.Contains(out, "not found") {
		t.Errorf("pause of an unknown schedule: %s", out)
	}
	schedules(cmdline.ExitOK, "delete", "--name", "nightly")
	schedules(cmdline.ExitOK, "delete", "--name", "hourly")
	if all, err := st.Schedules(ctx); err != nil || len(all) != 0 {
		t.Errorf("schedules after the deletes: %+v, %v", all, err)
	}
}

// schedules without a subcommand, or with an unknown one, is a usage
// error; each subcommand has its -h.
func TestSchedules_Usage(t *testing.T) {
	t.Parallel()
	if code, _, errOut := cli(t, "schedules"); code != cmdline.ExitUsage || !strings.Contains(errOut, "Usage: plenum schedules") {
		t.Errorf("schedules: exit %d\n%s", code, errOut)
	}
	if code, _, _ := cli(t, "schedules", "frob"); code != cmdline.ExitUsage {
		t.Errorf("schedules frob: exit %d", code)
	}
	for _, sub := range []string{"list", "set", "pause", "resume", "trigger", "backfill", "delete"} {
		code, _, errOut := cli(t, "schedules", sub, "-h")
		if code != cmdline.ExitOK || !strings.Contains(errOut, "-dsn") {
			t.Errorf("schedules %s -h: exit %d\n%s", sub, code, errOut)
		}
	}
}
