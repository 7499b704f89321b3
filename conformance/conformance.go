package conformance

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Config says what the suite runs against.
type Config struct {
	// Dialect is the dialect under test. Required.
	Dialect dialect.Dialect

	// Open returns a handle on the database under test. Required.
	//
	// The suite calls it once at the start of every subtest, with that
	// subtest's t, and does all of the subtest's work on that one handle
	// (stores with a clock offset share it). Open registers the handle's
	// Close itself, with t.Cleanup; the suite never closes a handle it uses,
	// and its own cleanups (which drop the subtest's tables) run before
	// Open's.
	//
	// The one exception: the bad-input subtest calls Open a second time and
	// closes that extra handle itself, to check that a closed database is
	// refused. So every call must return a new *sql.DB (closing a *sql.DB
	// twice is harmless). Successive calls may reach different databases of
	// the same kind (SQLite: a new file per call), since no subtest needs
	// two handles on the same tables.
	Open func(t testing.TB) *sql.DB

	// Misconfigured, when set, returns a new handle on a database of the
	// kind under test that lacks a setting the dialect depends on (SQLite: a
	// file opened without WAL and busy_timeout). The bad-input subtest then
	// checks that core.Open refuses it (core.ErrMisconfigured) and creates
	// nothing. It follows the contract of Open. Default: not checked.
	Misconfigured func(t testing.TB) *sql.DB

	// Scale, in (0, 1], multiplies the suite's big counts (1,000 items
	// claimed under contention, 2,000 children fanned in) for slow
	// databases. Default (zero) 1.
	Scale float64

	// ClockSkew is how far apart the clocks of the database's nodes may be
	// (a CockroachDB cluster: its maximum clock offset, 500 ms by default).
	// The suite allows it when it compares a timestamp one statement wrote
	// with the clock another statement read. Default: the dialect's
	// Capabilities.MaxClockOffset.
	ClockSkew time.Duration

	// Serial runs the subtests one after another instead of in parallel,
	// for a database that cannot take the connections of every subtest at
	// once (a small managed instance's connection limit, say). Default
	// false: every subtest calls t.Parallel.
	Serial bool

	// Report, when set, is called as each guarantee's subtest ends, with
	// how it ended: the plenum CLI prints its table of guarantees held and
	// broken from it. Subtests run in parallel, so it must be safe for
	// concurrent use. Default: none.
	Report func(Outcome)
}

// Outcome is how one guarantee's subtest ended.
type Outcome struct {
	// Name is the guarantee, as Names lists it.
	Name string
	// Failed means the guarantee was broken, or could not be checked
	// because the database refused to serve (then Refused says how).
	Failed bool
	// Refused, when not dialect.NotRefused, says that the subtest failed
	// after the database turned it away (too many connections, access
	// denied, unreachable: dialect.RefusalOf of an error it failed with):
	// the guarantee could not be checked, which says nothing of whether it
	// holds. RefusedBy is the first such error.
	Refused   dialect.Refusal
	RefusedBy error
	// Skipped means the guarantee does not apply to the database (two
	// open write transactions on SQLite, say); the subtest's log says why.
	Skipped bool
	// Elapsed is the subtest's running time.
	Elapsed time.Duration
}

// subtestTimeout bounds each subtest, so that a hang (a claim waiting on a
// lock it should have skipped, a lost wake-up) fails instead of waiting for
// the test binary's own deadline.
const subtestTimeout = 5 * time.Minute

// A guarantee is one named subtest.
type guarantee struct {
	name string
	run  func(e *env)
}

