package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/flowcheck"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/migrations"
)

// Invariants Check proves, as named in its violations.
const (
	InvTerminal    = "every item terminal"
	InvExactlyOnce = "every unit completed exactly once"
	InvBarrier     = "every barrier fired once, its join saw every child"
	InvOwner       = "no claim held by a dead owner"
	InvAttempts    = "crash and attempt counts add up"
	InvConcurrency = "no key had more claims at once than its concurrency limit"
	InvRate        = "no key began more claims within its rate's period than rate plus burst"
)

// Violation is one broken invariant, with what shows it.
type Violation struct {
	Invariant string
	Detail    string
}

// Findings is what Check read and what it found wrong.
type Findings struct {
	// Items counts items by state.
	Items map[core.State]int64
	// Units is the number of the plan's units audited (at least once);
	// Ticks the number of periodic ticks audited.
	Units, Ticks int64
	// Children is the number of fan-out children completed.
	Children int64
	// Barriers and Fired count the barriers and those that fired.
	Barriers, Fired int64
	// Crashes sums the items' crash counts; History counts history rows
	// by outcome.
	Crashes int64
	History map[string]int64
	// Retried is the number of units planned to fail their first attempt
	// that completed on a later one.
	Retried int64
	// ByWorker counts audit rows by worker slot.
	ByWorker map[int]int64
	// FlowRuns counts the runs of keyed items the flow audit records,
	// Unended those of them with no recorded end (left out of the
	// overlaps); FlowPeak is the most claims of one key under the
	// concurrency limit at once, RatePeak the most claims of one
	// rate-limited key begun within the rate's period.
	FlowRuns, Unended  int
	FlowPeak, RatePeak int
	// Violations are the broken invariants; none means the round passed.
	Violations []Violation
}

// OK reports whether no invariant was broken.
func (f *Findings) OK() bool { return len(f.Violations) == 0 }

// maxExamples bounds the violations of one kind that are listed one by
// one; the rest are counted.
const maxExamples = 5

// checker holds what one Check reads with.
type checker struct {
	db     *sql.DB
	d      dialect.Dialect
	n      migrations.Names
	audit  string
	prefix string
	plan   Plan
	stale  time.Duration
	f      *Findings
	counts map[string]int // violations per invariant
}

func (c *checker) violate(inv, format string, args ...any) {
	c.counts[inv]++
	if c.counts[inv] <= maxExamples {
		c.f.Violations = append(c.f.Violations, Violation{Invariant: inv, Detail: fmt.Sprintf(format, args...)})
	}
}

// Check reads the tables under prefix after a round of plan and proves
// the invariants. staleAfter is the round's stale threshold: an owner
// silent for longer is dead. It returns an error only when it could not
// read; broken invariants are Findings.Violations.
func Check(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, plan Plan, staleAfter time.Duration) (*Findings, error) {
	c := &checker{db: db, d: d, n: migrations.NamesFor(prefix), audit: auditTable(prefix), prefix: prefix, plan: plan, stale: staleAfter,
		f: &Findings{Items: map[core.State]int64{}, History: map[string]int64{}, ByWorker: map[int]int64{}}, counts: map[string]int{}}
	for _, step := range []func(context.Context) error{c.items, c.units, c.barriers, c.owners, c.attempts, c.flow} {
		if err := step(ctx); err != nil {
			return nil, fmt.Errorf("chaos: check: %w", err)
		}
	}
	for inv, n := range c.counts {
		if n > maxExamples {
			c.f.Violations = append(c.f.Violations, Violation{Invariant: inv, Detail: fmt.Sprintf("... and %d more", n-maxExamples)})
		}
	}
	return c.f, nil
}

// count runs a query of one integer.
func (c *checker) count(ctx context.Context, query string, args ...any) (int64, error) {
	var n sql.NullInt64
	if err := c.db.QueryRowContext(ctx, c.d.Rebind(query), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", query, err)
	}
	return n.Int64, nil
}

// each runs query and calls fn with each row's scanner.
func (c *checker) each(ctx context.Context, query string, fn func(scan func(...any) error) error, args ...any) error {
	rows, err := c.db.QueryContext(ctx, c.d.Rebind(query), args...)
	if err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return fmt.Errorf("%s: %w", query, err)
		}
	}
	return rows.Err()
}

