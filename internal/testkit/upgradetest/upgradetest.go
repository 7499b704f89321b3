// Package upgradetest is the schema upgrade test every dialect package runs
// against its database: version 1 with data in its tables, up to the
// latest version and back, each version with data up to the next and back, concurrent migrators, and migrations that stop
// half way. It is internal to Plenum's tests.
package upgradetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/migrations"
)

// Config is the database under test.
type Config struct {
	Dialect dialect.Dialect
	// Open returns a new handle on the database, closed by the test's
	// cleanup. Each call may be a new pool (as another process would
	// have).
	Open func(t testing.TB) *sql.DB
}

// Run runs every upgrade subtest. Each works under its own random prefix
// and drops its tables afterwards.
func Run(t *testing.T, c Config) {
	t.Run("UpgradeWithData", func(t *testing.T) { t.Parallel(); upgradeWithData(t, c) })
	t.Run("ConcurrentUpAppliesEachVersionOnce", func(t *testing.T) { t.Parallel(); concurrentUp(t, c) })
	t.Run("FailureHalfWay", func(t *testing.T) { t.Parallel(); failureHalfWay(t, c) })
	t.Run("UpgradeFromVersion2WithData", func(t *testing.T) { t.Parallel(); upgradeFrom2WithData(t, c) })
	t.Run("UpgradeFromVersion3WithData", func(t *testing.T) { t.Parallel(); upgradeFrom3WithData(t, c) })
	t.Run("UpgradeFromVersion4WithData", func(t *testing.T) { t.Parallel(); upgradeFrom4WithData(t, c) })
	t.Run("UpgradeFromVersion5WithData", func(t *testing.T) { t.Parallel(); upgradeFrom5WithData(t, c) })
	t.Run("UpgradeFromVersion6WithData", func(t *testing.T) { t.Parallel(); upgradeFrom6WithData(t, c) })
	t.Run("UpgradeFromVersion7WithData", func(t *testing.T) { t.Parallel(); upgradeFrom7WithData(t, c) })
	t.Run("UpgradeFromVersion8WithData", func(t *testing.T) { t.Parallel(); upgradeFrom8WithData(t, c) })
	t.Run("UpgradeFromVersion9WithData", func(t *testing.T) { t.Parallel(); upgradeFrom9WithData(t, c) })
	t.Run("UpgradeToIdleLanesIndexWithData", func(t *testing.T) { t.Parallel(); upgradeToIdleLanesWithData(t, c) })
	t.Run("UpgradeToItemMetaWithData", func(t *testing.T) { t.Parallel(); upgradeToItemMetaWithData(t, c) })
	t.Run("UpgradeToProgressWithData", func(t *testing.T) { t.Parallel(); upgradeToProgressWithData(t, c) })
	t.Run("UpgradeToRunVersionWithData", func(t *testing.T) { t.Parallel(); upgradeToRunVersionWithData(t, c) })
}

// up lists the versions above from, oldest first: what Apply applies to a
// schema at version from.
func up(from int) []int {
	var out []int
	for v := from + 1; v <= migrations.LatestVersion; v++ {
		out = append(out, v)
	}
	return out
}

// down lists the versions above to, newest first: what Down to version to
// rolls back from the latest.
func down(to int) []int {
	out := up(to)
	slices.Reverse(out)
	return out
}

// Prefix returns a random table prefix, and drops its tables when t ends.
func Prefix(t testing.TB, db *sql.DB, d dialect.Dialect) string {
	p := fmt.Sprintf("up%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, p); err != nil {
			t.Errorf("drop %s*: %v", p, err)
		}
	})
	return p
}