// guarantees lists every subtest, in the order of the design's guarantees.
var guarantees = []guarantee{
	{"Claim_ExclusiveUnderConcurrency", testClaimExclusive},
	{"Claim_Order", testClaimOrder},
	{"Claim_LowersStoredLimitsToItsKinds", testClaimKindLimits},
	{"Claim_OrderOfOneEnqueueAcrossStatements", testEnqueueOrderAcrossStatements},
	{"Claim_LocksOnlyRowsItTakes", testClaimLocksOnlyRowsItTakes},
	{"Claim_SkipsHeldRowsWithoutWaiting", testClaimSkipsHeld},
	{"Fence_StaleHolderChangesNothing", testFenceStaleHolder},
	{"Fence_CommitsWithFnOrNotAtAll", testFenceAtomic},
	{"Fence_HoldsClaimUntilCommit", testFenceHoldsClaim},
	{"Fence_OnlyOwnLossIsNotHeld", testFenceOnlyOwnLossNotHeld},
	{"Fence_PastClaimDeadlineChangesNothing", testFenceDeadline},
	{"Complete_IdempotentWithSameToken", testCompleteIdempotent},
	{"Claim_ReturnsTheRowsAsStored", testClaimReturnsTheRowsAsStored},
	{"Complete_CountsAtTheBarrierOfTheRow", testCompleteCountsByTheRow},
	{"Complete_MembersCountAtTheBarrierOfTheRow", testCompleteMembersByTheRow},
	{"FinishMany_MixedOutcomesFencedEachInOneTransaction", testFinishMany},
	{"Recovery_OwnerStopsHeartbeating", testRecoveryOwnerStops},
	{"Recovery_PoisonItemDeadLettered", testRecoveryPoison},
	{"Recovery_ExpiredLeaseOfLiveOwnerIsTimeout", testRecoveryTimeout},
	{"Recovery_ConcurrentReapersReleaseOnce", testRecoveryConcurrentReapers},
	{"Recovery_DeregisterReleasesWithoutCrash", testRecoveryDeregister},
	{"Heartbeat_WritesOnlyTheOwner", testHeartbeatOwnerOnly},
	{"Heartbeat_PromptWhileFenceHoldsClaim", testHeartbeatUnderFence},
	{"Recovery_HeartbeatDoesNotSaveExpiredLease", testHeartbeatNoLease},
	{"Extend_ManyFencedPerClaim", testExtendMany},
	{"Fence_StoreCallInsideRefused", testFenceStoreCallRefused},
	{"Fence_FailCommitsWithWrites", testFenceFail},
	{"Progress_RoundTripKeptForNextAttempt", testProgressRoundTrip},
	{"Progress_StaleHolderChangesNothing", testProgressStaleHolder},
	{"Progress_BoundsRefusedChangeNothing", testProgressBounds},
	{"Retention_PurgeKeepsWhatBarriersNeed", testPurge},
	{"Retention_DeletesProgressWithItem", testProgressPurged},
	{"Retention_ConcurrentPurgersDeleteEachOnce", testPurgeConcurrent},
	{"Retention_KeepsWhatUnfinishedRunsRevive", testPurgeKeepsUnfinishedRuns},
	{"Periodic_EachTickEnqueuedOnceWhileRetentionRuns", testPeriodicOnce},
	{"Periodic_CatchUpInClosedForm", testPeriodicCatchUp},
	{"Periodic_SkipWhilePreviousTickLive", testPeriodicSkipWhile},
	{"StoredSchedules_EachTickOnceWhileEdited", testStoredSchedulesOnce},
	{"StoredSchedules_AcrossDaylightSaving", testStoredSchedulesDaylightSaving},
	{"StoredSchedules_BackfillTriggerAndNames", testStoredSchedulesBackfill},
	{"Queue_PausedClaimsNothingAnywhere", testPausedQueue},
	{"Flow_ConcurrencyLimitHoldsAcrossClaimers", testFlowConcurrencyLimit},
	{"Flow_PerProcessLimitPerOwner", testFlowPerProcess},
	{"Flow_RateLimitWithinEveryWindow", testFlowRateLimit},
	{"Flow_NextTurnCountsOneJustPassed", testFlowNextClaimSince},
	{"Flow_FairSharesBetweenKeys", testFlowFairShares},
	{"Flow_LimitChangeAppliesAtNextClaim", testFlowLimitChange},
	{"Flow_EveryEndOfAClaimFreesOnePlace", testFlowEveryEndFreesOnePlace},
	{"Flow_RevivedItemWakesItsLane", testFlowReviveWakesLane},
	{"Flow_ItemHandedBackWhileAClaimSetsItsLaneIdle", testFlowHandBackDuringIdle},
	{"Flow_EveryHandBackWakesAnIdleLane", testFlowHandBackWakesIdleLane},
	{"Flow_HeldLanesDoNotCrowdOutWork", testFlowHeldLanesDoNotCrowdOutWork},
	{"Flow_DeregisterWhileItsOwnerClaims", testFlowDeregisterWhileClaiming},
	{"Flow_ClaimsAtOnceShareTheLanes", testFlowClaimsShareLanes},
	{"Flow_KeysWithoutLimitsTakeNoLane", testFlowKeysWithoutLimitsTakeNoLane},
	{"Flow_KeyWeightDoesNotStarveAKey", testFlowKeysWeightDoesNotStarve},
	{"Flow_ClaimsOfKeysAtOnceTakeOtherKeys", testFlowKeysClaimsAtOnceTakeOtherKeys},
	{"Flow_ClaimsOfKeysInTwoProcessesTakeNextItems", testFlowKeysTwoProcessesTakeNextItems},
	{"Flow_KeyWithALimitAmongKeysWithout", testFlowKeysWithALimitAmongThem},
	{"Flow_LimitSetOnAQueueClaimedByKeys", testFlowKeysThenALimit},
	{"Flow_KeyedAndUnkeyedShareAQueue", testFlowMixedQueue},
	{"Flow_IdleLanesPurgedAndOpenedAgain", testFlowLanesPurged},
	{"Flow_LanePurgedWhileGivenALimitKeepsIt", testFlowLanePurgedWhileGivenWork},
	{"History_EveryFailedAttemptInOrder", testAttempts},
	{"Clock_DatabaseTimeGatesVisibility", testClock},
	{"FanOut_IdempotentResume", testFanOutResume},
	{"FanOut_ChildKeysCannotBeTaken", testFanOutChildKeysReserved},
	{"FanIn_ExactlyOnceUnderConcurrency", testFanInExactlyOnce},
	{"FanIn_FiresAtSealWhenChildrenAlreadyDone", testFanInFiresAtSeal},
	{"FanIn_NestedFireInOrder", testFanInNested},
	{"FanIn_ParentJoinWaitsForParentAndSubFanIn", testFanInHandover},
	{"FanIn_FailBarrierPolicy", testFanInFailBarrier},
	{"FanIn_UnfiredBarriersOldestFirst", testUnfiredBarriers},
	{"Join_ReadsResultsByKeysetPages", testJoinPages},
	{"Enqueue_IdempotencyKey", testEnqueueKey},
	{"Enqueue_KeyHeldOnlyInChosenStates", testKeyStates},
	{"Enqueue_KeyUniquePerPeriod", testKeyPeriod},
	{"EnqueueTx_Outbox", testEnqueueTxOutbox},
	{"Wakeup_EnqueueWakesSubscribers", testWakeups},
	{"Cancel_And_Revive", testCancelRevive},
	{"Faults_InjectedRollBackBothHalves", testFaultsRollBackBothHalves},
	{"Runs_CreatedOnceAndInherited", testRuns},
	{"Runs_EnqueueNamingNoRunRefused", testEnqueueNoRun},
	{"Meta_WrittenOnEveryEnqueuePath", testMetaEveryPath},
	{"Meta_DeduplicatedEnqueueLeavesIt", testMetaDedup},
	{"Meta_BoundsAndControlCharactersRefused", testMetaRefused},
	{"Meta_ConcurrentEnqueuesWriteTheirOwn", testMetaConcurrent},
	{"Meta_RetentionDeletesItWithItsItem", testMetaRetention},
	{"Then_HandsBarrierPlaceToNextStep", testThen},
	{"Halts_DeathHaltsRunOnce", testHalts},
	{"Signals_KeptTakenOnceAndWake", testSignals},
	{"CancelRun_EverythingUnfinishedStops", testCancelRun},
	{"ReviveRun_ReArmsFiredBarriers", testReviveRun},
	{"History_KeptAcrossCancelAndRevive", testRunHistory},
	{"Browse_ItemsEveryFilterInKeysetPages", testBrowseItems},
	{"Browse_ItemPagesNeverRepeatOrSkipUnderInserts", testBrowseItemsConcurrent},
	{"Browse_ItemsByKindSearchBoundedAndResumable", testBrowseItemsByKindBounded},
	{"Browse_ItemsByKindPagesCoverTheRowsSearched", testBrowseItemsByKindCoversPerPage},
	{"Browse_ItemsByTagAndMetadataInKeysetPages", testBrowseItemsByMeta},
	{"Browse_ItemsByTagAndMetadataRefuseBadInput", testBrowseMetaBadInput},
	{"Browse_QueueSummariesCappedOnDatabaseClock", testBrowseQueueSummaries},
	{"Browse_OwnersHeartbeatAgeAndClaims", testBrowseOwners},
	{"Browse_RunsAndRunBarriersInKeysetPages", testBrowseRuns},
	{"Browse_LanesInKeysetPages", testBrowseLanes},
	{"BadInput_BrowseRefused", testBrowseBadInput},
	{"BadInput_ChangesNothing", testBadInput},
	{"BadInput_KeyOptionsRefused", testKeyOptionsRefused},
	{"BadInput_UsedOrForeignClaimChangesNothing", testBadClaims},
	{"BadInput_IntegersFitEveryDatabase", testBadInputIntegers},
	{"BadInput_JSONEveryDatabaseStores", testBadInputJSON},
	{"BadInput_TextEveryDatabaseStores", testBadInputText},
	{"BadInput_NamesWithoutControlsOrBidi", testNamesRefused},
	{"BadInput_NamesStoredBeforeStayReachable", testNamesStoredBeforeReachable},
	{"Migrate_ConcurrentStartupsDoNotCollide", testMigrateConcurrent},
	{"Transient_RetriedUnderContention", testTransientRetried},
	{"Transient_DeadlockRetriedWholeFence", testTransientDeadlock},
}

