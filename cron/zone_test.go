package cron

import (
	"testing"
	"time"
)

// utc is a UTC time from its parts, for the tables below.
func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// ticksFrom returns the n ticks of c after from, checking that Prev walks
// the same ticks back.
func ticksFrom(t *testing.T, c *Expr, from time.Time, n int) []time.Time {
	t.Helper()
	var out []time.Time
	for at := from; len(out) < n; {
		at = c.Next(at)
		if at.IsZero() {
			t.Fatalf("%s: no tick after %v", c, from)
		}
		out = append(out, at)
	}
	for i, at := range out {
		if got := c.Prev(at); !got.Equal(at) {
			t.Errorf("%s: Prev(%v) = %v, want the tick itself", c, at, got)
		}
		if i > 0 {
			if got := c.Prev(at.Add(-time.Nanosecond)); !got.Equal(out[i-1]) {
				t.Errorf("%s: Prev just before %v = %v, want %v", c, at, got, out[i-1])
			}
		}
	}
	return out
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// In New York, clocks go from 02:00 EST to 03:00 EDT on 8 March 2026
// (07:00 UTC) and from 02:00 EDT back to 01:00 EST on 1 November 2026
// (06:00 UTC).
func TestIn_SkippedWallTimeTicksAtGapEnd(t *testing.T) {
	ny := zone(t, "America/New_York")
	daily := MustParse("30 2 * * *").In(ny)
	got := ticksFrom(t, daily, utc(2026, 3, 7, 0, 0), 3)
	want := []time.Time{utc(2026, 3, 7, 7, 30), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)}
	assertTicks(t, daily, got, want)

	// Every half hour: 02:00 and 02:30 do not exist; they tick once at
	// 03:00 EDT, which is a tick of its own too.
	half := MustParse("*/30 * * * *").In(ny)
	got = ticksFrom(t, half, utc(2026, 3, 8, 5, 59), 4)
	want = []time.Time{utc(2026, 3, 8, 6, 0), utc(2026, 3, 8, 6, 30), utc(2026, 3, 8, 7, 0), utc(2026, 3, 8, 7, 30)}
	assertTicks(t, half, got, want)
}

func TestIn_RepeatedWallTimeTicksOnce(t *testing.T) {
	ny := zone(t, "America/New_York")
	daily := MustParse("30 1 * * *").In(ny)
	got := ticksFrom(t, daily, utc(2026, 10, 31, 0, 0), 3)
	want := []time.Time{utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)}
	assertTicks(t, daily, got, want)

	// The repeated hour (06:00 to 07:00 UTC, 01:00 to 02:00 EST) has no
	// ticks: its wall times ticked in their first pass.
	half := MustParse("*/30 * * * *").In(ny)
	got = ticksFrom(t, half, utc(2026, 11, 1, 4, 29), 5)
	want = []time.Time{utc(2026, 11, 1, 4, 30), utc(2026, 11, 1, 5, 0), utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 7, 0), utc(2026, 11, 1, 7, 30)}
	assertTicks(t, half, got, want)
	if p := half.Prev(utc(2026, 11, 1, 6, 45)); !p.Equal(utc(2026, 11, 1, 5, 30)) {
		t.Errorf("Prev in the repeated hour = %v, want its first pass's 01:30 (05:30 UTC)", p)
	}
}

// TestIn_WalksAYear checks, in zones with whole-hour, half-hour and no
// changes, that every tick's wall time matches, that ticks only grow, and
// that Prev retraces Next.
func TestIn_WalksAYear(t *testing.T) {
	for _, name := range []string{"Europe/Paris", "Australia/Lord_Howe", "America/Santiago", "Asia/Tokyo"} {
		loc := zone(t, name)
		for _, e := range []string{"0 * * * *", "*/20 1-3 * * *", "0 2 * * 0"} {
			c := MustParse(e).In(loc)
			n := 400
			if e == "0 * * * *" {
				n = 24 * 366
			}
			ticks := ticksFrom(t, c, utc(2026, 1, 1, 0, 0), n)
			for i, at := range ticks {
				if i > 0 && !at.After(ticks[i-1]) {
					t.Fatalf("%s in %s: tick %v after %v", e, name, at, ticks[i-1])
				}
				if w := wallOf(at, loc); !matches(c, w) && !isGapEnd(at, loc) {
					t.Fatalf("%s in %s: tick at %v, whose wall time does not match", e, name, at.In(loc))
				}
			}
		}
	}
}

// matches reports whether wall (a UTC time standing for a wall time)
// matches every field of c.
func matches(c *Expr, wall time.Time) bool {
	return c.minute&(1<<uint(wall.Minute())) != 0 && c.hour&(1<<uint(wall.Hour())) != 0 &&
		c.month&(1<<uint(wall.Month())) != 0 && c.dayMatches(wall)
}

// isGapEnd reports whether a change of offset happens at at.
func isGapEnd(at time.Time, loc *time.Location) bool {
	start, _ := at.In(loc).ZoneBounds()
	return start.Equal(at)
}

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"", "UTC", "Europe/Paris", "Pacific/Chatham"} {
		if _, err := LoadZone(name); err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
		}
	}
	for _, name := range []string{"Local", "Mars/Olympus", "../etc/passwd", string(make([]byte, 100))} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) accepted", name)
		}
	}
}

func assertTicks(t *testing.T, c *Expr, got, want []time.Time) {
	t.Helper()
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("%s: tick %d = %v, want %v", c, i, got[i], want[i])
		}
	}
}
