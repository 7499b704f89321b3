package core

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/migrations"
)

// FailurePolicy says what a barrier does when some of its children died or
// were cancelled.
type FailurePolicy string

const (
	// JoinSeesFailures fires the barrier as usual once every child
	// finished; the join reads each child's state and result. The default.
	JoinSeesFailures FailurePolicy = "join"
	// FailBarrier fires the barrier once every child finished, but if any
	// failed, the join item is created dead (with the count in its last
	// error) instead of available, and counts as a failure at the barrier
	// above, so the failure travels up nested fan-ins.
	FailBarrier FailurePolicy = "fail"
)

// JoinSpec describes the item a barrier enqueues when it fires. The fields
// mean what they mean in ItemSpec: Queue is required, the rest default as
// there.
type JoinSpec struct {
	Queue       string
	Kind        string
	Payload     json.RawMessage
	Priority    int
	MaxAttempts int
}

// BarrierSpec describes a fan-in barrier owned by a parent item.
type BarrierSpec struct {
	// Name is unique per parent: opening the same name again returns the same
	// barrier (get-or-create), so a parent claimed again after a crash finds
	// it. Required, up to 128 characters, under ItemSpec.Queue's rules for
	// names.
	Name string
	// Join is the item enqueued, exactly once, when the barrier fires.
	Join JoinSpec
	// OnChildFailure: default JoinSeesFailures.
	OnChildFailure FailurePolicy
}

// Barrier is a fan-in barrier as stored.
type Barrier struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Name    string
	// ParentBarrierID is the barrier the join reports to: the owner's own
	// barrier, set at sealing (see Fenced.Seal).
	ParentBarrierID uuid.UUID
	// Expected counts the children really inserted; Arrived those
	// completed; Failed those dead or cancelled.
	Expected, Arrived, Failed int64
	Sealed                    bool
	FiredAt                   time.Time
	// Cursor is the dispatch cursor saved with the last batch of children.
	Cursor         string
	OnChildFailure FailurePolicy
	// JoinItemID is the join item, once fired.
	JoinItemID uuid.UUID
	// Run is the run of the barrier's owner, which its join belongs to.
	Run uuid.UUID
	// Generation counts the times the barrier was re-armed
	// (ReviveBarrier): 0 until then.
	Generation int64
	CreatedAt  time.Time
}

// Fired reports whether the barrier has fired.
func (b Barrier) Fired() bool { return !b.FiredAt.IsZero() }

// ChildSpec describes one child of a barrier.
type ChildSpec struct {
	// Key identifies the child within its barrier and makes adding it
	// idempotent: required, deterministic (the same child gets the same key
	// when a crashed dispatch runs again), up to 200 characters.
	Key string
	// Queue defaults to the parent's queue. The other fields mean what
	// they mean in ItemSpec.
	Queue       string
	Kind        string
	Payload     json.RawMessage
	Priority    int
	Delay       time.Duration
	MaxAttempts int
	// FlowKey and Cost put the child in its key's lane of its queue, as
	// ItemSpec's do. A barrier's join has neither.
	FlowKey string
	Cost    int
	// Tags and Metadata are the child's, as ItemSpec's; a child added
	// again (its key already in the barrier) keeps those it was added
	// with.
	Tags     []string
	Metadata map[string]string
}

const barrierColumns = "id, owner_id, name, parent_barrier_id, expected, arrived, failed, sealed, fired_at, dispatch_cursor, on_child_failure, join_item_id, created_at, run_id, generation"

func scanBarrier(d dialect.Dialect, r scanner) (Barrier, error) {
	var (
		b              Barrier
		parent, joinID uuid.NullUUID
		run            uuid.NullUUID
		generation     sql.NullInt64
		cursor         sql.NullString
		policy         string
		fired, created = timeValue{d: d}, timeValue{d: d}
	)
	err := r.Scan(&b.ID, &b.OwnerID, &b.Name, &parent, &b.Expected, &b.Arrived, &b.Failed, &b.Sealed, &fired, &cursor, &policy, &joinID, &created, &run, &generation)
	if err != nil {
		return Barrier{}, err
	}
	b.ParentBarrierID, b.JoinItemID, b.Cursor, b.OnChildFailure = parent.UUID, joinID.UUID, cursor.String, FailurePolicy(policy)
	b.FiredAt, b.CreatedAt = fired.t, created.t
	b.Run, b.Generation = run.UUID, generation.Int64
	return b, nil
}

