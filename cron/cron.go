// Package cron reads five-field cron expressions, in UTC or in an IANA
// time zone, and finds the ticks before and after a time. It knows nothing of databases: core's
// schedules use it to find the ticks they enqueue, on the database clock.
package cron

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Expr is a parsed five-field cron expression, read in UTC: minute (0-59),
// hour (0-23), day of month (1-31), month (1-12 or JAN-DEC) and day of
// week (0-7 or SUN-SAT, 0 and 7 both Sunday). Each field is *, a value, a
// range a-b, or either followed by /step (a lone value with a step, 5/15,
// runs from that value to the field's end); fields may be lists of those,
// separated by commas. Names are case-insensitive. The macros @yearly
// (@annually), @monthly, @weekly, @daily (@midnight) and @hourly stand for
// their usual expressions.
//
// As in every common cron, when both day fields are restricted (neither
// begins with *) a day matches if either matches; otherwise both must.
// In UTC every minute exists once. An expression read in a time zone (In)
// matches that zone's wall clock, whose daylight-saving changes skip and
// repeat wall times; see In for what its ticks do then.
type Expr struct {
	expr   string
	loc    *time.Location // nil for UTC
	minute uint64         // bit n set: minute n
	hour   uint64
	dom    uint64 // bits 1..31
	month  uint64 // bits 1..12
	dow    uint64 // bits 0..6
	// domStar and dowStar record a field that begins with *: the OR rule
	// applies only when neither does.
	domStar, dowStar bool
}

// Error is an expression Parse refused: it names the field at fault and
// says why.
type Error struct {
	// Expr is the expression as given.
	Expr string
	// Field names the field at fault ("minute", "hour", "day of month",
	// "month", "day of week"), or is empty for the expression as a whole.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error says which part of the expression is wrong and why.
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("cron: invalid expression %q: %s", e.Expr, e.Reason)
	}
	return fmt.Sprintf("cron: invalid expression %q: %s field: %s", e.Expr, e.Field, e.Reason)
}

type fieldSpec struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i
}

var (
	monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dayNames   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	fieldSpecs = [5]fieldSpec{
		{name: "minute", min: 0, max: 59},
		{name: "hour", min: 0, max: 23},
		{name: "day of month", min: 1, max: 31},
		{name: "month", min: 1, max: 12, names: monthNames},
		{name: "day of week", min: 0, max: 7, names: dayNames},
	}
	macros = map[string]string{
		"@yearly":   "0 0 1 1 *",
		"@annually": "0 0 1 1 *",
		"@monthly":  "0 0 1 * *",
		"@weekly":   "0 0 * * 0",
		"@daily":    "0 0 * * *",
		"@midnight": "0 0 * * *",
		"@hourly":   "0 * * * *",
	}
)

// maxExpr bounds the length of an expression, so that a hostile one
// cannot cost more than a few microseconds to refuse.
const maxExpr = 256

// Parse parses a five-field cron expression (see Expr). An expression
// that can never fire, such as "0 0 30 2 *", is refused too.
func Parse(expr string) (*Expr, error) {
	if len(expr) > maxExpr {
		return nil, &Error{Expr: expr, Reason: fmt.Sprintf("longer than %d bytes", maxExpr)}
	}
	text := strings.TrimSpace(expr)
	if strings.HasPrefix(text, "@") {
		m, ok := macros[strings.ToLower(text)]
		if !ok {
			return nil, &Error{Expr: expr, Reason: "unknown macro (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)"}
		}
		text = m
	}
	parts := strings.Fields(text)
	if len(parts) != 5 {
		return nil, &Error{Expr: expr, Reason: fmt.Sprintf("%d fields, want 5 (minute hour day-of-month month day-of-week)", len(parts))}
	}
	var sets [5]uint64
	for i, p := range parts {
		set, err := parseField(p, fieldSpecs[i])
		if err != nil {
			return nil, &Error{Expr: expr, Field: fieldSpecs[i].name, Reason: err.Error()}
		}
		sets[i] = set
	}
	c := &Expr{
		expr: expr, minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3],
		// 7 is Sunday as well as 0.
		dow:     (sets[4] | sets[4]>>7) & 0x7f,
		domStar: strings.HasPrefix(parts[2], "*"),
		dowStar: strings.HasPrefix(parts[4], "*"),
	}
	if !c.canFire() {
		return nil, &Error{Expr: expr, Reason: "no month has any of those days of the month: it never fires"}
	}
	return c, nil
}

