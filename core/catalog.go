package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// Statement is one statement a Store can send, rendered exactly as the store
// sends it on its dialect: tables named under the prefix, the clock and lock
// clause expanded, placeholders rebound.
type Statement struct {
	// Name names the template in the core ("lost", "item.get", "claim",
	// ...). One template may render to several statements at one size
	// (the dialect's claim, where it takes more than one).
	Name string
	// Size is the count the statement was rendered at (rows of an INSERT,
	// values of an IN list, branches of a CASE, a LIMIT): 0 for a template
	// that takes none.
	Size int
	// SQL is the text as sent.
	SQL string
}

// LargestSize, passed to Catalog.Statements, renders each size-dependent
// statement at the largest size the store sends it at on the dialect
// (within the bind-parameter and IN-list limits, and the batch sizes the
// store splits its work into).
const LargestSize = -1

// Catalog is the enumeration of every statement template the core sends,
// for one dialect and one store's options. It exists so that a test can see
// every statement the store can send (to check it with a database's
// grammar, say), and tell whether a statement recorded on the wire is one
// of them. Statements the dialect writes itself (its Check, Begin, Lock and
// DDL) and the migrations package's are not in it; the claim statements
// are, as the dialect's Claim writes them, and so are the skip-locked
// probe's (ProveSkipLocked), which the migrator sends too.
//
// A Catalog is safe for concurrent use. It never touches a database: a
// dialect's Claim runs against a stand-in connection that records what it
// is sent.
type Catalog struct {
	templates []storesql.Template
	shapes    []shape // of templates, in order
	mu        sync.Mutex
	matched   map[string]match
}

type match struct {
	st Statement
	ok bool
}

