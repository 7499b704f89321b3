package core

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/storesql"
)

// State is where an item is in its life.
type State string

// The states of an item. Completed, Dead and Cancelled are terminal.
const (
	// Available items wait to be claimed once their available_at passes.
	StateAvailable State = "available"
	// Claimed items are held by an owner under a claim token and a lease.
	StateClaimed State = "claimed"
	// Completed items finished successfully.
	StateCompleted State = "completed"
	// Dead items used up their attempts or crashed their workers too often.
	// Revive makes one available again.
	StateDead State = "dead"
	// Cancelled items were cancelled by id.
	StateCancelled State = "cancelled"
)

// Terminal reports whether s is a final state.
func (s State) Terminal() bool {
	return s == StateCompleted || s == StateDead || s == StateCancelled
}

// Item is a unit of work as stored. Times are the database's, in UTC; a zero
// time or uuid.Nil stands for NULL.
type Item struct {
	ID    uuid.UUID
	Queue string
	Kind  string
	// Key is the idempotency key as stored: empty for none; for a child of
	// a barrier, the barrier's id, a slash, and the child's key.
	Key     string
	Payload json.RawMessage
	// Priority: lower numbers are claimed first.
	Priority    int
	State       State
	AvailableAt time.Time
	// Attempt counts claims that were not given back, including the
	// current one.
	Attempt int
	// MaxAttempts is the most attempts the item gets: the enqueue's, or
	// the lower limit of its kind that a claim stored (ClaimParams.MaxAttempts).
	MaxAttempts int
	// CrashCount counts claims released because their owner died.
	CrashCount int
	// ClaimToken and ClaimedBy are those of the latest claim; they stay
	// after the item completes (so a completion can be recognised as one's
	// own), and Cancel clears the token.
	ClaimToken     uuid.UUID
	ClaimedBy      uuid.UUID
	ClaimedAt      time.Time
	LeaseExpiresAt time.Time
	// BarrierID is the barrier this item reports to when it finishes.
	BarrierID uuid.UUID
	// JoinOf is set on a join item: the barrier whose firing enqueued it.
	// Read that barrier's children with Store.Children.
	JoinOf uuid.UUID
	// Run is the run the item belongs to, or uuid.Nil.
	Run uuid.UUID
	// WaitName is the signal the item waits for (Fenced.Await), while it
	// waits or until the handler that claims it again takes the signal or
	// the timeout; WaitUntil is the wait's deadline (zero for none).
	WaitName  string
	WaitUntil time.Time
	// FlowKey is the item's flow key (ItemSpec.FlowKey), empty for none;
	// Cost the claims of its key's rate limit it counts for, 1 for an
	// item with a key, 0 for one without.
	FlowKey    string
	Cost       int
	Result     json.RawMessage
	LastError  string
	CreatedAt  time.Time
	FinishedAt time.Time
}

// Waiting reports whether the item waits for a signal: available, but not
// claimable before the signal comes or WaitUntil passes.
func (it Item) Waiting() bool { return it.State == StateAvailable && it.WaitName != "" }

// itemColumns is the column list every item read selects, in scan order.
const itemColumns = "id, queue, kind, unique_key, payload, priority, state, available_at, attempt, max_attempts, crash_count, " +
	"claim_token, claimed_by, claimed_at, lease_expires_at, barrier_id, join_barrier_id, result, last_error, created_at, finished_at, " +
	"run_id, wait_name, wait_until, flow_key, cost"

// scanner is a row to scan: a *sql.Row or a *sql.Rows.
type scanner = storesql.Scanner

func scanItem(d dialect.Dialect, r scanner) (Item, error) {
	var (
		it                                                  Item
		key, lastErr, kind, waitName, flowKey               sql.NullString
		cost                                                sql.NullInt64
		state                                               string
		token, by, barrier, join, run                       uuid.NullUUID
		avail, claimedAt, lease, created, finish, waitUntil timeValue
	)
	avail.d, claimedAt.d, lease.d, created.d, finish.d, waitUntil.d = d, d, d, d, d, d
	err := r.Scan(&it.ID, &it.Queue, &kind, &key, (*rawJSON)(&it.Payload), &it.Priority, &state, &avail,
		&it.Attempt, &it.MaxAttempts, &it.CrashCount, &token, &by, &claimedAt, &lease, &barrier, &join,
		(*rawJSON)(&it.Result), &lastErr, &created, &finish, &run, &waitName, &waitUntil, &flowKey, &cost)
	if err != nil {
		return Item{}, err
	}
	it.FlowKey, it.Cost = flowKey.String, int(cost.Int64)
	it.Key, it.LastError, it.Kind, it.State = key.String, lastErr.String, kind.String, State(state)
	it.ClaimToken, it.ClaimedBy, it.BarrierID, it.JoinOf = token.UUID, by.UUID, barrier.UUID, join.UUID
	it.Run, it.WaitName, it.WaitUntil = run.UUID, waitName.String, waitUntil.t
	it.AvailableAt, it.ClaimedAt, it.LeaseExpiresAt, it.CreatedAt, it.FinishedAt = avail.t, claimedAt.t, lease.t, created.t, finish.t
	return it, nil
}

