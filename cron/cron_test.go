package cron_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/cron"
)

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCron_NextAndPrev(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr, from, next, prev string
	}{
		{"* * * * *", "2026-03-01 10:30", "2026-03-01 10:31", "2026-03-01 10:30"},
		{"*/15 * * * *", "2026-03-01 10:31", "2026-03-01 10:45", "2026-03-01 10:30"},
		{"0 * * * *", "2026-03-01 10:00", "2026-03-01 11:00", "2026-03-01 10:00"},
		{"5/20 * * * *", "2026-03-01 10:26", "2026-03-01 10:45", "2026-03-01 10:25"},
		{"0 9-17/4 * * *", "2026-03-01 14:00", "2026-03-01 17:00", "2026-03-01 13:00"},
		{"30 2 * * *", "2026-12-31 03:00", "2027-01-01 02:30", "2026-12-31 02:30"},
		{"0 0 1 * *", "2026-01-31 00:00", "2026-02-01 00:00", "2026-01-01 00:00"},
		{"0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00", "2024-02-29 00:00"},
		{"0 0 31 * *", "2026-04-01 00:00", "2026-05-31 00:00", "2026-03-31 00:00"},
		{"0 12 * JAN,jul *", "2026-02-01 00:00", "2026-07-01 12:00", "2026-01-31 12:00"},
		{"0 0 * * MON-FRI", "2026-12-05 12:00", "2026-12-07 00:00", "2026-12-04 00:00"}, // 5 Dec 2026 is a Saturday
		{"0 0 * * 7", "2026-12-01 00:00", "2026-12-06 00:00", "2026-11-29 00:00"},       // 7 is Sunday
		{"0 0 * * sun", "2026-12-01 00:00", "2026-12-06 00:00", "2026-11-29 00:00"},
		// Both day fields restricted: either matches (the 13th, or a Friday).
		{"0 0 13 * 5", "2026-12-01 00:00", "2026-12-04 00:00", "2026-11-27 00:00"},
		{"0 0 13 * 5", "2026-12-12 00:00", "2026-12-13 00:00", "2026-12-11 00:00"},
		// A day field that begins with * makes it AND: the 1st, if a Tuesday.
		{"0 0 1 * */2", "2026-12-01 00:00", "2027-04-01 00:00", "2026-12-01 00:00"},
		{"@hourly", "2026-03-01 10:59", "2026-03-01 11:00", "2026-03-01 10:00"},
		{"@daily", "2026-03-01 10:59", "2026-03-02 00:00", "2026-03-01 00:00"},
		{"@weekly", "2026-12-01 00:00", "2026-12-06 00:00", "2026-11-29 00:00"},
		{"@monthly", "2026-12-15 00:00", "2027-01-01 00:00", "2026-12-01 00:00"},
		{"@yearly", "2026-12-15 00:00", "2027-01-01 00:00", "2026-01-01 00:00"},
		{"1,2,3-5,59 0 * * *", "2026-03-01 00:05", "2026-03-01 00:59", "2026-03-01 00:05"},
	}
	for _, c := range cases {
		cr, err := cron.Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		from := utc(c.from)
		if got := cr.Next(from); !got.Equal(utc(c.next)) {
			t.Errorf("%q.Next(%s) = %s, want %s", c.expr, c.from, got, c.next)
		}
		if got := cr.Prev(from); !got.Equal(utc(c.prev)) {
			t.Errorf("%q.Prev(%s) = %s, want %s", c.expr, c.from, got, c.prev)
		}
	}
}

// TestCron_UTCHasNoDaylightSaving: the schedule is read in UTC whatever the
// zone of the time asked about, so the night a zone springs forward or
// falls back has every minute once, no tick skipped or doubled.
func TestCron_UTCHasNoDaylightSaving(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	cr := cron.MustParse("30 * * * *")
	// 8 March 2026, 02:00 in New York springs forward to 03:00.
	at := time.Date(2026, 3, 8, 1, 45, 0, 0, ny)
	var got []time.Time
	for i := 0; i < 4; i++ {
		at = cr.Next(at)
		got = append(got, at)
	}
	for i := 1; i < len(got); i++ {
		if d := got[i].Sub(got[i-1]); d != time.Hour || got[i].Location() != time.UTC {
			t.Fatalf("ticks %v: want one hour apart, in UTC", got)
		}
	}
}