// storeAtLatest applies every version under a new prefix and opens a
// store on it, for tests that write their rows through the store before
// taking the schema down.
func storeAtLatest(t *testing.T, c Config) (*sql.DB, string, *core.Store) {
	t.Helper()
	db := c.Open(t)
	p := Prefix(t, db, c.Dialect)
	if _, err := migrations.Apply(t.Context(), db, c.Dialect, p); err != nil {
		t.Fatal(err)
	}
	s, err := core.Open(t.Context(), db, c.Dialect, core.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	return db, p, s
}

// fixture is the version 1 data the upgrade must keep: one item per kind
// of history the backfill reads.
type fixture struct {
	id        uuid.UUID
	state     string
	attempt   int
	lastError string // "" for none
	finished  bool
	// outcome is what the backfill must write ("" for no row).
	outcome string
}

var fixtures = []fixture{
	{id: uuid.New(), state: "available"},
	{id: uuid.New(), state: "completed", attempt: 1, finished: true},
	{id: uuid.New(), state: "available", attempt: 1, lastError: "boom: it's broken", outcome: migrations.OutcomeFailed},
	{id: uuid.New(), state: "dead", attempt: 3, lastError: "lease expired", finished: true, outcome: migrations.OutcomeTimeout},
	{id: uuid.New(), state: "available", attempt: 0, lastError: "owner died while holding the claim", outcome: migrations.OutcomeCrash},
}

// seed writes the fixtures, an owner and a barrier with version 1's
// columns, as a store of that version would have.
func seed(t *testing.T, db *sql.DB, d dialect.Dialect, p string) {
	t.Helper()
	ctx := t.Context()
	n := migrations.NamesFor(p)
	now := d.Now(0)
	for _, f := range fixtures {
		var lastErr any
		if f.lastError != "" {
			lastErr = f.lastError
		}
		finished := "NULL"
		if f.finished {
			finished = now
		}
		_, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Items+
			" (id, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, last_error, created_at, finished_at)"+
			" VALUES (?, 'q', 'k', "+d.Param(dialect.JSON)+", 0, ?, "+now+", ?, 5, 0, ?, "+now+", "+finished+")"),
			d.UUID(f.id), d.JSON([]byte(`{"user":42}`)), f.state, f.attempt, lastErr)
		if err != nil {
			t.Fatalf("seed item: %v", err)
		}
	}
	if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Processes+" (id, host, pid, started_at, last_heartbeat_at, heartbeats) VALUES (?, 'h', 1, "+now+", "+now+", 0)"),
		d.UUID(uuid.New())); err != nil {
		t.Fatalf("seed owner: %v", err)
	}
	if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Barriers+
		" (id, owner_id, name, expected, arrived, failed, sealed, join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at)"+
		" VALUES (?, ?, 'b', 0, 0, 0, ?, 'q', 'j', 0, 1, 'continue', "+now+")"), d.UUID(uuid.New()), d.UUID(fixtures[0].id), d.Bool(false)); err != nil {
		t.Fatalf("seed barrier: %v", err)
	}
}

// checkBackfill checks one attempts row per fixture with a last error, and
// none for the others.
func checkBackfill(t *testing.T, db *sql.DB, d dialect.Dialect, p string) {
	t.Helper()
	ctx := t.Context()
	table := migrations.NamesFor(p).Attempts
	for _, f := range fixtures {
		rows, err := db.QueryContext(ctx, d.Rebind("SELECT n, outcome, error FROM "+table+" WHERE item_id = ? ORDER BY n"), d.UUID(f.id))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var n int
			var outcome string
			var msg sql.NullString
			if err := rows.Scan(&n, &outcome, &msg); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s %s", n, outcome, msg.String))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		var want []string
		if f.outcome != "" {
			// The first of the item's history, whatever its attempt.
			want = []string{fmt.Sprintf("1 %s %s", f.outcome, f.lastError)}
		}
		if !slices.Equal(got, want) {
			t.Errorf("attempts of the %s item with error %q = %q, want %q", f.state, f.lastError, got, want)
		}
	}
}

// count returns the rows of table, or an error when it cannot be read.
func count(ctx context.Context, db *sql.DB, table string) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
	return n, err
}