// Names returns the names of the suite's subtests, in the order Run runs
// them, for -run patterns and reports.
func Names() []string {
	out := make([]string, len(guarantees))
	for i, g := range guarantees {
		out[i] = g.name
	}
	return out
}

// Run runs every guarantee of Plenum's design as a subtest of t against the
// database cfg describes. Each subtest works under its own random table
// prefix, creates its tables with the store's migrator, drops them when it
// ends, and touches no other table. An invalid cfg fails t.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Dialect == nil {
		t.Fatal("conformance: Config.Dialect is nil: pass the dialect under test, e.g. sqlite.Dialect()")
		return
	}
	if cfg.Open == nil {
		t.Fatal("conformance: Config.Open is nil: pass a function that opens a new *sql.DB on the database under test")
		return
	}
	if cfg.Scale == 0 {
		cfg.Scale = 1
	}
	if math.IsNaN(cfg.Scale) || cfg.Scale <= 0 || cfg.Scale > 1 {
		t.Fatalf("conformance: Config.Scale %v is outside (0, 1]", cfg.Scale)
		return
	}
	if cfg.ClockSkew < 0 {
		t.Fatalf("conformance: Config.ClockSkew %v is negative", cfg.ClockSkew)
		return
	}
	logServer(t, cfg)
	for _, g := range guarantees {
		t.Run(g.name, func(t *testing.T) {
			if !cfg.Serial {
				t.Parallel()
			}
			ct := &checkT{T: t, d: cfg.Dialect, refused: &refusalNote{}}
			// Registered first, so it runs after every other cleanup of
			// the subtest, which may still fail it.
			start := time.Now()
			t.Cleanup(func() { report(ct, cfg, g.name, time.Since(start)) })
			g.run(newEnv(ct, cfg))
		})
	}
}