// MustParse is Parse for expressions known to be valid: it panics
// on an error. Use it for package-level schedules.
func MustParse(expr string) *Expr {
	c, err := Parse(expr)
	if err != nil {
		panic(err)
	}
	return c
}

// String returns the expression as it was given.
func (c *Expr) String() string { return c.expr }

func parseField(s string, f fieldSpec) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			return 0, fmt.Errorf("empty list element in %q", s)
		}
		rng, stepText, hasStep := strings.Cut(part, "/")
		lo, hi := f.min, f.max
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = fieldValue(a, f); err != nil {
				return 0, err
			}
			if hi, err = fieldValue(b, f); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("range %q runs backwards", rng)
			}
		default:
			v, err := fieldValue(rng, f)
			if err != nil {
				return 0, err
			}
			lo = v
			if !hasStep {
				hi = v
			}
		}
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("step %q is not a positive whole number", stepText)
			}
			if n > f.max-f.min+1 {
				return 0, fmt.Errorf("step %d is longer than the field's range %d-%d", n, f.min, f.max)
			}
			step = n
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func fieldValue(s string, f fieldSpec) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing value")
	}
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		if f.names != nil {
			return 0, fmt.Errorf("%q is neither a number nor a name (%s-%s)", s, strings.ToUpper(f.names[0]), strings.ToUpper(f.names[len(f.names)-1]))
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("%d is outside %d-%d", v, f.min, f.max)
	}
	return v, nil
}

// daysIn is the most days month m (1-12) can have (February: 29).
var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// canFire reports whether some day of some allowed month matches. A
// weekday rule always finds a day; only a day-of-month rule alone can ask
// for days no allowed month has.
func (c *Expr) canFire() bool {
	if c.domStar || !c.dowStar {
		// Every day of the month, or the OR rule with a weekday: some
		// day of every allowed month matches.
		return true
	}
	for m := 1; m <= 12; m++ {
		if c.month&(1<<uint(m)) != 0 && bits.TrailingZeros64(c.dom) <= daysIn[m] {
			return true
		}
	}
	return false
}

// dayMatches applies the day-of-month/day-of-week rule to t's date.
func (c *Expr) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<uint(t.Day())) != 0
	dow := c.dow&(1<<uint(t.Weekday())) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// horizon bounds the search for a tick: every expression Parse
// accepts fires within any eight years (a 29 February does).
const horizon = 8 * 366 * 24 * time.Hour

// nextWall is Next on the wall clock, written as a UTC time.
func (c *Expr) nextWall(t time.Time) time.Time {
	end := t.Add(horizon)
	t = t.Truncate(time.Minute).Add(time.Minute)
	for t.Before(end) {
		switch {
		case c.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		case !c.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
		case c.hour&(1<<uint(t.Hour())) == 0:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case c.minute&(1<<uint(t.Minute())) == 0:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}

// prevWall is Prev on the wall clock, written as a UTC time. It steps
// back a field at a time, as nextWall steps forward, so that finding the
// latest of many missed ticks costs no more than finding the next one.
func (c *Expr) prevWall(t time.Time) time.Time {
	end := t.Add(-horizon)
	t = t.Truncate(time.Minute)
	for t.After(end) {
		switch {
		case c.month&(1<<uint(t.Month())) == 0:
			// The last minute of the month before.
			t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case !c.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case c.hour&(1<<uint(t.Hour())) == 0:
			t = t.Truncate(time.Hour).Add(-time.Minute)
		case c.minute&(1<<uint(t.Minute())) == 0:
			t = t.Add(-time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}