// statesAt is what states returns for a schema at version v: every
// version up to v applied, the rest pending.
func statesAt(v int) string {
	var parts []string
	for i := 1; i <= migrations.LatestVersion; i++ {
		st := "pending"
		if i <= v {
			st = "applied"
		}
		parts = append(parts, fmt.Sprintf("%d %s", i, st))
	}
	return strings.Join(parts, ", ")
}

// states returns the state of every version, as "1 applied, 2 pending".
func states(t *testing.T, db *sql.DB, d dialect.Dialect, p string) string {
	t.Helper()
	st, err := migrations.Status(t.Context(), db, d, p)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	var parts []string
	for _, s := range st {
		parts = append(parts, fmt.Sprintf("%d %s", s.Version, s.State))
	}
	return strings.Join(parts, ", ")
}

func version(t *testing.T, db *sql.DB, d dialect.Dialect, p string) int {
	t.Helper()
	v, err := migrations.Version(t.Context(), db, d, p)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	return v
}

// upgradeWithData: version 1 with data, up to 2, a store works on it
// without migrating, down to 1 (the data of version 1 stays), up again.
func upgradeWithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db := c.Open(t)
	p := Prefix(t, db, d)
	n := migrations.NamesFor(p)

	if got, want := states(t, db, d, p), statesAt(0); got != want {
		t.Fatalf("status of an empty database = %q, want %q", got, want)
	}
	if applied, err := migrations.Up(ctx, db, d, p, 1); err != nil || !slices.Equal(applied, []int{1}) {
		t.Fatalf("Up to 1 = %v, %v", applied, err)
	}
	seed(t, db, d, p)
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 1 = %v, want ErrSchemaOutdated", err)
	}
	if got, want := states(t, db, d, p), statesAt(1); got != want {
		t.Fatalf("status at version 1 = %q, want %q", got, want)
	}

	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(1)) {
			t.Fatalf("round %d: Apply from version 1 = %v, %v", round, applied, err)
		}
		if got, want := states(t, db, d, p), statesAt(migrations.LatestVersion); got != want {
			t.Fatalf("round %d: status = %q, want %q", round, got, want)
		}
		checkBackfill(t, db, d, p)
		checkStore(t, db, d, p, round)
		if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Queues+" (name, paused, updated_at) VALUES (?, ?, "+d.Now(0)+")"), "q", d.Bool(true)); err != nil {
			t.Fatalf("round %d: write a queue: %v", round, err)
		}
		if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Schedules+" (name, last_tick, updated_at) VALUES (?, ?, "+d.Now(0)+")"), "nightly", int64(1)<<52); err != nil {
			t.Fatalf("round %d: write a schedule's watermark: %v", round, err)
		}

		if rolled, err := migrations.Down(ctx, db, d, p, 1); err != nil || !slices.Equal(rolled, down(1)) {
			t.Fatalf("round %d: Down to 1 = %v, %v", round, rolled, err)
		}
		if v := version(t, db, d, p); v != 1 {
			t.Fatalf("round %d: version after Down = %d", round, v)
		}
		for _, table := range []string{n.Attempts, n.Queues, n.Schedules, n.Runs, n.Signals} {
			if _, err := count(ctx, db, table); err == nil {
				t.Errorf("round %d: %s still readable after Down", round, table)
			}
		}
		if _, err := db.ExecContext(ctx, "SELECT name FROM "+n.Processes); err == nil {
			t.Errorf("round %d: processes.name still there after Down", round)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != len(fixtures)+round {
			t.Errorf("round %d: %d items after Down, %v; want %d", round, got, err, len(fixtures)+round)
		}
	}

	// The backfill's own down removes exactly the rows it wrote (and, first,
	// runs again harmlessly).
	if _, err := migrations.Apply(ctx, db, d, p); err != nil {
		t.Fatal(err)
	}
	var data *migrations.DataStep
	for _, ch := range migrations.All(p)[1].Changes {
		if ch.Data != nil {
			data = ch.Data
		}
	}
	// It runs again without writing a row twice, as a completed half-way
	// migration would run it.
	for _, s := range data.Up(d) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("backfill again: %v", err)
		}
	}
	checkBackfill(t, db, d, p)
	if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Attempts+" (item_id, n, outcome, error, ended_at) VALUES (?, 9, 'failed', 'later', "+d.Now(0)+")"),
		d.UUID(fixtures[2].id)); err != nil {
		t.Fatal(err)
	}
	for _, s := range data.Down(d) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("backfill down: %v", err)
		}
	}
	if got, err := count(ctx, db, n.Attempts); err != nil || got != 1 {
		t.Fatalf("attempts after the backfill's down = %d, %v; want 1 (the row it did not write)", got, err)
	}

	// Down to 0 leaves nothing of Plenum's, and up again starts afresh.
	if rolled, err := migrations.Down(ctx, db, d, p, 0); err != nil || !slices.Equal(rolled, down(0)) {
		t.Fatalf("Down to 0 = %v, %v", rolled, err)
	}
	for _, table := range []string{n.Items, n.Processes, n.Barriers, n.Migrations} {
		if _, err := count(ctx, db, table); err == nil {
			t.Errorf("%s still readable after Down to 0", table)
		}
	}
	if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(0)) {
		t.Fatalf("Apply after Down to 0 = %v, %v", applied, err)
	}
}