// report says how a guarantee's subtest ended: in its log when the
// database refused to serve it, and to cfg.Report.
func report(t *checkT, cfg Config, name string, elapsed time.Duration) {
	o := Outcome{Name: name, Failed: t.Failed(), Skipped: t.Skipped(), Elapsed: elapsed}
	if o.Failed {
		o.Refused, o.RefusedBy = t.refused.first()
	}
	if o.Refused != dialect.NotRefused {
		t.Logf("conformance: %s could not run: the database refused to serve it (%s: %v); "+
			"this says nothing of whether the guarantee holds", name, o.Refused, o.RefusedBy)
	}
	if cfg.Report != nil {
		cfg.Report(o)
	}
}

// env is one subtest's world: its database handle, its table prefix and a
// store on it.
type env struct {
	t      *checkT
	cfg    Config
	ctx    context.Context
	db     *sql.DB
	d      dialect.Dialect
	caps   dialect.Capabilities
	prefix string
	names  migrations.Names
	// s is the store at the database's own clock (no offset).
	s *core.Store
}

func newEnv(t *checkT, cfg Config) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), subtestTimeout)
	t.Cleanup(cancel)
	db := cfg.Open(t)
	if db == nil {
		t.Fatal("conformance: Config.Open returned a nil *sql.DB")
	}
	e := &env{t: t, cfg: cfg, ctx: ctx, db: db, d: cfg.Dialect, caps: cfg.Dialect.Capabilities()}
	e.prefix = e.newPrefix()
	e.names = migrations.NamesFor(e.prefix)
	s, err := core.Open(ctx, db, e.d, core.Options{Prefix: e.prefix, Migrate: true})
	if err != nil {
		t.Fatalf("core.Open(prefix %q, Migrate): %v", e.prefix, err)
	}
	e.s = s
	return e
}