// items: every item reached a terminal state, and none was dead-lettered
// or cancelled (nothing in the workload should be). The rows a worker
// killed while proving that claims skip locked rows left in the probe's
// queue are not the workload's: the next probe removes them once they are
// old (skipprobe.LeftoverAge), and no claim can take them.
func (c *checker) items(ctx context.Context) error {
	notProbe := " WHERE queue <> '" + skipprobe.Queue + "'"
	err := c.each(ctx, "SELECT state, COUNT(*) FROM "+c.n.Items+notProbe+" GROUP BY state", func(scan func(...any) error) error {
		var s string
		var n int64
		if err := scan(&s, &n); err != nil {
			return err
		}
		c.f.Items[core.State(s)] = n
		return nil
	})
	if err != nil {
		return err
	}
	return c.each(ctx, "SELECT kind, unique_key, state, last_error FROM "+c.n.Items+notProbe+" AND state <> 'completed' ORDER BY kind, unique_key"+c.d.Limit(maxExamples+1),
		func(scan func(...any) error) error {
			var kind, key, state, lastErr sql.NullString
			if err := scan(&kind, &key, &state, &lastErr); err != nil {
				return err
			}
			c.violate(InvTerminal, "a %s item (key %q) is %s%s", kind.String, key.String, state.String, errSuffix(lastErr.String))
			return nil
		})
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	if len(e) > 200 {
		e = e[:200] + "..."
	}
	return ", last error: " + e
}