// OpenBarrier gets or creates the barrier named spec.Name owned by the
// fenced item.
func (f *Fenced) OpenBarrier(ctx context.Context, spec BarrierSpec) (Barrier, error) {
	s := f.s
	if err := validName("Name", spec.Name, migrations.MaxBarrierNameLen, true); err != nil {
		return Barrier{}, err
	}
	if spec.OnChildFailure == "" {
		spec.OnChildFailure = JoinSeesFailures
	}
	if spec.OnChildFailure != JoinSeesFailures && spec.OnChildFailure != FailBarrier {
		return Barrier{}, invalid("OnChildFailure", "%q is not a policy", spec.OnChildFailure)
	}
	j := spec.Join
	if err := s.validateSpec(&ItemSpec{Queue: j.Queue, Kind: j.Kind, Payload: j.Payload, Priority: j.Priority, MaxAttempts: j.MaxAttempts}, "Join."); err != nil {
		return Barrier{}, err
	}
	if j.MaxAttempts == 0 {
		j.MaxAttempts = s.opts.DefaultMaxAttempts
	}
	run, err := f.runID(ctx)
	if err != nil {
		return Barrier{}, err
	}
	id := uuid.Must(uuid.NewV7())
	stmt := s.barrierOpenSQL()
	if _, err := f.tx.ExecContext(ctx, stmt, s.d.UUID(id), s.d.UUID(f.c.ID), spec.Name, s.d.Bool(false),
		j.Queue, j.Kind, s.jsonArg(j.Payload), j.Priority, j.MaxAttempts, string(spec.OnChildFailure), nullUUID(s.d, run)); err != nil {
		return Barrier{}, err
	}
	b, err := scanBarrier(s.d, f.tx.QueryRowContext(ctx, s.sql(qBarrierByName), s.d.UUID(f.c.ID), spec.Name))
	if err != nil {
		return Barrier{}, err
	}
	return b, nil
}

// AddChildrenParams describe one batch of children.
type AddChildrenParams struct {
	// Barrier must be owned by the fenced item and not sealed.
	Barrier uuid.UUID
	// From is the dispatch cursor the batch starts at: the barrier's saved
	// cursor must equal it, or ErrCursorMoved is returned and nothing is
	// added. To is the cursor saved with the batch. Both are text: valid
	// UTF-8 without NUL bytes, at most MaxCursorBytes.
	From, To string
	Children []ChildSpec
}

