package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// catalogTemplates are the templates a store opened with d and opts sends,
// rendered as it renders them, and the stand-in store they render on
// (no database behind it), for the statement catalog (internal/catalog).
// claims records what the dialect's Claim sends. Only opts.Prefix and
// opts.ClockOffset change the text.
func catalogTemplates(d dialect.Dialect, opts Options, claims storesql.ClaimRecorder) (*storesql.Store[Item, Run, Barrier], []storesql.Template, error) {
	if d == nil {
		return nil, nil, invalid("dialect", "nil dialect")
	}
	if err := opts.validate(); err != nil {
		return nil, nil, err
	}
	opts = opts.withDefaults()
	if err := migrations.ValidatePrefix(opts.Prefix); err != nil {
		return nil, nil, &InputError{Field: "Prefix", Reason: err.Error()}
	}
	s := &Store{d: d, caps: d.Capabilities(), opts: opts, log: opts.Logger, names: migrations.NamesFor(opts.Prefix), claims: claims}
	s.lister, _ = dialect.As[dialect.UUIDLister](d)
	s.keys, _ = dialect.As[dialect.KeyLister](d)
	s.keyLocks, _ = dialect.As[dialect.KeyLockLister](d)
	s.locker, _ = dialect.As[dialect.RowLocker](d)
	s.purger, _ = dialect.As[dialect.Purger](d)
	s.expand = strings.NewReplacer(expansions(d, s.names, opts.ClockOffset)...)
	s.claimFilter, s.claimSet = s.expand.Replace(claimFilter), s.expand.Replace(claimSet)
	s.nextKeysSQL = qNextKeys(s.d)
	s.handle = &storesql.Handle{Dialect: d, SQL: s.sql, Read: s.read}
	return exposedStore(s), s.sentTemplates(), nil
}

// sentTemplates are the entries of templates that s sends, rendered as s
// renders them.
func (s *Store) sentTemplates() []storesql.Template {
	var out []storesql.Template
	for _, e := range templates {
		if !e.sends(s) {
			continue
		}
		t := storesql.Template{Name: e.name, Kinds: e.kinds, Render: func(n int) []string { return e.render(s, n) }}
		if e.max != nil {
			t.Largest = e.max(s)
		}
		out = append(out, t)
	}
	return out
}

// entry is one template the core sends: render gives the statements it
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
	// kinds, when positive, is the statements' second count: the kinds
	// they carry attempt limits for (a claim's ClaimParams.MaxAttempts),
	// or the lanes a claim of keyed items reads (lanes.candidates) or
	// claims the items of (claim.lanes).
	kinds int
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

// templates is every template the core sends. Adding a statement to the
// core means adding its entry here: see statements.go.
var templates = slices.Concat(baseTemplates, claimLimitTemplates(), flowTemplates, laneCandidateTemplates(), laneFuseTemplates(), chosenLimitTemplates())

// claimLimitTemplates are the claim's statements with attempt limits
// (ClaimParams.MaxAttempts), one entry for each count of kinds: the
// statement grows with both the rows taken and the kinds.
func claimLimitTemplates() []entry {
	out := make([]entry, 0, MaxClaimKinds)
	for k := 1; k <= MaxClaimKinds; k++ {
		out = append(out, entry{
			name:   "claim.max-attempts",
			kinds:  k,
			max:    func(s *Store) int { return s.claimMaxWith(k) },
			render: func(s *Store, n int) []string { return s.claimStatementsWith(n, k) },
		})
	}
	return out
}