// checkStore opens a store without migrating and uses the upgraded
// tables: it reads the items of version 1 and claims and completes one.
func checkStore(t *testing.T, db *sql.DB, d dialect.Dialect, p string, round int) {
	t.Helper()
	ctx := t.Context()
	s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
	if err != nil {
		t.Fatalf("round %d: core.Open after the upgrade: %v", round, err)
	}
	it, err := s.Get(ctx, fixtures[2].id)
	if err != nil || it.LastError != fixtures[2].lastError || it.Attempt != 1 {
		t.Fatalf("round %d: Get = %+v, %v", round, it, err)
	}
	enq, err := s.Enqueue(ctx, core.ItemSpec{Queue: fmt.Sprintf("after%d", round), Kind: "k"})
	if err != nil {
		t.Fatalf("round %d: Enqueue: %v", round, err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatalf("round %d: RegisterOwner: %v", round, err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: fmt.Sprintf("after%d", round), Owner: owner, Limit: 5, Lease: time.Minute})
	if err != nil || len(cs) != 1 || cs[0].ID != enq[0].ID {
		t.Fatalf("round %d: Claim = %v, %v", round, cs, err)
	}
	// The core reads the backfilled history, and writes its own after it.
	if h, err := s.Attempts(ctx, fixtures[2].id); err != nil || len(h) != 1 || h[0].N != 1 || string(h[0].Outcome) != fixtures[2].outcome || h[0].Error != fixtures[2].lastError {
		t.Fatalf("round %d: Attempts of a backfilled item = %+v, %v", round, h, err)
	}
	if _, err := s.Fail(ctx, cs[0], core.FailParams{Error: "once"}); err != nil {
		t.Fatalf("round %d: Fail: %v", round, err)
	}
	if h, err := s.Attempts(ctx, cs[0].ID); err != nil || len(h) != 1 || h[0].N != 1 || h[0].Outcome != core.OutcomeFailed || h[0].Error != "once" {
		t.Fatalf("round %d: Attempts after Fail = %+v, %v", round, h, err)
	}
	// Paused, the queue gives nothing; resumed, its item once it is due.
	if err := s.PauseQueue(ctx, fmt.Sprintf("after%d", round)); err != nil {
		t.Fatalf("round %d: PauseQueue: %v", round, err)
	}
	later, err := core.Open(ctx, db, d, core.Options{Prefix: p, ClockOffset: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if cs, err = later.Claim(ctx, core.ClaimParams{Queue: fmt.Sprintf("after%d", round), Owner: owner, Limit: 5, Lease: time.Minute}); err != nil || len(cs) != 0 {
		t.Fatalf("round %d: Claim of a paused queue = %v, %v", round, cs, err)
	}
	if err := s.ResumeQueue(ctx, fmt.Sprintf("after%d", round)); err != nil {
		t.Fatalf("round %d: ResumeQueue: %v", round, err)
	}
	cs, err = later.Claim(ctx, core.ClaimParams{Queue: fmt.Sprintf("after%d", round), Owner: owner, Limit: 5, Lease: time.Minute})
	if err != nil || len(cs) != 1 || cs[0].ID != enq[0].ID {
		t.Fatalf("round %d: Claim after ResumeQueue = %v, %v", round, cs, err)
	}
	if err := s.Complete(ctx, cs[0], []byte(`{"ok":true}`)); err != nil {
		t.Fatalf("round %d: Complete: %v", round, err)
	}
}

// concurrentUp: migrators in separate pools at once apply each version
// once.
func concurrentUp(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	first := c.Open(t)
	p := Prefix(t, first, d)
	dbs := []*sql.DB{first, c.Open(t), c.Open(t), c.Open(t)}
	var mu sync.Mutex
	var all []int
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			applied, err := migrations.Apply(ctx, db, d, p)
			if err != nil {
				t.Errorf("Apply: %v", err)
			}
			mu.Lock()
			all = append(all, applied...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	if want := up(0); !slices.Equal(all, want) {
		t.Fatalf("versions applied across the migrators = %v, want %v once each", all, want)
	}
	if got, err := count(ctx, first, migrations.NamesFor(p).Migrations); err != nil || got != migrations.LatestVersion {
		t.Fatalf("%d version rows, %v; want %d", got, err, migrations.LatestVersion)
	}
}

var errInjected = errors.New("injected failure")

// failureHalfWay fails each version's up, then its down, before each of
// its statements in turn. Where DDL is transactional the failure changes
// nothing; elsewhere the version shows as partly applied (or partly rolled
// back), is not taken as current, and the next run completes it.
//
// Each statement costs its own schema brought up to the version before,
// so the sweep grows with the square of the versions. A landed version
// never changes, and was swept whole when it landed: the two newest are
// swept whole, older ones before their first and their last statement of
// each direction, and all of every version with PLENUM_UPGRADE_SWEEP=all
// (docs/migrations.md).
func failureHalfWay(t *testing.T, c Config) {
	for v := 2; v <= migrations.LatestVersion; v++ {
		t.Run(fmt.Sprintf("Version%d", v), func(t *testing.T) { failureHalfWayAt(t, c, v) })
	}
}

// swept reports whether failureHalfWay fails version v before its
// statement k of n.
func swept(v, k, n int) bool {
	return v >= migrations.LatestVersion-1 || k == 0 || k == n-1 || os.Getenv("PLENUM_UPGRADE_SWEEP") == "all"
}

// statusWith is the status of every version when those before v are
// applied, v is in state mid, and those after v are pending.
func statusWith(v int, mid string) string {
	var parts []string
	for k := 1; k <= migrations.LatestVersion; k++ {
		switch {
		case k < v:
			parts = append(parts, fmt.Sprintf("%d applied", k))
		case k == v:
			parts = append(parts, fmt.Sprintf("%d %s", k, mid))
		default:
			parts = append(parts, fmt.Sprintf("%d pending", k))
		}
	}
	return strings.Join(parts, ", ")
}

// versionsFrom lists v to the latest version.
func versionsFrom(v int) []int {
	var out []int
	for k := v; k <= migrations.LatestVersion; k++ {
		out = append(out, k)
	}
	return out
}

func failureHalfWayAt(t *testing.T, c Config, v int) {
	d := c.Dialect
	db := c.Open(t)
	transactional := d.Capabilities().TransactionalDDL
	statements := func(p string, down bool) []string {
		up, dn := migrations.Statements(d, migrations.All(p)[v-1])
		if down {
			return dn
		}
		return up
	}
	// created is the first table version v creates: gone after a failed
	// transactional up.
	created := func(p string) string {
		for _, ch := range migrations.All(p)[v-1].Changes {
			if ch.Table != nil {
				return ch.Table.Name
			}
		}
		return ""
	}
	for _, dir := range []struct {
		name string
		down bool
	}{{"Up", false}, {"Down", true}} {
		for k := range statements(migrations.DefaultPrefix, dir.down) {
			if !swept(v, k, len(statements(migrations.DefaultPrefix, dir.down))) {
				continue
			}
			t.Run(fmt.Sprintf("%sBeforeStatement%d", dir.name, k+1), func(t *testing.T) {
				ctx := t.Context()
				p := Prefix(t, db, d)
				if _, err := migrations.Up(ctx, db, d, p, 1); err != nil {
					t.Fatal(err)
				}
				seed(t, db, d, p)
				if _, err := migrations.Up(ctx, db, d, p, v-1); err != nil {
					t.Fatal(err)
				}
				target := statements(p, dir.down)[k]
				failing := fault.With(ctx, fault.MigrateBeforeStatement, fault.Rule{Action: fault.Call, Func: func(ctx context.Context) error {
					if fault.Detail(ctx) == target {
						return errInjected
					}
					return nil
				}})
				if dir.down {
					if _, err := migrations.Up(ctx, db, d, p, v); err != nil {
						t.Fatal(err)
					}
					_, err := migrations.Down(failing, db, d, p, v-1)
					if !errors.Is(err, errInjected) {
						t.Fatalf("Down with a failing statement = %v", err)
					}
					want, wantV := statusWith(v, "partly rolled back"), v-1
					if transactional {
						want, wantV = statusWith(v, "applied"), v
					} else if !strings.Contains(err.Error(), "run Down, or plenum migrate down, again") {
						t.Errorf("the error does not say how to complete the rollback: %v", err)
					}
					if got := states(t, db, d, p); got != want {
						t.Fatalf("status after the failure = %q, want %q", got, want)
					}
					if got := version(t, db, d, p); got != wantV {
						t.Fatalf("version after the failure = %d, want %d", got, wantV)
					}
					if rolled, err := migrations.Down(ctx, db, d, p, v-1); err != nil || !slices.Equal(rolled, []int{v}) {
						t.Fatalf("Down again = %v, %v", rolled, err)
					}
					if got, want := states(t, db, d, p), statusWith(v, "pending"); got != want {
						t.Fatalf("status after Down again = %q, want %q", got, want)
					}
					return
				}
				_, err := migrations.Apply(failing, db, d, p)
				if !errors.Is(err, errInjected) {
					t.Fatalf("Apply with a failing statement = %v", err)
				}
				want := statusWith(v, "partly applied")
				if transactional {
					want = statusWith(v, "pending")
					if _, err := count(ctx, db, created(p)); err == nil {
						t.Errorf("%s survived a failed transactional migration", created(p))
					}
				} else if !strings.Contains(err.Error(), "run Apply, or plenum migrate up, again") {
					t.Errorf("the error does not say how to complete the migration: %v", err)
				}
				if got := states(t, db, d, p); got != want {
					t.Fatalf("status after the failure = %q, want %q", got, want)
				}
				if got := version(t, db, d, p); got != v-1 {
					t.Fatalf("version after the failure = %d, want %d", got, v-1)
				}
				if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
					t.Fatalf("core.Open on a half-applied version = %v, want ErrSchemaOutdated", err)
				}
				if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, versionsFrom(v)) {
					t.Fatalf("Apply again = %v, %v", applied, err)
				}
				if got, want := states(t, db, d, p), statusWith(migrations.LatestVersion+1, ""); got != want {
					t.Fatalf("status after Apply again = %q, want %q", got, want)
				}
				checkBackfill(t, db, d, p)
				if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); err != nil {
					t.Fatalf("core.Open after completing: %v", err)
				}
			})
		}
	}
}
