package cron

import (
	"fmt"
	"time"

	// The zone database is embedded so that a zone loads on any machine,
	// one without /usr/share/zoneinfo included.
	_ "time/tzdata"
)

// maxZone bounds the length of a zone's name.
const maxZone = 64

// LoadZone returns the IANA time zone named name ("Europe/Paris"), from
// the system's zone database or, where it has none, the copy embedded in
// the program. "" and "UTC" are UTC. "Local" is refused: a schedule's
// zone must mean the same in every process.
func LoadZone(name string) (*time.Location, error) {
	switch {
	case name == "" || name == "UTC":
		return time.UTC, nil
	case name == "Local":
		return nil, fmt.Errorf("cron: zone %q differs between machines: name an IANA zone", name)
	case len(name) > maxZone:
		return nil, fmt.Errorf("cron: zone name longer than %d bytes", maxZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("cron: unknown time zone %q", name)
	}
	return loc, nil
}

// In returns the expression read on loc's wall clock (nil is UTC). Its
// ticks are the instants at which loc's clock shows a matching minute,
// with two rules for the minutes a daylight-saving change skips or
// repeats:
//
//   - a skipped wall time (02:30 on the night clocks go from 02:00 to
//     03:00) ticks at the end of the gap, the instant the clocks jump
//     (03:00 new time); several skipped wall times that match make one
//     tick there, together with 03:00 itself if it matches;
//   - a repeated wall time (01:30 on the night clocks go from 02:00 back
//     to 01:00) ticks once, at its first occurrence; the repeated hour's
//     second pass has no ticks.
//
// So a daily job at 02:30 runs once on each day, and an hourly one skips
// no day's run and runs no hour twice.
func (c *Expr) In(loc *time.Location) *Expr {
	d := *c
	d.loc = loc
	if loc == time.UTC {
		d.loc = nil
	}
	return &d
}

// Location returns the zone the expression is read in: UTC unless In
// gave another.
func (c *Expr) Location() *time.Location {
	if c.loc == nil {
		return time.UTC
	}
	return c.loc
}

// zoneReach bounds how far a wall time may lie from its instant's UTC
// time plus the offset on either side of a change: more than any zone's
// change of offset (at most two hours).
const zoneReach = 3 * time.Hour

// Next returns the first tick strictly after t, in UTC, or the zero time
// if there is none within eight years (never, for a parsed expression).
func (c *Expr) Next(t time.Time) time.Time {
	if c.loc == nil {
		return c.nextWall(t.UTC())
	}
	// A wall time's instant never decreases as the wall time grows, so
	// the first matching wall time whose instant is after t gives the
	// tick. Start early enough that a wall time moved forward by a gap
	// is not passed over.
	for w := c.nextWall(wallOf(t, c.loc).Add(-zoneReach)); !w.IsZero(); w = c.nextWall(w) {
		if at := instant(w, c.loc); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// Prev returns the last tick at or before t, in UTC, or the zero time if
// there is none within eight years.
func (c *Expr) Prev(t time.Time) time.Time {
	if c.loc == nil {
		return c.prevWall(t.UTC())
	}
	for w := c.prevWall(wallOf(t, c.loc).Add(zoneReach)); !w.IsZero(); w = c.prevWall(w.Add(-time.Minute)) {
		if at := instant(w, c.loc); !at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// wallOf returns the time loc's clock shows at t, written as a UTC time.
func wallOf(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant returns the instant at which loc's clock shows wall (a UTC time
// standing for a wall time): its first occurrence when a change repeats
// it, the end of the gap when a change skips it.
func instant(wall time.Time, loc *time.Location) time.Time {
	_, before := wall.Add(-16 * time.Hour).In(loc).Zone()
	_, after := wall.Add(16 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		at := wall.Add(-time.Duration(off) * time.Second)
		if wallOf(at, loc).Equal(wall) && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	if !best.IsZero() {
		return best.UTC()
	}
	// Skipped: the instant read at the old offset lies past the change,
	// in the zone that began at the gap's end.
	start, _ := wall.Add(-time.Duration(before) * time.Second).In(loc).ZoneBounds()
	return start.UTC()
}