// TestCron_AgreesWithMinuteScan checks Next and Prev against the plain
// definition (the first and last matching minute, found one minute at a
// time) for random expressions and times.
func TestCron_AgreesWithMinuteScan(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	field := func(min, max int, star bool) string {
		switch r.IntN(5) {
		case 0:
			if star {
				return "*"
			}
			fallthrough
		case 1:
			return itoa(min + r.IntN(max-min+1))
		case 2:
			a := min + r.IntN(max-min+1)
			b := a + r.IntN(max-a+1)
			return itoa(a) + "-" + itoa(b)
		case 3:
			return "*/" + itoa(1+r.IntN(max-min))
		default:
			return itoa(min+r.IntN(max-min+1)) + "," + itoa(min+r.IntN(max-min+1))
		}
	}
	for i := 0; i < 300; i++ {
		expr := strings.Join([]string{field(0, 59, true), field(0, 23, true), field(1, 28, true), field(1, 12, true), field(0, 7, true)}, " ")
		cr, err := cron.Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(366*24*60)) * time.Minute)
		next := cr.Next(from)
		for m := range gap(from, next) {
			if naive(expr, m) {
				t.Fatalf("%q: Next(%s) = %s skips %s", expr, from, next, m)
			}
		}
		if !naive(expr, next) {
			t.Fatalf("%q: Next(%s) = %s does not match", expr, from, next)
		}
		prev := cr.Prev(from)
		if !naive(expr, prev) {
			t.Fatalf("%q: Prev(%s) = %s does not match", expr, from, prev)
		}
		for m := range gap(prev, from.Add(time.Minute)) {
			if naive(expr, m) {
				t.Fatalf("%q: Prev(%s) = %s skips %s", expr, from, prev, m)
			}
		}
	}
}

// gap yields the minutes strictly between a and b: all of them when they
// are at most a few days apart, else the few days after a and before b
// (a scan of months of minutes would make the test slow, not stronger).
func gap(a, b time.Time) func(func(time.Time) bool) {
	const span = 3 * 24 * 60 * time.Minute
	return func(yield func(time.Time) bool) {
		for m := a.Add(time.Minute); m.Before(b); m = m.Add(time.Minute) {
			if m.Sub(a) > span && b.Sub(m) > span {
				m = b.Add(-span)
			}
			if !yield(m) {
				return
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// naive decides whether minute m matches expr field by field, straight
// from the definition, sharing no code with Cron.
func naive(expr string, m time.Time) bool {
	f := strings.Fields(expr)
	in := func(field string, v, lo, hi int) bool {
		for _, part := range strings.Split(field, ",") {
			rng, stepText, hasStep := strings.Cut(part, "/")
			a, b := lo, hi
			if rng != "*" {
				x, y, isRange := strings.Cut(rng, "-")
				a = atoi(x)
				b = a
				if isRange {
					b = atoi(y)
				} else if hasStep {
					b = hi
				}
			}
			step := 1
			if hasStep {
				step = atoi(stepText)
			}
			for x := a; x <= b; x += step {
				if x == v || (hi == 7 && x == 7 && v == 0) {
					return true
				}
			}
		}
		return false
	}
	dom, dow := in(f[2], m.Day(), 1, 31), in(f[4], int(m.Weekday()), 0, 7)
	day := dom && dow
	if !strings.HasPrefix(f[2], "*") && !strings.HasPrefix(f[4], "*") {
		day = dom || dow
	}
	return in(f[0], m.Minute(), 0, 59) && in(f[1], m.Hour(), 0, 23) && in(f[3], int(m.Month()), 1, 12) && day
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestCron_InvalidExpressions(t *testing.T) {
	t.Parallel()
	cases := []struct{ expr, field, reason string }{
		{"", "", "0 fields"},
		{"* * * *", "", "4 fields"},
		{"* * * * * *", "", "6 fields"},
		{"60 * * * *", "minute", "60 is outside 0-59"},
		{"* 24 * * *", "hour", "24 is outside 0-23"},
		{"* * 0 * *", "day of month", "0 is outside 1-31"},
		{"* * 32 * *", "day of month", "32 is outside 1-31"},
		{"* * * 13 *", "month", "13 is outside 1-12"},
		{"* * * * 8", "day of week", "8 is outside 0-7"},
		{"* * * foo *", "month", `"foo" is neither a number nor a name (JAN-DEC)`},
		{"* * * * fun", "day of week", `"fun" is neither a number nor a name (SUN-SAT)`},
		{"x * * * *", "minute", `"x" is not a number`},
		{"-1 * * * *", "minute", "missing value"},
		{"+1 * * * *", "minute", `"+1" is not a number`},
		{"30-10 * * * *", "minute", "runs backwards"},
		{"*/0 * * * *", "minute", "not a positive whole number"},
		{"*/61 * * * *", "minute", "longer than the field's range"},
		{"*/x * * * *", "minute", "not a positive whole number"},
		{"1,,2 * * * *", "minute", "empty list element"},
		{"0 0 30 2 *", "", "never fires"},
		{"0 0 31 4,6,9,11 *", "", "never fires"},
		{"@every 5m", "", "unknown macro"},
		{strings.Repeat("1,", 200) + "1 * * * *", "", "longer than 256 bytes"},
	}
	for _, c := range cases {
		_, err := cron.Parse(c.expr)
		var ce *cron.Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%q) = %v, want a *cron.Error", c.expr, err)
			continue
		}
		if ce.Field != c.field || !strings.Contains(ce.Reason, c.reason) {
			t.Errorf("Parse(%q): field %q, reason %q; want field %q, reason containing %q", c.expr, ce.Field, ce.Reason, c.field, c.reason)
		}
	}
	// Not refused: both day fields restricted can always fire on the weekday.
	if _, err := cron.Parse("0 0 30 2 MON"); err != nil {
		t.Errorf("0 0 30 2 MON: %v (fires on Mondays in February)", err)
	}
}
