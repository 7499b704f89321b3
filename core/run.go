package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/migrations"
)

// RunState is where a run is in its life.
type RunState string

// The states of a run. Completed and Cancelled are final; a halted run can
// be revived (ReviveRun).
const (
	// RunRunning: the run's items are being worked on.
	RunRunning RunState = "running"
	// RunWaiting: the run waits for something outside it (a signal). The
	// core never sets it by itself: it is the caller's to set and clear
	// (UpdateRun), and a run that waits can halt, finish or be cancelled
	// as a running one can.
	RunWaiting RunState = "waiting"
	// RunHalted: the run stopped on a failure (HaltReason says which)
	// and waits for ReviveRun or CancelRun.
	RunHalted RunState = "halted"
	// RunCompleted: the run finished with its Output.
	RunCompleted RunState = "completed"
	// RunCancelled: the run was cancelled (CancelRun).
	RunCancelled RunState = "cancelled"
)

// Final reports whether s is a state a run never leaves.
func (s RunState) Final() bool { return s == RunCompleted || s == RunCancelled }

// The halt reasons the core writes by itself, when an item of a run dies.
// Callers halting a run (Fenced.Halt, UpdateRun) give their own.
const (
	// HaltAttemptsExhausted: an item of the run failed its last attempt
	// (Fail, or a lease that expired on its last attempt), or was failed
	// with Discard.
	HaltAttemptsExhausted = "attempts_exhausted"
	// HaltCrashesExhausted: an item of the run crashed its workers more
	// often than the reaper allows.
	HaltCrashesExhausted = "crashes_exhausted"
	// HaltChildrenFailed: a barrier of the run whose policy is FailBarrier
	// fired with failed children, and its join was created dead.
	HaltChildrenFailed = "children_failed"
)

// HaltItem is the item a run enqueues, in the same transaction, each time
// it halts: the way to hear of a halt that cannot be lost to a crash (a
// hook called after the commit could be). Its payload is a HaltNotice; its
// key is "halt/" and the halt's id, so it is enqueued once per halt.
type HaltItem struct {
	// Queue is required: 1 to 128 characters.
	Queue string
	// Kind may be empty.
	Kind string
}

// HaltNotice is the payload of a run's HaltItem.
type HaltNotice struct {
	Run    uuid.UUID `json:"run"`
	HaltID uuid.UUID `json:"halt_id"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail,omitempty"`
	// Item is the item whose death halted the run (uuid.Nil when a halt
	// was asked for through UpdateRun).
	Item uuid.UUID `json:"item"`
}

// RunSpec describes a run to create.
type RunSpec struct {
	// Name names what runs (a pipeline's name): required, 1 to 128 characters,
	// under ItemSpec.Queue's rules for names (Key too).
	Name string
	// Key, when not empty, makes creating the run idempotent: a run with
	// the same Name and Key that already exists is returned instead of a
	// new one, and nothing is enqueued. Up to 200 characters.
	Key string
	// Input is the run's input, a JSON document (or nil) under the rules
	// of ItemSpec.Payload.
	Input json.RawMessage
	// OnHalt, when set, is enqueued each time the run halts.
	OnHalt *HaltItem
	// Version is the version of what runs (a pipeline definition's
	// version), kept with the run for those that run and read it: 0 for
	// none, or 1 to MaxRunVersion. Default: none.
	Version int
}

// MaxRunVersion bounds RunSpec.Version.
const MaxRunVersion = 1<<31 - 1

// Run is a run as stored. A zero time or uuid.Nil stands for NULL.
type Run struct {
	ID     uuid.UUID
	Name   string
	Key    string
	State  RunState
	Input  json.RawMessage
	Output json.RawMessage
	// HaltReason, HaltDetail, HaltID and HaltItemID describe the latest
	// halt while the run is halted, as its HaltNotice does; reviving the
	// run clears them. Each halt has its own HaltID. HaltDetail is the
	// dead item's last error when the core halted the run because an item
	// died (HaltAttemptsExhausted, HaltCrashesExhausted), or the detail
	// the halt was asked with. HaltItemID is the item whose death halted
	// the run (uuid.Nil when UpdateRun halted it outside a fence, and for
	// halts stored before schema version 7).
	HaltReason string
	HaltDetail string
	HaltID     uuid.UUID
	HaltItemID uuid.UUID
	// HaltItem is the run's OnHalt, or nil.
	HaltItem *HaltItem
	// Version is RunSpec.Version, 0 for none (and for the runs created
	// before schema version 14).
	Version    int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
}