// newPrefix returns a fresh random table prefix and registers the drop of
// its tables, before anything creates them, so that a half-applied
// migration is dropped too.
func (e *env) newPrefix() string {
	p := fmt.Sprintf("pc%08x_", rand.Uint32())
	if err := migrations.ValidatePrefix(p); err != nil {
		e.t.Fatalf("conformance: generated prefix: %v", err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.drop(ctx, p); err != nil {
			e.t.Errorf("conformance: drop the tables of prefix %q: %v", p, err)
		}
	})
	return p
}

// drop drops the tables of prefix p, again while the database says the
// attempt may be retried (SQLite's writer lock held past busy_timeout by
// a parallel subtest's stream of writes, a deadlock), until ctx ends.
func (e *env) drop(ctx context.Context, p string) error {
	for {
		err := migrations.Drop(ctx, e.db, e.d, p)
		if err == nil || e.d.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exec runs a statement of the test's own outside the store (a row as
// an older version or another writer left it), again while the database
// says the attempt may be retried (SQLite's writer lock held past
// busy_timeout by a parallel subtest), until ctx ends.
func (e *env) exec(ctx context.Context, query string, args ...any) error {
	for {
		_, err := e.db.ExecContext(ctx, query, args...)
		if err == nil || e.d.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// at opens a second store on the subtest's tables whose database clock is
// shifted by offset: the only way the suite moves time.
func (e *env) at(offset time.Duration) *core.Store {
	e.t.Helper()
	return e.open(core.Options{ClockOffset: offset})
}

// open opens another store on the subtest's tables with opts (its prefix
// is set here).
func (e *env) open(opts core.Options) *core.Store {
	e.t.Helper()
	opts.Prefix = e.prefix
	s, err := core.Open(e.ctx, e.db, e.d, opts)
	if err != nil {
		e.t.Fatalf("core.Open(%+v): %v", opts, err)
	}
	return s
}

// scaled applies Config.Scale to n, keeping at least floor.
func (e *env) scaled(n, floor int) int {
	return max(floor, int(math.Round(float64(n)*e.cfg.Scale)))
}

// owner registers a new owner through s.
func (e *env) owner(s *core.Store) uuid.UUID {
	e.t.Helper()
	id, err := s.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "conformance"})
	if err != nil {
		e.t.Fatalf("RegisterOwner: %v", err)
	}
	return id
}

// enqueue enqueues specs through s and fails the test on error.
func (e *env) enqueue(s *core.Store, specs ...core.ItemSpec) []core.EnqueueResult {
	e.t.Helper()
	out, err := s.Enqueue(e.ctx, specs...)
	if err != nil {
		e.t.Fatalf("Enqueue(%d specs): %v", len(specs), err)
	}
	if len(out) != len(specs) {
		e.t.Fatalf("Enqueue(%d specs) returned %d results", len(specs), len(out))
	}
	return out
}

// enqueueOne enqueues one item and returns its id.
func (e *env) enqueueOne(s *core.Store, spec core.ItemSpec) uuid.UUID {
	e.t.Helper()
	return e.enqueue(s, spec)[0].ID
}

// claim claims up to limit items of queue for owner through s, with a long
// lease.
func (e *env) claim(s *core.Store, owner uuid.UUID, queue string, limit int) []core.Claim {
	e.t.Helper()
	return e.claimLease(s, owner, queue, limit, time.Hour)
}

func (e *env) claimLease(s *core.Store, owner uuid.UUID, queue string, limit int, lease time.Duration) []core.Claim {
	e.t.Helper()
	cs, err := s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: limit, Lease: lease})
	if err != nil {
		e.t.Fatalf("Claim(%s, limit %d): %v", queue, limit, err)
	}
	return cs
}