// claimedColumns are the columns a claim returns of each item it takes, in
// claimScanner's order: all of itemColumns but those whose values the claim
// set itself (state, claim token, owner) or filtered on (queue). Less to
// send, decode and allocate per item on the hot path.
var claimedColumns = []string{"id", "kind", "unique_key", "payload", "priority", "available_at", "attempt",
	"max_attempts", "crash_count", "claimed_at", "lease_expires_at", "barrier_id", "join_barrier_id", "result",
	"last_error", "created_at", "finished_at", "run_id", "wait_name", "wait_until", "flow_key", "cost"}

// claimScanner reads rows of claimedColumns into claims of one queue, owner
// and token. Its destinations are made once per claim, not per row: a
// claim's rows are the hot path's allocations.
type claimScanner struct {
	queue        string
	owner, token uuid.UUID
	it           Item
	key, lastErr sql.NullString
	kind         sql.NullString
	barrier      uuid.NullUUID
	join         uuid.NullUUID
	run          uuid.NullUUID
	waitName     sql.NullString
	waitUntil    timeValue
	flowKey      sql.NullString
	cost         sql.NullInt64
	avail        timeValue
	claimedAt    timeValue
	lease        timeValue
	created      timeValue
	finish       timeValue
	dest         []any
}

func newClaimScanner(d dialect.Dialect, queue string, owner, token uuid.UUID) *claimScanner {
	c := &claimScanner{queue: queue, owner: owner, token: token}
	c.avail.d, c.claimedAt.d, c.lease.d, c.created.d, c.finish.d, c.waitUntil.d = d, d, d, d, d, d
	it := &c.it
	c.dest = []any{&it.ID, &c.kind, &c.key, (*rawJSON)(&it.Payload), &it.Priority, &c.avail,
		&it.Attempt, &it.MaxAttempts, &it.CrashCount, &c.claimedAt, &c.lease, &c.barrier, &c.join,
		(*rawJSON)(&it.Result), &c.lastErr, &c.created, &c.finish, &c.run, &c.waitName, &c.waitUntil, &c.flowKey, &c.cost}
	return c
}

// scan reads the current row of r.
func (c *claimScanner) scan(r scanner) (Claim, error) {
	c.it = Item{}
	if err := r.Scan(c.dest...); err != nil {
		return Claim{}, err
	}
	it := c.it
	it.Queue, it.State, it.ClaimToken, it.ClaimedBy = c.queue, StateClaimed, c.token, c.owner
	it.Key, it.LastError, it.Kind = c.key.String, c.lastErr.String, c.kind.String
	it.BarrierID, it.JoinOf = c.barrier.UUID, c.join.UUID
	it.Run, it.WaitName, it.WaitUntil = c.run.UUID, c.waitName.String, c.waitUntil.t
	it.FlowKey, it.Cost = c.flowKey.String, int(c.cost.Int64)
	it.AvailableAt, it.ClaimedAt, it.LeaseExpiresAt, it.CreatedAt, it.FinishedAt = c.avail.t, c.claimedAt.t, c.lease.t, c.created.t, c.finish.t
	return Claim{Item: it, Token: c.token, Owner: c.owner}, nil
}

// timeValue scans a time column through the dialect; NULL gives the zero
// time.
type timeValue struct {
	d dialect.Dialect
	t time.Time
}

func (v *timeValue) Scan(src any) error {
	t, err := storesql.ScanTime(v.d, src)
	if err != nil {
		return err
	}
	v.t = t
	return nil
}

// rawJSON scans a JSON column of any driver representation into bytes.
type rawJSON json.RawMessage

func (j *rawJSON) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case []byte:
		*j = append((*j)[:0:0], v...)
	case string:
		*j = rawJSON(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("plenum: cannot read JSON column from %T", src)
		}
		*j = b
	}
	return nil
}

// nullUUID returns the dialect's bind value for u, or nil for uuid.Nil.
func nullUUID(d dialect.Dialect, u uuid.UUID) any {
	if u == uuid.Nil {
		return nil
	}
	return d.UUID(u)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