// CreateRunResult is the outcome of creating a run.
type CreateRunResult struct {
	ID uuid.UUID
	// Existed is true when a run with the same Name and Key already
	// existed: ID is then that run's, and nothing was enqueued.
	Existed bool
}

// CreateRun creates a run and enqueues its first items in one transaction.
// Each of first belongs to the new run (its Run field is set). With a Key
// that an existing run has, it changes nothing and returns that run.
func (s *Store) CreateRun(ctx context.Context, spec RunSpec, first ...ItemSpec) (CreateRunResult, []EnqueueResult, error) {
	if err := s.validateRun(spec, first); err != nil {
		return CreateRunResult{}, nil, err
	}
	var (
		rc  CreateRunResult
		out []EnqueueResult
	)
	err := s.inTx(ctx, "create run", func(tx dialect.Tx) error {
		var err error
		rc, out, err = s.createRun(ctx, tx, spec, first)
		return err
	})
	return rc, out, err
}

// CreateRunTx is CreateRun inside the caller's own transaction: the run and
// its first items exist if and only if the caller's transaction commits, so
// that a caller can create a run exactly once together with its own writes.
// There is no retry, and no wake-up in this process (see EnqueueTx).
func (s *Store) CreateRunTx(ctx context.Context, tx dialect.Querier, spec RunSpec, first ...ItemSpec) (CreateRunResult, []EnqueueResult, error) {
	if tx == nil {
		return CreateRunResult{}, nil, invalid("tx", "nil transaction")
	}
	if err := s.validateRun(spec, first); err != nil {
		return CreateRunResult{}, nil, err
	}
	rc, out, err := s.createRun(ctx, tx, spec, first)
	return rc, out, wrapDBError("create run", err)
}

func (s *Store) validateRun(spec RunSpec, first []ItemSpec) error {
	if err := validName("Name", spec.Name, migrations.MaxRunNameLen, true); err != nil {
		return err
	}
	if err := validName("Key", spec.Key, migrations.MaxKeyLen, false); err != nil {
		return err
	}
	if err := s.validJSON("Input", spec.Input); err != nil {
		return err
	}
	if spec.Version < 0 || spec.Version > MaxRunVersion {
		return invalid("Version", "%d is outside [0, %d]", spec.Version, MaxRunVersion)
	}
	if h := spec.OnHalt; h != nil {
		if err := validName("OnHalt.Queue", h.Queue, migrations.MaxQueueLen, true); err != nil {
			return err
		}
		if err := validName("OnHalt.Kind", h.Kind, migrations.MaxKindLen, false); err != nil {
			return err
		}
	}
	for i := range first {
		if first[i].Run != uuid.Nil {
			return invalid(fmt.Sprintf("first[%d].Run", i), "must be empty: the first items belong to the run being created")
		}
	}
	if len(first) == 0 {
		return nil
	}
	return s.validateSpecs(first)
}

func (s *Store) createRun(ctx context.Context, q dialect.Querier, spec RunSpec, first []ItemSpec) (CreateRunResult, []EnqueueResult, error) {
	id := uuid.Must(uuid.NewV7())
	var hq, hk any
	if spec.OnHalt != nil {
		hq, hk = spec.OnHalt.Queue, spec.OnHalt.Kind
	}
	var version any
	if spec.Version != 0 {
		version = spec.Version
	}
	res, err := q.ExecContext(ctx, s.runOpenSQL(), s.d.UUID(id), spec.Name, nullString(spec.Key), s.jsonArg(spec.Input), hq, hk, version)
	if err != nil {
		return CreateRunResult{}, nil, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return CreateRunResult{}, nil, err
	}
	if n == 0 {
		var existing uuid.UUID
		if err := q.QueryRowContext(ctx, s.sql(qRunByKey), spec.Name, spec.Key).Scan(&existing); err != nil {
			return CreateRunResult{}, nil, err
		}
		return CreateRunResult{ID: existing, Existed: true}, nil, nil
	}
	if len(first) == 0 {
		return CreateRunResult{ID: id}, nil, nil
	}
	specs := slices.Clone(first)
	for i := range specs {
		specs[i].Run = id
	}
	out, err := s.insertItems(ctx, q, specs, uuid.Nil, "")
	if err != nil {
		return CreateRunResult{}, nil, err
	}
	return CreateRunResult{ID: id}, out, nil
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id uuid.UUID) (Run, error) {
	var r Run
	err := s.read(ctx, "get run", func() (err error) {
		r, err = scanRun(s.d, s.db.QueryRowContext(ctx, s.sql(qRunGet), s.d.UUID(id)))
		return err
	})
	if sqlkit.IsNoRows(err) {
		return Run{}, fmt.Errorf("plenum: run %s: %w", id, ErrNotFound)
	}
	return r, err
}