// claimOne claims exactly one item of queue, and fails if there is none.
func (e *env) claimOne(s *core.Store, owner uuid.UUID, queue string) core.Claim {
	e.t.Helper()
	cs := e.claim(s, owner, queue, 1)
	if len(cs) != 1 {
		e.t.Fatalf("Claim(%s, limit 1) got %d items, want 1", queue, len(cs))
	}
	return cs[0]
}

// claimAll claims exactly n items of queue in one claim.
func (e *env) claimAll(s *core.Store, owner uuid.UUID, queue string, n int) []core.Claim {
	e.t.Helper()
	cs := e.claim(s, owner, queue, n+1)
	if len(cs) != n {
		e.t.Fatalf("Claim(%s, limit %d) got %d items, want %d", queue, n+1, len(cs), n)
	}
	return cs
}

func (e *env) complete(s *core.Store, c core.Claim, result string) {
	e.t.Helper()
	if err := s.Complete(e.ctx, c, rawOrNil(result)); err != nil {
		e.t.Fatalf("Complete(%s): %v", c.ID, err)
	}
}

func (e *env) get(id uuid.UUID) core.Item {
	e.t.Helper()
	it, err := e.s.Get(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Get(%s): %v", id, err)
	}
	return it
}

func (e *env) barrier(id uuid.UUID) core.Barrier {
	e.t.Helper()
	b, err := e.s.GetBarrier(e.ctx, id)
	if err != nil {
		e.t.Fatalf("GetBarrier(%s): %v", id, err)
	}
	return b
}

// counts returns the number of items of queue in each state ("" for all).
func (e *env) counts(queue string) map[core.State]int64 {
	e.t.Helper()
	c, err := e.s.Counts(e.ctx, queue)
	if err != nil {
		e.t.Fatalf("Counts(%q): %v", queue, err)
	}
	return c
}

// total returns the number of items of queue ("" for all).
func (e *env) total(queue string) int64 {
	e.t.Helper()
	var n int64
	for _, v := range e.counts(queue) {
		n += v
	}
	return n
}

// wantCounts fails unless queue holds exactly want (states not listed: 0).
func (e *env) wantCounts(queue string, want map[core.State]int64) {
	e.t.Helper()
	got := e.counts(queue)
	for _, st := range []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled} {
		if got[st] != want[st] {
			e.t.Errorf("queue %q: %d items %s, want %d (all counts: %v)", queue, got[st], st, want[st], got)
		}
	}
}