// units reads the audit in unit order: every unit of the plan audited
// exactly once, joins that saw every child, planned failures retried,
// and as many audited units of each kind as completed items.
func (c *checker) units(ctx context.Context) error {
	p := c.plan
	steps := make([]bool, p.chains()*p.ChainSteps)
	children := make([]bool, p.fanouts()*p.Children)
	joins := make([]bool, p.fanouts())
	flows := make([]bool, p.gens()*p.flowUnits())
	audited := map[string]int64{}
	var unit, kind string
	var rows int64
	tokens := map[string]bool{}
	var attempt int
	var seen, total int64
	flush := func() {
		if rows == 0 {
			return
		}
		audited[kind]++
		if rows > 1 {
			if len(tokens) > 1 {
				c.violate(InvExactlyOnce, "%s completed %d times, by %d holders", unit, rows, len(tokens))
			} else {
				c.violate(InvExactlyOnce, "%s's fenced effect written %d times by one holder", unit, rows)
			}
		}
		c.mark(unit, steps, children, joins, flows, attempt, seen, total)
	}
	err := c.each(ctx, "SELECT unit, kind, token, attempt, seen, total, worker FROM "+c.audit+" ORDER BY unit", func(scan func(...any) error) error {
		var u, k, tok string
		var a, w int
		var s, t int64
		if err := scan(&u, &k, &tok, &a, &s, &t, &w); err != nil {
			return err
		}
		c.f.ByWorker[w]++
		if u != unit {
			flush()
			unit, kind, rows, tokens = u, k, 0, map[string]bool{}
			attempt, seen, total = a, s, t
		}
		rows++
		tokens[tok] = true
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	for i, ok := range steps {
		if !ok {
			c.violate(InvExactlyOnce, "%s was never completed (lost)", stepUnit(i/p.ChainSteps, i%p.ChainSteps))
		}
	}
	for i, ok := range children {
		if !ok && !p.Batched {
			c.violate(InvExactlyOnce, "%s was never completed (lost)", childUnit(i/p.Children, i%p.Children))
		}
	}
	for i, ok := range joins {
		if !ok {
			c.violate(InvExactlyOnce, "%s was never completed (lost)", joinUnit(i))
		}
	}
	for i, ok := range flows {
		if !ok {
			c.violate(InvExactlyOnce, "%s was never completed (lost)", p.flowUnitAt(i))
		}
	}
	completed := map[string]int64{}
	err = c.each(ctx, "SELECT kind, COUNT(*) FROM "+c.n.Items+" WHERE state = 'completed' GROUP BY kind", func(scan func(...any) error) error {
		var k string
		var n int64
		if err := scan(&k, &n); err != nil {
			return err
		}
		completed[k] = n
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range []string{kindStep, kindChild, kindJoin, kindTick, kindFlow} {
		if k == kindChild && p.Batched {
			// Batched children leave no audit: count them instead.
			if want := int64(p.fanouts()) * int64(p.Children); completed[k] != want || audited[k] != 0 {
				c.violate(InvExactlyOnce, "%d children completed (%d audited), want %d", completed[k], audited[k], want)
			}
			continue
		}
		if completed[k] != audited[k] {
			c.violate(InvExactlyOnce, "%d %s items completed but %d units audited: a completion without its fenced effect, or the reverse", completed[k], k, audited[k])
		}
	}
	if completed[kindParent] != int64(p.fanouts()) {
		c.violate(InvExactlyOnce, "%d parents completed, want %d", completed[kindParent], p.fanouts())
	}
	c.f.Ticks = audited[kindTick]
	c.f.Children = completed[kindChild]
	return nil
}

// mark records one audited unit, checking what its row says.
func (c *checker) mark(unit string, steps, children, joins, flows []bool, attempt int, seen, total int64) {
	p := c.plan
	part := strings.Split(unit, "/")
	num := func(i, below int) (int, bool) {
		if i >= len(part) {
			return 0, false
		}
		n, err := strconv.Atoi(part[i])
		return n, err == nil && n >= 0 && n < below
	}
	ok := false
	switch part[0] {
	case "tick":
		return
	case "step":
		ch, ok1 := num(1, p.chains())
		s, ok2 := num(2, p.ChainSteps)
		if ok = ok1 && ok2 && len(part) == 3; ok {
			steps[ch*p.ChainSteps+s] = true
		}
	case "child":
		f, ok1 := num(1, p.fanouts())
		n, ok2 := num(2, p.Children)
		if ok = ok1 && ok2 && len(part) == 3; ok {
			children[f*p.Children+n] = true
		}
	case "flow", "rate":
		var i int
		if i, ok = p.flowIndex(part); ok {
			flows[i] = true
		}
	case "join":
		f, ok1 := num(1, p.fanouts())
		if ok = ok1 && len(part) == 2; ok {
			joins[f] = true
			if seen != int64(p.Children) || total != p.joinTotal() {
				c.violate(InvBarrier, "%s saw %d completed children summing to %d, want %d summing to %d", unit, seen, total, p.Children, p.joinTotal())
			}
		}
	}
	if !ok {
		c.violate(InvExactlyOnce, "%s is not a unit of the plan", unit)
		return
	}
	c.f.Units++
	if p.failsFirst(unit) {
		if attempt < 2 {
			c.violate(InvAttempts, "%s was planned to fail its first attempt but completed on attempt %d", unit, attempt)
		} else {
			c.f.Retried++
		}
	}
}

// barriers: one barrier per fan-out, each fired, its counts complete and
// matching its completed children, and exactly one join item for it.
func (c *checker) barriers(ctx context.Context) error {
	b, i := c.n.Barriers, c.n.Items
	var err error
	if c.f.Barriers, err = c.count(ctx, "SELECT COUNT(*) FROM "+b); err != nil {
		return err
	}
	if c.f.Fired, err = c.count(ctx, "SELECT COUNT(*) FROM "+b+" WHERE fired_at IS NOT NULL"); err != nil {
		return err
	}
	if c.f.Barriers != int64(c.plan.fanouts()) {
		c.violate(InvBarrier, "%d barriers, want one per fan-out (%d)", c.f.Barriers, c.plan.fanouts())
	}
	if c.f.Fired != c.f.Barriers {
		c.violate(InvBarrier, "%d of %d barriers never fired", c.f.Barriers-c.f.Fired, c.f.Barriers)
	}
	checks := []struct{ query, what string }{
		{"SELECT COUNT(*) FROM " + b + " WHERE expected <> ? OR arrived + failed <> expected OR failed <> 0",
			"barriers whose counts are not %d children all arrived"},
		{"SELECT COUNT(*) FROM " + b + " b WHERE b.arrived <> (SELECT COUNT(*) FROM " + i + " c WHERE c.barrier_id = b.id AND c.state = 'completed')",
			"barriers whose arrivals differ from their completed children"},
		{"SELECT COUNT(*) FROM " + b + " b WHERE b.fired_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + i + " j WHERE j.id = b.join_item_id AND j.join_barrier_id = b.id)",
			"fired barriers without their join item"},
		{"SELECT COUNT(*) FROM (SELECT join_barrier_id FROM " + i + " WHERE join_barrier_id IS NOT NULL GROUP BY join_barrier_id HAVING COUNT(*) > 1) d",
			"barriers with more than one join item: fired twice"},
		{"SELECT COUNT(*) FROM " + i + " j WHERE j.join_barrier_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + b + " b WHERE b.id = j.join_barrier_id AND b.fired_at IS NOT NULL)",
			"join items of a barrier that never fired"},
	}
	for _, ch := range checks {
		var args []any
		what := ch.what
		if strings.Contains(ch.query, "?") {
			args = append(args, c.plan.Children)
			what = fmt.Sprintf(what, c.plan.Children)
		}
		n, err := c.count(ctx, ch.query, args...)
		if err != nil {
			return err
		}
		if n > 0 {
			c.violate(InvBarrier, "%d %s", n, what)
		}
	}
	return nil
}

// owners: no item is claimed by an owner that is gone or silent for
// longer than the stale threshold, on the database clock.
func (c *checker) owners(ctx context.Context) error {
	n, err := c.count(ctx, "SELECT COUNT(*) FROM "+c.n.Items+" i WHERE i.state = 'claimed' AND NOT EXISTS (SELECT 1 FROM "+c.n.Processes+
		" p WHERE p.id = i.claimed_by AND "+c.d.AddMicros("p.last_heartbeat_at")+" > "+c.d.Now(0)+")", c.stale.Microseconds())
	if err != nil {
		return err
	}
	if n > 0 {
		c.violate(InvOwner, "%d items claimed by owners that are gone or silent for more than %v", n, c.stale)
	}
	return nil
}

// attempts: each item's crash count is its crash rows in the history,
// and a completed item's attempt is one more than its other rows.
func (c *checker) attempts(ctx context.Context) error {
	a, i := c.n.Attempts, c.n.Items
	err := c.each(ctx, "SELECT outcome, COUNT(*) FROM "+a+" GROUP BY outcome", func(scan func(...any) error) error {
		var o string
		var n int64
		if err := scan(&o, &n); err != nil {
			return err
		}
		c.f.History[o] = n
		return nil
	})
	if err != nil {
		return err
	}
	if c.f.Crashes, err = c.count(ctx, "SELECT SUM(crash_count) FROM "+i); err != nil {
		return err
	}
	if c.f.Crashes != c.f.History[migrations.OutcomeCrash] {
		c.violate(InvAttempts, "items count %d crashes in all, their histories %d", c.f.Crashes, c.f.History[migrations.OutcomeCrash])
	}
	checks := []struct{ query, what string }{
		{"SELECT COUNT(*) FROM " + i + " i WHERE i.crash_count <> (SELECT COUNT(*) FROM " + a + " a WHERE a.item_id = i.id AND a.outcome = '" + migrations.OutcomeCrash + "')",
			"items whose crash count differs from the crashes in their history"},
		{"SELECT COUNT(*) FROM " + i + " i WHERE i.state = 'completed' AND i.attempt <> 1 + (SELECT COUNT(*) FROM " + a + " a WHERE a.item_id = i.id AND a.outcome <> '" + migrations.OutcomeCrash + "')",
			"completed items whose attempt is not one more than the failures and timeouts in their history"},
	}
	for _, ch := range checks {
		n, err := c.count(ctx, ch.query)
		if err != nil {
			return err
		}
		if n > 0 {
			c.violate(InvAttempts, "%d %s", n, ch.what)
		}
	}
	return nil
}

// sortedStates lists the states in f.Items, most common first.
func (f *Findings) sortedStates() []core.State {
	var s []core.State
	for k := range f.Items {
		s = append(s, k)
	}
	sort.Slice(s, func(a, b int) bool {
		return f.Items[s[a]] > f.Items[s[b]] || f.Items[s[a]] == f.Items[s[b]] && s[a] < s[b]
	})
	return s
}

// flow proves the limits of the keyed items from the flow audit: no key
// under the concurrency limit had more claims at once than the limit, and
// no rate-limited key began more than Rate + Burst claims within one
// period of its rate, on the database clock.
func (c *checker) flow(ctx context.Context) error {
	p := c.plan
	if p.FlowKeys == 0 && p.RateKeys == 0 {
		return nil
	}
	runs, unended, err := flowRuns(ctx, c.db, c.d, c.prefix)
	if err != nil {
		return err
	}
	c.f.FlowRuns, c.f.Unended = len(runs)+unended, unended
	var limited, rated []flowcheck.Run
	for _, r := range runs {
		if strings.HasPrefix(r.Key, rateKeyPrefix) {
			rated = append(rated, r)
		} else {
			limited = append(limited, r)
		}
	}
	for _, o := range flowcheck.Overlaps(limited) {
		c.f.FlowPeak = max(c.f.FlowPeak, o.N)
		if o.N > p.FlowLimit {
			c.violate(InvConcurrency, "%v, over its limit of %d", o, p.FlowLimit)
		}
	}
	if p.RateKeys > 0 {
		for _, w := range flowcheck.Windows(rated, p.RatePer) {
			c.f.RatePeak = max(c.f.RatePeak, w.N)
			if bound := p.Rate + p.flowBurst(); w.N > bound {
				c.violate(InvRate, "%v, over rate %d plus burst %d", w, p.Rate, p.flowBurst())
			}
		}
	}
	return nil
}