func scanRun(d dialect.Dialect, r scanner) (Run, error) {
	var (
		run                         Run
		key, reason, detail, hq, hk sql.NullString
		version                     sql.NullInt64
		state                       string
		haltID, haltItem            uuid.NullUUID
		created, updated, finished  = timeValue{d: d}, timeValue{d: d}, timeValue{d: d}
	)
	err := r.Scan(&run.ID, &run.Name, &key, &state, (*rawJSON)(&run.Input), (*rawJSON)(&run.Output), &reason, &detail, &haltID, &haltItem,
		&hq, &hk, &created, &updated, &finished, &version)
	if err != nil {
		return Run{}, err
	}
	run.Key, run.State, run.HaltReason, run.HaltDetail, run.HaltID = key.String, RunState(state), reason.String, detail.String, haltID.UUID
	run.HaltItemID, run.Version = haltItem.UUID, int(version.Int64)
	if hq.Valid {
		run.HaltItem = &HaltItem{Queue: hq.String, Kind: hk.String}
	}
	run.CreatedAt, run.UpdatedAt, run.FinishedAt = created.t, updated.t, finished.t
	return run, nil
}

// RunItemsParams page through the items of a run.
type RunItemsParams struct {
	Run uuid.UUID
	// After is the last id of the previous page; uuid.Nil for the first.
	After uuid.UUID
	// Limit is the page size: 1 to 10,000.
	Limit int
}

// RunItems returns one page of the items of a run in id order (which is
// creation order: ids are UUIDv7), a keyset page whose cost does not grow
// with how far in it is.
func (s *Store) RunItems(ctx context.Context, p RunItemsParams) ([]Item, error) {
	if p.Limit < 1 || p.Limit > maxPage {
		return nil, invalid("Limit", "%d is outside [1, %d]", p.Limit, maxPage)
	}
	return readRows(ctx, s, "run items", s.sql(qRunItems(s.d, p.Limit)), func(r scanner) (Item, error) { return scanItem(s.d, r) }, s.d.UUID(p.Run), s.d.UUID(p.After))
}

// qRunItems is one page of n items of a run.
func qRunItems(d dialect.Dialect, n int) string {
	return "SELECT " + itemColumns + " FROM {items} WHERE run_id = ? AND id > ? ORDER BY id" + d.Limit(n)
}

// RunUpdate is a compare-and-set of a run's state.
type RunUpdate struct {
	Run uuid.UUID
	// From lists the states the run may be in for the update to happen:
	// required.
	From []RunState
	// To is the new state.
	To RunState
	// Output is stored when To is RunCompleted.
	Output json.RawMessage
	// HaltReason (required when To is RunHalted, up to 64 characters) and
	// HaltDetail (free text) are stored when To is RunHalted; the halt gets
	// a new HaltID and the run's HaltItem is enqueued. Moving a run to
	// RunRunning or RunWaiting clears them.
	HaltReason string
	HaltDetail string
}

// UpdateRun moves a run from one of u.From to u.To under the run row's lock,
// and reports whether it did (false, with the run as it is, when its state
// was not one of u.From). A run in a final state never moves: From may not
// name one. Moving to RunCancelled changes only the run: CancelRun also
// cancels its items.
func (s *Store) UpdateRun(ctx context.Context, u RunUpdate) (Run, bool, error) {
	if err := s.validRunUpdate(u); err != nil {
		return Run{}, false, err
	}
	var (
		r     Run
		moved bool
	)
	err := s.inTx(ctx, "update run", func(tx dialect.Tx) error {
		var err error
		r, moved, err = s.updateRun(ctx, tx, u, uuid.Nil)
		return err
	})
	return r, moved, err
}

// UpdateRun is Store.UpdateRun in the fence's transaction: the run moves
// only if the fence commits, together with what else the fence wrote.
func (f *Fenced) UpdateRun(ctx context.Context, u RunUpdate) (Run, bool, error) {
	if err := f.s.validRunUpdate(u); err != nil {
		return Run{}, false, err
	}
	return f.s.updateRun(ctx, f.tx, u, f.c.ID)
}