// AddChildren inserts a batch of children with insert-or-ignore on their
// keys, grows the barrier's expected count by the rows really inserted, and
// saves the dispatch cursor, all in the fence's transaction. Running the
// same batch again after a crash inserts nothing twice. It returns how many
// children were new.
func (f *Fenced) AddChildren(ctx context.Context, p AddChildrenParams) (int, error) {
	s := f.s
	if err := validText("From", p.From, MaxCursorBytes); err != nil {
		return 0, err
	}
	if err := validText("To", p.To, MaxCursorBytes); err != nil {
		return 0, err
	}
	specs := make([]ItemSpec, len(p.Children))
	seen := make(map[string]bool, len(p.Children))
	for i, c := range p.Children {
		if c.Key == "" {
			return 0, invalid(fmt.Sprintf("Children[%d].Key", i), "must not be empty: children need deterministic keys")
		}
		if seen[c.Key] {
			return 0, invalid(fmt.Sprintf("Children[%d].Key", i), "%q appears twice in the batch", c.Key)
		}
		seen[c.Key] = true
		q := c.Queue
		if q == "" {
			q = f.c.Queue
		}
		specs[i] = ItemSpec{Queue: q, Kind: c.Kind, Payload: c.Payload, Priority: c.Priority, Delay: c.Delay, MaxAttempts: c.MaxAttempts, Key: c.Key, FlowKey: c.FlowKey, Cost: c.Cost, Tags: c.Tags, Metadata: c.Metadata}
		if err := s.validateSpec(&specs[i], fmt.Sprintf("Children[%d].", i)); err != nil {
			return 0, err
		}
	}
	var sealed bool
	var cursor sql.NullString
	var run uuid.NullUUID
	err := f.tx.QueryRowContext(ctx, s.sql(qBarrierLockDispatch),
		s.d.UUID(p.Barrier), s.d.UUID(f.c.ID)).Scan(&sealed, &cursor, &run)
	if sqlkit.IsNoRows(err) {
		return 0, fmt.Errorf("plenum: barrier %s of item %s: %w", p.Barrier, f.c.ID, ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	if sealed {
		return 0, fmt.Errorf("plenum: barrier %s: %w", p.Barrier, ErrBarrierSealed)
	}
	if cursor.String != p.From {
		return 0, fmt.Errorf("plenum: barrier %s at %q, batch starts at %q: %w", p.Barrier, cursor.String, p.From, ErrCursorMoved)
	}
	for i := range specs {
		specs[i].Run = run.UUID
	}
	inserted := 0
	if len(specs) > 0 {
		out, err := s.insertItems(ctx, f.tx, specs, p.Barrier, p.Barrier.String()+"/")
		if err != nil {
			return 0, err
		}
		for _, e := range out {
			if !e.Existed {
				inserted++
			}
		}
	}
	_, err = f.tx.ExecContext(ctx, s.sql(qBarrierDispatched),
		inserted, nullString(p.To), s.d.UUID(p.Barrier))
	return inserted, err
}

// Seal ends the barrier's dispatch: no child can be added after it. It
// tries to fire the barrier (one whose children all finished before the
// seal, or that has none, fires here) and reports whether it fired.
// Sealing a sealed barrier does nothing.
//
// The barrier's join reports where the fenced item reports (its own
// barrier, B1): B1 then expects one more arrival, the join's. The fenced
// item stays a member of B1 too, and its own end (completed, dead or
// cancelled) counts there, unless it completes in this same transaction
// (Fenced.Complete after Seal, as Expand does with CompleteParent): then
// the join takes the item's place at B1 instead. Either way B1 fires only
// after both the item and the join have finished, so the join of B1 never
// runs before the item and its own fan-in are done, and never misses the
// item's failure. Seal after Complete in the same fence is refused: the
// item's arrival could already have fired B1.
func (f *Fenced) Seal(ctx context.Context, barrier uuid.UUID) (fired bool, err error) {
	return f.seal(ctx, barrier, false)
}

// seal is Seal; completing says the caller completes the item right after,
// in this transaction (Expand with CompleteParent), so the join takes the
// item's place at once: no count moves at the barrier above.
func (f *Fenced) seal(ctx context.Context, barrier uuid.UUID, completing bool) (fired bool, err error) {
	s := f.s
	if f.completed {
		return false, invalid("Seal", "the fenced item was already completed in this fence: seal before completing, so that the barrier's join reports where the item did")
	}
	var sealed bool
	err = f.tx.QueryRowContext(ctx, s.sql(qBarrierLockSealed),
		s.d.UUID(barrier), s.d.UUID(f.c.ID)).Scan(&sealed)
	if sqlkit.IsNoRows(err) {
		return false, fmt.Errorf("plenum: barrier %s of item %s: %w", barrier, f.c.ID, ErrNotFound)
	}
	if err != nil || sealed {
		return false, err
	}
	var own uuid.NullUUID
	if err := f.tx.QueryRowContext(ctx, s.sql(qItemBarrier), s.d.UUID(f.c.ID)).Scan(&own); err != nil {
		return false, err
	}
	above := own.UUID
	if !own.Valid {
		// The item already handed its membership to an earlier barrier's
		// join (tables written before the item stayed a member): this join
		// reports to the same place.
		var earlier uuid.NullUUID
		err := f.tx.QueryRowContext(ctx, s.sql(qEarlierParent(s.d)),
			s.d.UUID(f.c.ID)).Scan(&earlier)
		if err != nil && !sqlkit.IsNoRows(err) {
			return false, err
		}
		above = earlier.UUID
	}
	parent := uuid.Nil
	if own.Valid && completing {
		// The join takes the item's place, and the item leaves.
		parent = own.UUID
		if _, err := f.tx.ExecContext(ctx, s.sql(qItemLeaveBarrier), s.d.UUID(f.c.ID)); err != nil {
			return false, err
		}
	} else if above != uuid.Nil {
		// The join is one more arrival there (unless it already fired,
		// which a member that has not finished keeps from happening).
		res, err := f.tx.ExecContext(ctx, s.sql(qBarrierExpectOne), s.d.UUID(above))
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 1 {
			parent = above
			if own.Valid {
				f.handover = above
			}
		}
	}
	if _, err := f.tx.ExecContext(ctx, s.sql(qBarrierSeal),
		s.d.Bool(true), nullUUID(s.d, parent), s.d.UUID(barrier)); err != nil {
		return false, err
	}
	return s.tryFire(ctx, f.tx, barrier)
}

// handOver gives the fenced item's place at its barrier to the join of a
// barrier it sealed in this transaction, just before the item completes:
// the item leaves the barrier and the expected count it held goes to the
// join, which Seal already added. The item's completion then counts
// nowhere, and the barrier above fires when the join arrives.
func (f *Fenced) handOver(ctx context.Context) error {
	s := f.s
	if _, err := f.tx.ExecContext(ctx, s.sql(qItemLeaveBarrier), s.d.UUID(f.c.ID)); err != nil {
		return err
	}
	_, err := f.tx.ExecContext(ctx, s.sql(qBarrierHandOver), s.d.UUID(f.handover))
	return err
}

// arrival is one barrier's share of the terminal transitions of one
// transaction.
type arrival struct {
	barrier         uuid.UUID
	arrived, failed int64
}

// settle counts terminal transitions at their barriers: one counter update
// per barrier, barriers locked in id order (after the items, which the
// caller already locked), then one attempt to fire each. A join created dead
// by a failing barrier counts in turn at the barrier above.
func (s *Store) settle(ctx context.Context, tx dialect.Querier, arrivals []arrival) error {
	for len(arrivals) > 0 {
		sum := map[uuid.UUID]*arrival{}
		var ids []uuid.UUID
		for _, a := range arrivals {
			if a.barrier == uuid.Nil {
				continue
			}
			t, ok := sum[a.barrier]
			if !ok {
				t = &arrival{barrier: a.barrier}
				sum[a.barrier] = t
				ids = append(ids, a.barrier)
			}
			t.arrived += a.arrived
			t.failed += a.failed
		}
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
		arrivals = nil
		due := ids[:0]
		for _, id := range ids {
			ok, err := s.arrive(ctx, tx, id, sum[id])
			if err != nil {
				return err
			}
			if ok {
				due = append(due, id)
			}
		}
		for _, id := range due {
			up, _, err := s.fireOnce(ctx, tx, id)
			if err != nil {
				return err
			}
			if up.barrier != uuid.Nil {
				arrivals = append(arrivals, up)
			}
		}
	}
	return nil
}

// arrive adds t's counts to barrier and reports whether it may be due to
// fire. Where UPDATE ... RETURNING exists, the update itself tells; else
// every barrier that counted arrivals gets its attempt to fire.
func (s *Store) arrive(ctx context.Context, tx dialect.Querier, barrier uuid.UUID, t *arrival) (bool, error) {
	if !s.caps.ReturningUpdate {
		_, err := tx.ExecContext(ctx, s.sql(qBarrierArrive), t.arrived, t.failed, s.d.UUID(barrier))
		return true, err
	}
	var due int
	err := tx.QueryRowContext(ctx, s.sql(qBarrierArriveDue), t.arrived, t.failed, s.d.UUID(barrier), s.d.Bool(true)).Scan(&due)
	if sqlkit.IsNoRows(err) {
		// No such barrier (purged): nothing to count or fire.
		return false, nil
	}
	return due == 1, err
}

// tryFire fires barrier if it is due, and settles what that sets off.
func (s *Store) tryFire(ctx context.Context, tx dialect.Querier, barrier uuid.UUID) (bool, error) {
	up, fired, err := s.fireOnce(ctx, tx, barrier)
	if err != nil || !fired {
		return fired, err
	}
	if up.barrier != uuid.Nil {
		return true, s.settle(ctx, tx, []arrival{up})
	}
	return true, nil
}

// fireOnce is the exactly-once step: a conditional update that only one
// transaction can make, after which that transaction alone enqueues the join
// item. It returns the arrival the join causes above, if it was created
// dead.
func (s *Store) fireOnce(ctx context.Context, tx dialect.Querier, barrier uuid.UUID) (arrival, bool, error) {
	joinID := uuid.Must(uuid.NewV7())
	res, err := tx.ExecContext(ctx, s.sql(qBarrierFire),
		s.d.UUID(joinID), s.d.UUID(barrier), s.d.Bool(true))
	if err != nil {
		return arrival{}, false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return arrival{}, false, err
	}
	if err := fault.Hit(ctx, fault.FireBeforeJoin); err != nil {
		return arrival{}, false, err
	}
	var (
		parent, run      uuid.NullUUID
		runState         sql.NullString
		failed           int64
		policy, queue    string
		kind             sql.NullString
		payload          rawJSON
		priority, maxAtt int
		fb               = FiredBarrier{ID: barrier, JoinItemID: joinID}
	)
	err = tx.QueryRowContext(ctx, s.sql(qBarrierJoinSpec),
		s.d.UUID(barrier)).Scan(&parent, &failed, &policy, &queue, &kind, &payload, &priority, &maxAtt, &fb.OwnerID, &fb.Name, &fb.Expected, &fb.Arrived, &run, &runState)
	if err != nil {
		return arrival{}, false, err
	}
	fb.Failed, fb.JoinQueue, fb.JoinKind = failed, queue, kind.String
	fb.JoinDead = FailurePolicy(policy) == FailBarrier && failed > 0
	noteFired(tx, fb)
	args := []any{s.d.UUID(joinID), queue, kind.String, s.jsonArg(json.RawMessage(payload)), priority, maxAtt, nullUUID(s.d, parent.UUID), s.d.UUID(barrier), nullUUID(s.d, run.UUID)}
	if RunState(runState.String) == RunCancelled {
		// A cancelled run runs nothing more: its join is born cancelled,
		// and counts as a failure above like any cancelled item.
		if _, err := tx.ExecContext(ctx, s.sql(qJoinCancelled), args...); err != nil {
			return arrival{}, false, err
		}
		return arrival{barrier: parent.UUID, failed: 1}, true, nil
	}
	if FailurePolicy(policy) == FailBarrier && failed > 0 {
		args = append(args, fmt.Sprintf("barrier failed: %d children failed", failed))
		if _, err := tx.ExecContext(ctx, s.sql(qJoinDead), args...); err != nil {
			return arrival{}, false, err
		}
		// A join born dead is a death in the run like any other.
		if _, err := s.haltRunsOf(ctx, tx, []uuid.UUID{joinID}, HaltChildrenFailed, args[len(args)-1].(string)); err != nil {
			return arrival{}, false, err
		}
		return arrival{barrier: parent.UUID, failed: 1}, true, nil
	}
	if _, err := tx.ExecContext(ctx, s.sql(qJoinInsert), args...); err != nil {
		return arrival{}, false, err
	}
	if err := s.itemsReady(ctx, tx, queue); err != nil {
		return arrival{}, false, err
	}
	return arrival{}, true, nil
}

// GetBarrier returns the barrier with the given id.
func (s *Store) GetBarrier(ctx context.Context, id uuid.UUID) (Barrier, error) {
	var b Barrier
	err := s.read(ctx, "get barrier", func() (err error) {
		b, err = scanBarrier(s.d, s.db.QueryRowContext(ctx, s.sql(qBarrierGet), s.d.UUID(id)))
		return err
	})
	if sqlkit.IsNoRows(err) {
		return Barrier{}, fmt.Errorf("plenum: barrier %s: %w", id, ErrNotFound)
	}
	return b, err
}

// UnfiredBarriersParams choose the unfired barriers to list.
type UnfiredBarriersParams struct {
	// OlderThan lists only barriers created at least this long ago, on the
	// database clock: 0 to MaxUnfiredAge. Zero lists every unfired barrier.
	OlderThan time.Duration
	// Limit is the most barriers returned: 1 to 10,000. Default 100.
	Limit int
}

// MaxUnfiredAge bounds UnfiredBarriersParams.OlderThan.
const MaxUnfiredAge = 10 * 365 * 24 * time.Hour

// UnfiredBarriers returns barriers that have not fired, oldest first (by
// creation, then id). A barrier unfired long after its children should
// have finished is a fan-in to look at: unsealed means its dispatch never
// finished (run the parent's Expand again); sealed means children are
// still pending (Children lists them). The scan reads an index of unfired
// barriers only, so its cost does not grow with the barriers that fired.
func (s *Store) UnfiredBarriers(ctx context.Context, p UnfiredBarriersParams) ([]Barrier, error) {
	if p.OlderThan < 0 || p.OlderThan > MaxUnfiredAge {
		return nil, invalid("OlderThan", "%v is outside [0, %v]", p.OlderThan, MaxUnfiredAge)
	}
	if p.Limit == 0 {
		p.Limit = 100
	}
	if p.Limit < 1 || p.Limit > maxPage {
		return nil, invalid("Limit", "%d is outside [1, %d]", p.Limit, maxPage)
	}
	return readRows(ctx, s, "unfired barriers", s.sql(qUnfired(s.d, p.Limit)), func(r scanner) (Barrier, error) { return scanBarrier(s.d, r) }, -micros(p.OlderThan))
}

// ChildrenParams page through a barrier's children.
type ChildrenParams struct {
	Barrier uuid.UUID
	// After is the last id of the previous page; uuid.Nil for the first.
	After uuid.UUID
	// Limit is the page size: 1 to 10,000.
	Limit int
}

// Children returns one page of a barrier's children in id order (a keyset
// page: cost independent of how far in the page is). A join reads its
// barrier's results with it, page after page, however large the fan-in.
func (s *Store) Children(ctx context.Context, p ChildrenParams) ([]Item, error) {
	if p.Limit < 1 || p.Limit > maxPage {
		return nil, invalid("Limit", "%d is outside [1, %d]", p.Limit, maxPage)
	}
	return readRows(ctx, s, "children", s.sql(qChildren(s.d, p.Limit)), func(r scanner) (Item, error) { return scanItem(s.d, r) }, s.d.UUID(p.Barrier), s.d.UUID(p.After))
}