// baseTemplates are the templates of templates that take no kinds.
var baseTemplates = []entry{
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
	fixed("owner.claimed-lanes", qOwnerClaimedLanes),
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
	fixed("enqueue.release-key", qKeyRelease),
	fixed("schedule.tick-holder", qTickHolder),
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
	sized("complete.one-result-memberless", (*Store).completionMax, func(s *Store, n int) string { return s.qCompleteMemberless(n, true) }),
	sized("complete.each-result-memberless", (*Store).completionMax, func(s *Store, n int) string { return s.qCompleteMemberless(n, false) }),
	sized("complete.one-result-members", (*Store).completionMax, func(s *Store, n int) string { return s.qCompleteMembers(n, true) }),
	sized("complete.each-result-members", (*Store).completionMax, func(s *Store, n int) string { return s.qCompleteMembers(n, false) }),
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
	sized("purge.lanes.select", limitMax, func(s *Store, n int) string { return qPurgeSelect(s.d, "{lanes}", purgeLaneGone, "", n) }),
	sized("purge.lanes.delete", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qPurgeDelete("{lanes}", purgeLaneGone, n) }),
	sized("purge.lanes-left.select", limitMax, func(s *Store, n int) string { return qPurgeSelect(s.d, "{lanes}", purgeLaneLeft, "", n) }),
	sized("purge.lanes-left.delete", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qPurgeDelete("{lanes}", purgeLaneLeft, n) }),
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
	sized("meta.orphaned", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qMetaOrphaned(n) }).onStore(notPurging),
	{name: "meta.insert", max: (*Store).metaInsertMax, render: func(s *Store, n int) []string { return []string{s.metaInsertSQL(n)} }},
	sized("meta.read", (*Store).metaReadMax, func(s *Store, n int) string { return s.qMetaRead(n) }),
	sized("progress.orphaned", (*Store).purgeDeleteMax, func(s *Store, n int) string { return s.qProgressOrphaned(n) }).onStore(notPurging),
	fixed("schedule.read", qScheduleRead),
	{name: "schedule.open", render: func(s *Store, _ int) []string { return []string{s.scheduleOpenSQL()} }},
	fixed("schedule.advance", qScheduleAdvance),
	fixed("schedule.stored-list", qStoredSchedules),
	fixed("schedule.stored-get", qStoredSchedule),
	{name: "schedule.stored-open", render: func(s *Store, _ int) []string { return []string{s.storedScheduleOpenSQL()} }},
	fixed("schedule.stored-set", qStoredScheduleSet),
	fixed("schedule.stored-pause", qStoredSchedulePause),
	fixed("schedule.stored-delete", qStoredScheduleDelete),
	fixed("schedule.stored-advance", qStoredScheduleAdvance),

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
	fixed("runcontext.get", qRunContextGet),
	fixed("runcontext.set", qRunContextSet),
	{name: "runcontext.open", render: func(s *Store, _ int) []string { return []string{s.runContextOpenSQL()} }},
	fixed("progress.get", qProgressGet),
	fixed("progress.set", qProgressSet),
	{name: "progress.open", render: func(s *Store, _ int) []string { return []string{s.progressOpenSQL()} }},
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
func (s *Store) claimStatements(n int) []string { return s.claimStatementsWith(n, 0) }

// claimStatementsWith are claimStatements for a claim with the attempt
// limits of kinds kinds; their names and limits are bound, not written.
func (s *Store) claimStatementsWith(n, kinds int) []string {
	p := ClaimParams{Queue: "q", Owner: uuid.Nil, Limit: n, Lease: time.Minute}
	if kinds > 0 {
		p.MaxAttempts = make(map[string]int, kinds)
		for k := range kinds {
			p.MaxAttempts[fmt.Sprint("kind", k)] = 1
		}
	}
	return s.claimSpecStatements(s.claimSpec(p, uuid.Nil, n), n, kinds)
}

// claimSpecStatements are the statements a claim of spec (up to n items,
// with the attempt limits of kinds kinds) sends: the dialect's Claim, or
// claimLocked's two.
func (s *Store) claimSpecStatements(spec dialect.ClaimSpec, n, kinds int) []string {
	if s.claimsLocked() {
		return s.claimLockedStatements(spec, n, kinds)
	}
	return s.claims(s.d, spec)
}

// probeClaimStatements are the statements of the skip-locked probe's
// claim of one row, as the migrator sends them too (with the claim's
// index whatever the store's).
func (s *Store) probeClaimStatements(int) []string {
	return s.claims(s.d, skipprobe.Spec(s.d, s.names.Items, migrations.ClaimIndex(s.opts.Prefix), 0))
}

func rowLocks(c dialect.Capabilities) bool { return !c.SingleWriter }