func (s *Store) validRunUpdate(u RunUpdate) error {
	if u.Run == uuid.Nil {
		return invalid("Run", "must name a run")
	}
	if len(u.From) == 0 {
		return invalid("From", "must list the states the run may move from")
	}
	for i, st := range u.From {
		if !st.valid() || st.Final() {
			return invalid(fmt.Sprintf("From[%d]", i), "%q is not a state a run moves from", st)
		}
	}
	if !u.To.valid() {
		return invalid("To", "%q is not a run state", u.To)
	}
	if u.To == RunHalted {
		if err := validName("HaltReason", u.HaltReason, migrations.MaxHaltReasonLen, true); err != nil {
			return err
		}
	}
	if err := validText("HaltDetail", u.HaltDetail, MaxErrorBytes); err != nil {
		return err
	}
	return s.validJSON("Output", u.Output)
}

func (st RunState) valid() bool {
	switch st {
	case RunRunning, RunWaiting, RunHalted, RunCompleted, RunCancelled:
		return true
	}
	return false
}

// updateRun is the compare-and-set, in q; item is the item a halt is
// blamed on (uuid.Nil for none).
func (s *Store) updateRun(ctx context.Context, q dialect.Querier, u RunUpdate, item uuid.UUID) (Run, bool, error) {
	lr, err := s.lockRun(ctx, q, u.Run)
	if err != nil {
		return Run{}, false, err
	}
	moved := slices.Contains(u.From, lr.state)
	if moved {
		switch u.To {
		case RunCompleted:
			_, err = q.ExecContext(ctx, s.sql(qRunComplete), s.jsonArg(u.Output), s.d.UUID(u.Run))
		case RunHalted:
			_, err = s.halt(ctx, q, lr, u.HaltReason, u.HaltDetail, item)
		case RunCancelled:
			_, err = q.ExecContext(ctx, s.sql(qRunCancel), s.d.UUID(u.Run))
		default:
			_, err = q.ExecContext(ctx, s.sql(qRunResume), string(u.To), s.d.UUID(u.Run))
		}
		if err != nil {
			return Run{}, false, err
		}
	}
	r, err := scanRun(s.d, q.QueryRowContext(ctx, s.sql(qRunGet), s.d.UUID(u.Run)))
	return r, moved, err
}

// lockedRun is a run row locked by the transaction.
type lockedRun struct {
	id     uuid.UUID
	state  RunState
	onHalt *HaltItem
}

// lockRun locks a run's row; runs are locked after items and barriers.
func (s *Store) lockRun(ctx context.Context, q dialect.Querier, id uuid.UUID) (lockedRun, error) {
	var state string
	var hq, hk sql.NullString
	err := q.QueryRowContext(ctx, s.sql(qRunLock), s.d.UUID(id)).Scan(&state, &hq, &hk)
	if sqlkit.IsNoRows(err) {
		return lockedRun{}, fmt.Errorf("plenum: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return lockedRun{}, err
	}
	lr := lockedRun{id: id, state: RunState(state)}
	if hq.Valid {
		lr.onHalt = &HaltItem{Queue: hq.String, Kind: hk.String}
	}
	return lr, nil
}

// halt halts a locked run whatever its state, and enqueues its HaltItem,
// in q. It returns the halt's id. The run's row and the HaltNotice are
// written from the same values, so that a halt reads the same from
// GetRun as from its notice.
func (s *Store) halt(ctx context.Context, q dialect.Querier, lr lockedRun, reason, detail string, item uuid.UUID) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	var by any
	if item != uuid.Nil {
		by = s.d.UUID(item)
	}
	if _, err := q.ExecContext(ctx, s.sql(qRunHalt), reason, nullString(detail), s.d.UUID(id), by, s.d.UUID(lr.id)); err != nil {
		return uuid.Nil, err
	}
	if lr.onHalt == nil {
		return id, nil
	}
	payload, err := json.Marshal(HaltNotice{Run: lr.id, HaltID: id, Reason: reason, Detail: detail, Item: item})
	if err != nil {
		return uuid.Nil, err
	}
	_, err = s.insertItems(ctx, q, []ItemSpec{{Queue: lr.onHalt.Queue, Kind: lr.onHalt.Kind, Payload: payload, Key: "halt/" + id.String()}}, uuid.Nil, "")
	return id, err
}

// runID returns the fenced item's run (uuid.Nil for none), read once per
// fence: the claim may not carry it.
func (f *Fenced) runID(ctx context.Context) (uuid.UUID, error) {
	if f.runRead {
		return f.run, nil
	}
	if f.c.Run != uuid.Nil {
		f.run, f.runRead = f.c.Run, true
		return f.run, nil
	}
	var run uuid.NullUUID
	if err := f.tx.QueryRowContext(ctx, f.s.sql(qItemRun), f.s.d.UUID(f.c.ID)).Scan(&run); err != nil {
		return uuid.Nil, err
	}
	f.run, f.runRead = run.UUID, true
	return f.run, nil
}