// sqlCount runs a COUNT query written with '?' placeholders and the
// {items}, {barriers}, {attempts}, {progress}, {migrations} table names.
func (e *env) sqlCount(query string, args ...any) int64 {
	e.t.Helper()
	q := strings.NewReplacer("{items}", e.names.Items, "{barriers}", e.names.Barriers, "{attempts}", e.names.Attempts, "{progress}", e.names.Progress, "{migrations}", e.names.Migrations, "{itemmeta}", e.names.ItemMeta).Replace(query)
	var n int64
	if err := e.db.QueryRowContext(e.ctx, e.d.Rebind(q), args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// joinsOf counts the join items a barrier's firing enqueued, straight from
// the table, so that a duplicate join cannot hide behind JoinItemID.
func (e *env) joinsOf(barrier uuid.UUID) int64 {
	e.t.Helper()
	return e.sqlCount("SELECT COUNT(*) FROM {items} WHERE join_barrier_id = ?", e.d.UUID(barrier))
}

// children reads every child of barrier through keyset pages.
func (e *env) children(barrier uuid.UUID) []core.Item {
	e.t.Helper()
	var out []core.Item
	after := uuid.Nil
	for {
		page, err := e.s.Children(e.ctx, core.ChildrenParams{Barrier: barrier, After: after, Limit: 500})
		if err != nil {
			e.t.Fatalf("Children(%s): %v", barrier, err)
		}
		if len(page) == 0 {
			return out
		}
		if idLess(page[0].ID, after) <= 0 {
			e.t.Fatalf("Children(%s) after %s returned %s: keyset pages do not advance", barrier, after, page[0].ID)
		}
		out = append(out, page...)
		after = page[len(page)-1].ID
	}
}

// sideTable creates a table of the caller's own under the subtest's
// prefix, with portable DDL, and drops it at cleanup. It stands for the
// application's tables that fenced writes go to.
func (e *env) sideTable() string {
	e.t.Helper()
	name := e.prefix + "side"
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range e.d.DropTable(name) {
			if _, err := e.db.ExecContext(ctx, stmt); err != nil {
				e.t.Errorf("drop %s: %v", name, err)
			}
		}
	})
	if _, err := e.db.ExecContext(e.ctx, "CREATE TABLE "+name+" (id VARCHAR(64) PRIMARY KEY)"); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return name
}

// sideInsert returns the statement that inserts one id into the side
// table, in the dialect's placeholder style.
func (e *env) sideInsert(table string) string {
	return e.d.Rebind("INSERT INTO " + table + " (id) VALUES (?)")
}

func (e *env) sideCount(table string) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// fanOut expands the claimed parent, in one page, into kids under the
// barrier spec describes, completing the parent in the sealing
// transaction. It returns the sealed barrier.
func (e *env) fanOut(s *core.Store, parent core.Claim, spec core.BarrierSpec, kids []core.ChildSpec) core.Barrier {
	e.t.Helper()
	r, err := s.Expand(e.ctx, parent, core.ExpandParams{
		Barrier: spec,
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: kids, Next: "end", Done: true}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		e.t.Fatalf("Expand(%s into %d children): %v", parent.ID, len(kids), err)
	}
	if r.Inserted != len(kids) || r.Barrier.Expected != int64(len(kids)) || !r.Barrier.Sealed {
		e.t.Fatalf("Expand into %d children: inserted %d, barrier %+v", len(kids), r.Inserted, r.Barrier)
	}
	return r.Barrier
}