// NewCatalog returns the catalog of the statements a store opened with d and
// opts sends. Only opts.Prefix and opts.ClockOffset change the text.
func NewCatalog(d dialect.Dialect, opts Options) (*Catalog, error) {
	if d == nil {
		return nil, invalid("dialect", "nil dialect")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := migrations.ValidatePrefix(opts.Prefix); err != nil {
		return nil, &InputError{Field: "Prefix", Reason: err.Error()}
	}
	s := &Store{d: d, caps: d.Capabilities(), opts: opts, log: opts.Logger, names: migrations.NamesFor(opts.Prefix)}
	s.lister, _ = d.(dialect.UUIDLister)
	s.purger, _ = d.(dialect.Purger)
	s.expand = strings.NewReplacer(expansions(d, s.names, opts.ClockOffset)...)
	s.claimFilter, s.claimSet = s.expand.Replace(claimFilter), s.expand.Replace(claimSet)
	s.handle = &storesql.Handle{Dialect: d, SQL: s.sql, Read: s.read}
	c := &Catalog{templates: s.templates(), matched: map[string]match{}}
	if more, ok := storesql.Exposed[storesql.BrowseTemplates[Item, Run, Barrier]](); ok {
		c.templates = append(c.templates, more(exposedStore(s))...)
	}
	for _, t := range c.templates {
		c.shapes = append(c.shapes, shapeOf(t))
	}
	return c, nil
}

// templates are the entries of catalog that s sends, rendered as s
// renders them.
func (s *Store) templates() []storesql.Template {
	var out []storesql.Template
	for _, e := range catalog {
		if !e.sends(s) {
			continue
		}
		t := storesql.Template{Name: e.name, Render: func(n int) []string { return e.render(s, n) }}
		if e.max != nil {
			t.Largest = e.max(s)
		}
		out = append(out, t)
	}
	return out
}

// Statements renders every template: each fixed one once, and each
// size-dependent one at every size given (LargestSize for its largest; a
// size above a template's largest renders the largest). With no sizes, it
// renders them at 1, 2 and LargestSize. Sizes below 1 other than
// LargestSize are an *InputError.
func (c *Catalog) Statements(sizes ...int) ([]Statement, error) {
	if len(sizes) == 0 {
		sizes = []int{1, 2, LargestSize}
	}
	for i, n := range sizes {
		if n < 1 && n != LargestSize {
			return nil, invalid(fmt.Sprintf("sizes[%d]", i), "%d: a size is at least 1, or LargestSize", n)
		}
	}
	var out []Statement
	for _, e := range c.templates {
		if e.Largest == 0 {
			for _, q := range e.Render(0) {
				out = append(out, Statement{Name: e.Name, SQL: q})
			}
			continue
		}
		largest := e.Largest
		var done []int
		for _, n := range sizes {
			if n == LargestSize || n > largest {
				n = largest
			}
			if slices.Contains(done, n) {
				continue
			}
			done = append(done, n)
			for _, q := range e.Render(n) {
				out = append(out, Statement{Name: e.Name, Size: n, SQL: q})
			}
		}
	}
	return out, nil
}

// Match returns the catalog statement whose text is exactly sql, at
// whatever size, and whether there is one. A statement of the dialect's own
// (Check, Begin, DDL) or of the migrations package is not matched. The
// answer for each text is remembered: Match is for tests that look up the
// statements of a run, many times each.
func (c *Catalog) Match(sql string) (Statement, bool) {
	c.mu.Lock()
	m, seen := c.matched[sql]
	c.mu.Unlock()
	if seen {
		return m.st, m.ok
	}
	m.st, m.ok = c.find(sql)
	c.mu.Lock()
	c.matched[sql] = m
	c.mu.Unlock()
	return m.st, m.ok
}

func (c *Catalog) find(sql string) (Statement, bool) {
	for k, e := range c.templates {
		if e.Largest == 0 {
			if slices.Contains(c.shapes[k].fixed, sql) {
				return Statement{Name: e.Name, SQL: sql}, true
			}
			continue
		}
		for _, n := range c.sizesFor(k, sql) {
			if slices.Contains(e.Render(n), sql) {
				return Statement{Name: e.Name, Size: n, SQL: sql}, true
			}
		}
	}
	return Statement{}, false
}

// shape is what an entry's renderings share, to pass over the entries a
// statement cannot be cheaply: a fixed entry's statements, or, for each
// statement a sized one renders, the text before and after what its size
// changes.
type shape struct {
	fixed    []string
	prefixes []string
	suffixes []string
	largest  int
}

func shapeOf(e storesql.Template) shape {
	if e.Largest == 0 {
		return shape{fixed: e.Render(0)}
	}
	one, two := e.Render(1), e.Render(2)
	sh := shape{largest: e.Largest}
	for i := range min(len(one), len(two)) {
		p := sharedPrefix(one[i], two[i])
		q := sharedSuffix(one[i][p:], two[i][p:])
		sh.prefixes = append(sh.prefixes, one[i][:p])
		sh.suffixes = append(sh.suffixes, one[i][len(one[i])-q:])
	}
	return sh
}

// sizesFor are the sizes at which entry k might render sql: the numbers
// written in it (a LIMIT), and, for each statement the entry renders whose
// shape sql has, the size at which that statement is as long as sql (a
// statement grows with its size).
func (c *Catalog) sizesFor(k int, sql string) []int {
	e, sh := c.templates[k], c.shapes[k]
	var out []int
	for i := range sh.prefixes {
		if len(sql) < len(sh.prefixes[i])+len(sh.suffixes[i]) || !strings.HasPrefix(sql, sh.prefixes[i]) || !strings.HasSuffix(sql, sh.suffixes[i]) {
			continue
		}
		if len(out) == 0 {
			for _, n := range countsIn(sql) {
				if n >= 1 && n <= sh.largest && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
		length := func(n int) int {
			qs := e.Render(n)
			if i >= len(qs) {
				return -1
			}
			return len(qs[i])
		}
		// The smallest n whose statement is at least as long as sql.
		hi := 1
		for hi < sh.largest && length(hi) < len(sql) {
			hi = min(2*hi, sh.largest)
		}
		lo := max(1, hi/2)
		for lo < hi {
			mid := (lo + hi) / 2
			if length(mid) < len(sql) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if !slices.Contains(out, hi) {
			out = append(out, hi)
		}
	}
	return out
}

// countsIn are the numbers written in sql as words of their own (after a
// space or a parenthesis, as a LIMIT's), not those of numbered
// placeholders ($1, :1), which would make every placeholder a candidate.
func countsIn(sql string) []int {
	var out []int
	for i := 0; i < len(sql); i++ {
		if sql[i] < '0' || sql[i] > '9' || (i > 0 && sql[i-1] != ' ' && sql[i-1] != '(') {
			continue
		}
		j := i
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(sql[i:j]); err == nil {
			out = append(out, n)
		}
		i = j
	}
	return out
}

func sharedSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// entry is one template of the catalog: render gives the statements it
// sends at size n (0 for a fixed one, whose max is nil).
type entry struct {
	name   string
	max    func(s *Store) int
	render func(s *Store, n int) []string
	// only, when set, says whether the store sends the statement on a
	// database of these capabilities (one completion path or the other).
	only func(dialect.Capabilities) bool
	// when, when set, says the same of the store (the dialect's optional
	// capabilities).
	when func(s *Store) bool
}

// sends reports whether s sends e's statements at all.
func (e entry) sends(s *Store) bool {
	return (e.only == nil || e.only(s.caps)) && (e.when == nil || e.when(s))
}

// onStore restricts e to the stores of which when holds.
func (e entry) onStore(when func(s *Store) bool) entry {
	e.when = when
	return e
}

func purging(s *Store) bool    { return s.purger != nil }
func notPurging(s *Store) bool { return s.purger == nil }

func returning(c dialect.Capabilities) bool    { return c.ReturningUpdate }
func notReturning(c dialect.Capabilities) bool { return !c.ReturningUpdate }

// on restricts e to the databases of which only holds.
func (e entry) on(only func(dialect.Capabilities) bool) entry {
	e.only = only
	return e
}

// fixed is an entry for a constant template sent through Store.sql.
func fixed(name, q string) entry {
	return entry{name: name, render: func(s *Store, _ int) []string { return []string{s.sql(q)} }}
}

// sized is an entry for a template of n sent through Store.sql.
func sized(name string, largest func(s *Store) int, q func(s *Store, n int) string) entry {
	return entry{name: name, max: largest, render: func(s *Store, n int) []string { return []string{s.sql(q(s, n))} }}
}

func pageMax(*Store) int  { return maxPage }
func limitMax(*Store) int { return MaxClaimLimit }
func (s *Store) keysLookupMax() int {
	// A lookup follows one INSERT: its keys are at most that INSERT's rows.
	return min(s.keysMax(), s.insertRowsMax())
}

// catalog is every template the core sends. Adding a statement to the core
// means adding its entry here: see statements.go.
var catalog = []entry{
	{name: "now", render: func(s *Store, _ int) []string { return []string{s.sql(s.nowSQL())} }},
	fixed("item.get", qItemGet),
	fixed("item.lock", qItemLock),
	fixed("item.cancel", qItemCancel),
	fixed("item.revive", qItemRevive),
	fixed("item.barrier", qItemBarrier),
	fixed("item.leave-barrier", qItemLeaveBarrier),
	fixed("counts.all", qCountsAll),
	fixed("counts.queue", qCountsQueue),
	fixed("claim.lock", qClaimLock),
	fixed("claim.lock-within", qClaimLockWithin),
	fixed("fail.dead", qFailDead),
	fixed("fail.retry", qFailRetry),
	fixed("release", qRelease),
	fixed("owner.exists", qOwnerExists),
	fixed("owner.register", qOwnerRegister),
	fixed("owner.heartbeat", qOwnerHeartbeat),
	fixed("owner.release-items", qOwnerReleaseItems),
	fixed("owner.delete", qOwnerDelete),
	fixed("reap.owners", qReapOwners),
	fixed("barrier.unfail", qBarrierUnfail),
	fixed("barrier.by-name", qBarrierByName),
	fixed("barrier.lock-dispatch", qBarrierLockDispatch),
	fixed("barrier.dispatched", qBarrierDispatched),
	fixed("barrier.lock-sealed", qBarrierLockSealed),
	fixed("barrier.expect-one", qBarrierExpectOne),
	fixed("barrier.seal", qBarrierSeal),
	fixed("barrier.hand-over", qBarrierHandOver),
	fixed("barrier.arrive", qBarrierArrive).on(notReturning),
	fixed("barrier.arrive-due", qBarrierArriveDue).on(returning),
	fixed("barrier.fire", qBarrierFire),
	fixed("barrier.join-spec", qBarrierJoinSpec),
	fixed("barrier.get", qBarrierGet),
	fixed("join.insert", qJoinInsert),
	fixed("join.insert-dead", qJoinDead),
	fixed("join.insert-cancelled", qJoinCancelled),
	{name: "barrier.earlier-parent", render: func(s *Store, _ int) []string { return []string{s.sql(qEarlierParent(s.d))} }},
	{name: "barrier.open", render: func(s *Store, _ int) []string { return []string{s.barrierOpenSQL()} }},

	{name: "enqueue.now", max: (*Store).insertRowsMax, render: func(s *Store, n int) []string { return []string{s.insertSQL(insertRowNow, n)} }},
	{name: "enqueue.later", max: (*Store).insertRowsMax, render: func(s *Store, n int) []string { return []string{s.insertSQL(insertRowLater, n)} }},
	sized("enqueue.existing", (*Store).keysLookupMax, func(_ *Store, n int) string { return qExisting(n, false) }),
	sized("enqueue.existing-child", (*Store).keysLookupMax, func(_ *Store, n int) string { return qExisting(n, true) }),
	{name: "claim", max: (*Store).claimMax, render: (*Store).claimStatements},
	// The skip-locked probe (ProveSkipLocked, and the migrator's): its rows
	// and its claim, on the databases with row locks.
	{name: "probe.insert", render: func(s *Store, _ int) []string { return []string{skipprobe.Insert(s.d, s.names.Items)} }, only: rowLocks},
	{name: "probe.claim", render: (*Store).probeClaimStatements, only: rowLocks},
	{name: "probe.delete", render: func(s *Store, _ int) []string { return []string{skipprobe.Delete(s.d, s.names.Items)} }, only: rowLocks},
	{name: "probe.leftovers", render: func(s *Store, _ int) []string { return []string{skipprobe.Leftovers(s.d, s.names.Items)} }, only: rowLocks},
	{name: "probe.delete-leftover", render: func(s *Store, _ int) []string { return []string{skipprobe.DeleteLeftover(s.d, s.names.Items)} }, only: rowLocks},
	sized("complete.one-result", (*Store).completionMax, func(s *Store, n int) string { return s.qComplete(n, true, false) }).on(notReturning),
	sized("complete.one-result-returning", (*Store).completionMax, func(s *Store, n int) string { return s.qComplete(n, true, true) }).on(returning),
	sized("complete.each-result", (*Store).completionMax, func(s *Store, n int) string { return s.qComplete(n, false, false) }).on(notReturning),
	sized("complete.each-result-returning", (*Store).completionMax, func(s *Store, n int) string { return s.qComplete(n, false, true) }).on(returning),
	sized("held.lock", (*Store).extendMax, func(s *Store, n int) string { return s.qHeldLock(n) }).on(notReturning),
	sized("held.completed", (*Store).completionMax, func(s *Store, n int) string { return s.qHeldCompleted(n) }),
	sized("extend", (*Store).extendMax, func(s *Store, n int) string { return s.qExtend(n, false) }).on(notReturning),
	sized("extend-returning", (*Store).extendMax, func(s *Store, n int) string { return s.qExtend(n, true) }).on(returning),
	sized("lost", (*Store).lostMax, func(_ *Store, n int) string { return qLost(n) }),
	sized("barrier.unfired", pageMax, func(s *Store, n int) string { return qUnfired(s.d, n) }),
	sized("barrier.children", pageMax, func(s *Store, n int) string { return qChildren(s.d, n) }),
	sized("reap.orphans", limitMax, func(s *Store, n int) string { return qReapable(s.d, reapOrphan, n) }),
	sized("reap.expired", limitMax, func(s *Store, n int) string { return qReapable(s.d, reapExpired, n) }),
	sized("reap.lock", (*Store).releaseMax, func(_ *Store, n int) string { return qReapLock(n) }),
	sized("reap.crash-retry", (*Store).releaseMax, func(_ *Store, n int) string { return qUpdateIDs(reapCrashRetry, n) }),
	sized("reap.crash-dead", (*Store).releaseMax, func(_ *Store, n int) string { return qUpdateIDs(reapCrashDead, n) }),
	sized("reap.timeout-retry", (*Store).releaseMax, func(_ *Store, n int) string { return qUpdateIDs(reapTimeoutRetry(n), n) }),
	sized("reap.timeout-dead", (*Store).releaseMax, func(_ *Store, n int) string { return qUpdateIDs(reapTimeoutDead, n) }),
	sized("purge.barriers.select", limitMax, func(s *Store, n int) string { return qPurgeSelect(s.d, "{barriers}", purgeBarrierGone, "", n) }),
	sized("purge.items.select", limitMax, func(s *Store, n int) string { return qPurgeSelect(s.d, "{items}", purgeItemRead, purgeItemOrder, n) }).onStore(notPurging),
	sized("purge.barriers.delete", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qPurgeDelete("{barriers}", purgeBarrierGone, n) }),
	sized("purge.items.delete", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qPurgeDelete("{items}", purgeItemGone, n) }).onStore(notPurging),
	{name: "purge.items.one-statement", max: (*Store).purgeDeleteMax, when: purging, render: func(s *Store, n int) []string {
		if s.purger == nil {
			return nil
		}
		q, _ := s.qPurgeItems(n, 0)
		return []string{q}
	}},

	{name: "queue.open", render: func(s *Store, _ int) []string { return []string{s.queueOpenSQL()} }},
	fixed("queue.set-paused", qQueueSetPause),
	fixed("queue.list", qQueueList),
	fixed("attempts.list", qAttemptsList),
	sized("attempts.insert", (*Store).releaseMax, func(_ *Store, n int) string { return qAttemptsInsert(n) }),
	sized("attempts.orphaned", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qAttemptsOrphaned(n) }).onStore(notPurging),
	fixed("schedule.read", qScheduleRead),
	{name: "schedule.open", render: func(s *Store, _ int) []string { return []string{s.scheduleOpenSQL()} }},
	fixed("schedule.advance", qScheduleAdvance),

	{name: "run.open", render: func(s *Store, _ int) []string { return []string{s.runOpenSQL()} }},
	fixed("run.get", qRunGet),
	fixed("run.by-key", qRunByKey),
	fixed("run.lock", qRunLock),
	fixed("run.complete", qRunComplete),
	fixed("run.halt", qRunHalt),
	fixed("run.resume", qRunResume),
	fixed("run.cancel", qRunCancel),
	sized("run.items", pageMax, func(s *Store, n int) string { return qRunItems(s.d, n) }),
	fixed("item.run", qItemRun),
	fixed("item.wait", qItemWait),
	fixed("item.wait-clear", qItemWaitClear),
	{name: "signal.open", render: func(s *Store, _ int) []string { return []string{s.signalOpenSQL()} }},
	fixed("signal.by-key", qSignalByKey),
	{name: "signal.of-run", render: func(s *Store, _ int) []string { return []string{s.sql(qSignalsOfRun(s.d, maxPage))} }},
	fixed("signal.untaken", qSignalsUntaken),
	fixed("signal.take", qSignalTake),
	fixed("signal.waiters", qWaiters),
	sized("signal.wake", (*Store).wakeMax, func(_ *Store, n int) string { return qWake(n) }),
	fixed("await.deadline", qAwaitDeadline),
	fixed("await.no-deadline", qAwaitNoDeadline),
	fixed("await.again", qAwaitAgain),
	sized("run.exist", (*Store).runsMax, func(_ *Store, n int) string { return qRunsExisting(n) }),
	sized("run.of-items", (*Store).releaseMax, func(_ *Store, n int) string { return qRunOfItems(n) }),
	sized("run.unfinished", (*Store).releaseMax, func(s *Store, n int) string { return qUnfinishedOfRun(s.d, n) }),
	sized("run.lock-unfinished", (*Store).releaseMax, func(_ *Store, n int) string { return qLockUnfinished(n) }),
	sized("run.cancel-items", (*Store).releaseMax, func(_ *Store, n int) string { return qUpdateIDs(itemCancelSet, n) }),
	sized("run.dead-page", (*Store).releaseMax, func(s *Store, n int) string { return qDeadPageOfRun(s.d, n) }),
	fixed("run.dead-item", qDeadOfRun),
	fixed("barrier.fired-at", qBarrierFiredAt),
	fixed("revive.lock-barrier", qReviveLockBarrier),
	fixed("revive.children", qReviveChildren),
	fixed("barrier.rearm", qBarrierRearm),
}

// wakeMax is the most waiters one statement of Signal wakes.
func (s *Store) wakeMax() int { return s.inListMax(1) }

// claimStatements are the statements the dialect's Claim sends for a
// claim of n rows: once with n rows to take, and once with none (a
// dialect that claims in several steps may send other statements then).
func (s *Store) claimStatements(n int) []string {
	p := ClaimParams{Queue: "q", Owner: uuid.Nil, Limit: n, Lease: time.Minute}
	return recordClaims(s.d, s.claimSpec(p, uuid.Nil))
}

// probeClaimStatements are the statements of the skip-locked probe's
// claim of one row, as the migrator sends them too (with the claim's
// index whatever the store's).
func (s *Store) probeClaimStatements(int) []string {
	return recordClaims(s.d, skipprobe.Spec(s.d, s.names.Items, migrations.ClaimIndex(s.opts.Prefix), 0))
}

func rowLocks(c dialect.Capabilities) bool { return !c.SingleWriter }

// recordClaims are the statements d's Claim sends for spec: once with
// spec.Limit rows to take, and once with none.
func recordClaims(d dialect.Dialect, spec dialect.ClaimSpec) []string {
	var out []string
	for _, rows := range []int{spec.Limit, 0} {
		for _, q := range recordClaim(d, spec, rows) {
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// recordClaim runs d's Claim for spec against a stand-in connection on
// which every query returns rows rows, and returns the statements sent.
func recordClaim(d dialect.Dialect, spec dialect.ClaimSpec, rows int) []string {
	r := &recorder{rows: rows}
	db := openRecorder(r)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	if rs, err := d.Claim(ctx, conn, spec); err == nil {
		for rs.Next() {
		}
		rs.Close()
	}
	return r.sent()
}