// kids returns n children of queue with keys prefix0, prefix1, ...
func kids(queue, prefix string, n int) []core.ChildSpec {
	out := make([]core.ChildSpec, n)
	for i := range out {
		out[i] = core.ChildSpec{Key: fmt.Sprintf("%s%d", prefix, i), Queue: queue, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	return out
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// jsonEqual compares two JSON documents by value: databases with a binary
// JSON type give back the same document with other spacing.
func jsonEqual(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// itemDiff describes how b differs from a, or returns "" when they are the
// same item in the same state.
func itemDiff(a, b core.Item) string {
	var diffs []string
	add := func(field string, x, y any) { diffs = append(diffs, fmt.Sprintf("%s %v -> %v", field, x, y)) }
	if a.ID != b.ID {
		add("ID", a.ID, b.ID)
	}
	if a.Queue != b.Queue || a.Kind != b.Kind || a.Key != b.Key || a.Priority != b.Priority {
		add("queue/kind/key/priority", []any{a.Queue, a.Kind, a.Key, a.Priority}, []any{b.Queue, b.Kind, b.Key, b.Priority})
	}
	if a.State != b.State {
		add("State", a.State, b.State)
	}
	if a.Attempt != b.Attempt || a.MaxAttempts != b.MaxAttempts || a.CrashCount != b.CrashCount {
		add("Attempt/MaxAttempts/CrashCount", []int{a.Attempt, a.MaxAttempts, a.CrashCount}, []int{b.Attempt, b.MaxAttempts, b.CrashCount})
	}
	if a.ClaimToken != b.ClaimToken || a.ClaimedBy != b.ClaimedBy || a.BarrierID != b.BarrierID || a.JoinOf != b.JoinOf {
		add("ClaimToken/ClaimedBy/BarrierID/JoinOf", []uuid.UUID{a.ClaimToken, a.ClaimedBy, a.BarrierID, a.JoinOf}, []uuid.UUID{b.ClaimToken, b.ClaimedBy, b.BarrierID, b.JoinOf})
	}
	for _, tc := range []struct {
		name string
		x, y time.Time
	}{{"AvailableAt", a.AvailableAt, b.AvailableAt}, {"ClaimedAt", a.ClaimedAt, b.ClaimedAt}, {"LeaseExpiresAt", a.LeaseExpiresAt, b.LeaseExpiresAt},
		{"CreatedAt", a.CreatedAt, b.CreatedAt}, {"FinishedAt", a.FinishedAt, b.FinishedAt}} {
		if !tc.x.Equal(tc.y) {
			add(tc.name, tc.x, tc.y)
		}
	}
	if !jsonEqual(a.Payload, b.Payload) {
		add("Payload", string(a.Payload), string(b.Payload))
	}
	if !jsonEqual(a.Result, b.Result) {
		add("Result", string(a.Result), string(b.Result))
	}
	if a.LastError != b.LastError {
		add("LastError", a.LastError, b.LastError)
	}
	return strings.Join(diffs, "; ")
}

// between reports whether t lies in [lo - slack, hi + slack].
func between(t, lo, hi time.Time, slack time.Duration) bool {
	return !t.Before(lo.Add(-slack)) && !t.After(hi.Add(slack))
}

// clockSlack is the tolerance of comparisons between timestamps the
// database wrote and its clock read by Now: twice its resolution (for
// rounding), plus the skew between its nodes' clocks.
func (e *env) clockSlack() time.Duration {
	return 2*max(e.caps.ClockResolution, time.Microsecond) + max(e.cfg.ClockSkew, e.caps.MaxClockOffset)
}

// now reads the database clock through s.
func (e *env) now(s *core.Store) time.Time {
	e.t.Helper()
	t, err := s.Now(e.ctx)
	if err != nil {
		e.t.Fatalf("Now: %v", err)
	}
	return t
}

func ids(cs []core.Claim) []uuid.UUID {
	out := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func idLess(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }

// openBarrier opens spec under c, in a fence of its own that commits,
// failing the test unless c is held and the barrier opened.
func (e *env) openBarrier(c core.Claim, spec core.BarrierSpec) core.Barrier {
	e.t.Helper()
	var bar core.Barrier
	if held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		var err error
		bar, err = f.OpenBarrier(ctx, spec)
		return err
	}); !held || err != nil {
		e.t.Fatalf("OpenBarrier: held %v, %v", held, err)
	}
	return bar
}
