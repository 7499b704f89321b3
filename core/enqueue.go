package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// ItemSpec describes an item to enqueue.
type ItemSpec struct {
	// Queue is required: 1 to 128 characters. Like every name the store
	// writes (Kind and Key too), it is valid UTF-8 without control
	// characters, bidirectional overrides or isolates, or line separators
	// (see the package doc on bad input).
	Queue string
	// Kind tells the worker what to do; up to 128 characters, may be empty.
	Kind string
	// Payload is a JSON document (or nil) in valid UTF-8, at most
	// Options.MaxPayloadBytes, with no NUL character (\u0000) in its
	// strings: PostgreSQL's jsonb cannot store one, and a payload is
	// refused alike on every database. Results follow the same rules.
	Payload json.RawMessage
	// Priority: lower numbers are claimed first. Default 0; within
	// ±MaxPriority.
	Priority int
	// Delay postpones the first claim, counted on the database clock.
	Delay time.Duration
	// MaxAttempts bounds the claims that may fail before the item is dead.
	// Default (0) Options.DefaultMaxAttempts; at most MaxAttemptsCeiling.
	MaxAttempts int
	// Key, when not empty, makes the enqueue idempotent: an item with the
	// same Queue and Key that already exists is returned instead of a new
	// one. Up to 200 characters. Keys that begin with a UUID in its
	// 36-character text form and a slash ("0190…-…/x") are reserved for the
	// stored keys of barriers' children and refused, so that no caller's
	// key can take a child's place.
	//
	// By default an item holds its key while it exists, until retention
	// (Purge) deletes it; KeyStates and KeyPeriod narrow that.
	Key string
	// KeyStates, when not nil, makes Key unique only among items in these
	// states: an item that holds the key in another state (a finished one,
	// say, for {StateAvailable, StateClaimed}) has its key released in the
	// enqueue's transaction and a new item is enqueued. Nil keeps the
	// default; an empty non-nil slice is refused. It is the enqueue's
	// choice, not the holder's: each enqueue of a key decides for itself
	// which holders it takes. Requires Key.
	//
	// A released item keeps its key in a form no caller's key can take,
	// ReleasedKey(its id, key), which Item.Key shows, so that reviving it
	// (Revive, ReviveRunItem) never collides with the key's new holder; an
	// item whose key was not released keeps holding it when revived.
	// Concurrent enqueues of the key make exactly one new item.
	KeyStates []State
	// KeyPeriod, when not zero, makes Key unique per period of this length
	// on the database clock, aligned to the Unix epoch in UTC: the stored
	// key is PeriodKey(Key, KeyPeriod, now), read once per call, so that
	// at most one item per key is enqueued in each period (with KeyStates,
	// at most one live one). From MinKeyPeriod to MaxDelay, in whole
	// microseconds; Key with the suffix must fit
	// migrations.MaxStoredKeyLen. Requires Key.
	KeyPeriod time.Duration
	// Run, when set, makes the item part of that run (CreateRun): Get and
	// RunItems show it with the run, and CancelRun cancels it. A barrier's
	// children and joins belong to their parent's run; Fenced.Then's next
	// item to the fenced item's. A Run that names no run is ErrNotFound,
	// naming the field, and nothing is enqueued: Enqueue, EnqueueTx,
	// Fenced.Enqueue, Fenced.Then and EnqueueDue (at a tick) look the runs
	// up in their own transaction, one read for all of a call's runs, and
	// only when some spec has a Run; a run created earlier in the same
	// transaction (CreateRunTx) is found.
	Run uuid.UUID
	// FlowKey, when set, puts the item in its key's lane of the queue
	// (up to 200 characters): the lanes of a queue take turns at each
	// claim, in every process, and the queue's Limit (SetLimit) applies
	// to each key. It has nothing to do with Key: many items share a
	// flow key (a tenant's, a customer's), and an item may have both.
	// Items without one are claimed as before, beside the lanes, and
	// never limited.
	FlowKey string
	// Cost is the claims of its key's rate limit (Limit.Rate) the item
	// counts for: a heavier job can use up more of it. 0 means 1; at most
	// MaxCost; only with a FlowKey.
	Cost int
	// Tags label the item for the read API's and the dashboard's filters
	// (browse.ItemFilter.Tag): at most MaxTags, each 1 to MaxTagLen
	// characters under the rules of every name (no control characters,
	// bidirectional overrides or isolates, or line separators; see
	// Queue). A tag given twice counts once; they read back sorted.
	Tags []string
	// Metadata is key-value data the item carries besides its payload (a
	// trace context, a tenant, an origin), filterable by key and value
	// (browse.ItemFilter.Meta): at most MaxMetadataKeys keys, each 1 to
	// MaxTagLen characters, each value 1 to MaxMetadataValueLen bytes,
	// keys and values under the rules of every name; tags, keys and
	// values together at most MaxMetadataBytes.
	//
	// Tags and metadata are written in the enqueue's transaction, to a
	// table of their own that no claim or completion writes, and read
	// with Store.ItemMetadata. They are set once: an enqueue whose Key
	// finds an existing item (Existed) leaves that item's tags and
	// metadata as they were, and writes none of its own. Retention
	// (Purge) deletes them with their item.
	Metadata map[string]string
}

// EnqueueResult is the outcome of one ItemSpec.
type EnqueueResult struct {
	ID uuid.UUID
	// Existed is true when an item with the same queue and key already
	// existed; ID is then that item's.
	Existed bool
}

// Enqueue inserts items in one transaction, in batches sized to the
// dialect's limits. Results are in the order of specs. Once it commits, the
// subscribers of the items' queues are woken (Subscribe).
func (s *Store) Enqueue(ctx context.Context, specs ...ItemSpec) ([]EnqueueResult, error) {
	if err := s.validateSpecs(specs); err != nil {
		return nil, err
	}
	var out []EnqueueResult
	err := s.inTx(ctx, "enqueue", func(tx dialect.Tx) error {
		if err := s.runsExist(ctx, tx, specs, specRun); err != nil {
			return err
		}
		var err error
		out, err = s.insertItems(ctx, tx, specs, uuid.Nil, "")
		return err
	})
	return out, err
}

// EnqueueTx inserts items inside the caller's own transaction (the outbox
// pattern: the items exist if and only if the caller's transaction
// commits). tx may be a *sql.Tx or *sqlx.Tx of the store's database. There
// is no retry: a transient error is returned for the caller to retry its
// whole transaction.
//
// The store cannot know when the caller commits, so it wakes none of this
// process's subscribers by itself: call Wake with the items' queues once
// the transaction has committed, or leave them to the workers' polling.
// On a dialect that notifies other processes (see Subscribe), the
// notification goes in tx and is sent when it commits, and this process's
// own listener receives it too.
func (s *Store) EnqueueTx(ctx context.Context, tx dialect.Querier, specs ...ItemSpec) ([]EnqueueResult, error) {
	if tx == nil {
		return nil, invalid("tx", "nil transaction")
	}
	if err := s.validateSpecs(specs); err != nil {
		return nil, err
	}
	if err := s.runsExist(ctx, tx, specs, specRun); err != nil {
		return nil, wrapDBError("enqueue", err)
	}
	out, err := s.insertItems(ctx, tx, specs, uuid.Nil, "")
	return out, wrapDBError("enqueue", err)
}

func (s *Store) validateSpecs(specs []ItemSpec) error {
	if len(specs) == 0 {
		return invalid("specs", "nothing to enqueue")
	}
	for i := range specs {
		at := fmt.Sprintf("specs[%d].", i)
		if err := s.validateSpec(&specs[i], at); err != nil {
			return err
		}
		if reservedKey(specs[i].Key) {
			return invalid(at+"Key", "%q begins with a UUID and a slash, the form reserved for the keys of barriers' children", specs[i].Key)
		}
	}
	return nil
}

func (s *Store) validateSpec(sp *ItemSpec, at string) error {
	if err := validName(at+"Queue", sp.Queue, migrations.MaxQueueLen, true); err != nil {
		return err
	}
	if err := validName(at+"Kind", sp.Kind, migrations.MaxKindLen, false); err != nil {
		return err
	}
	if err := validName(at+"Key", sp.Key, migrations.MaxKeyLen, false); err != nil {
		return err
	}
	if err := s.validJSON(at+"Payload", sp.Payload); err != nil {
		return err
	}
	if sp.Delay < 0 || sp.Delay > MaxDelay {
		return invalid(at+"Delay", "%v is outside [0, %v]", sp.Delay, MaxDelay)
	}
	if sp.MaxAttempts < 0 || sp.MaxAttempts > MaxAttemptsCeiling {
		return invalid(at+"MaxAttempts", "%d is outside [0, %d] (0 for the store's default)", sp.MaxAttempts, MaxAttemptsCeiling)
	}
	if sp.Priority < -MaxPriority || sp.Priority > MaxPriority {
		return invalid(at+"Priority", "%d is outside ±%d", sp.Priority, MaxPriority)
	}
	if err := validName(at+"FlowKey", sp.FlowKey, migrations.MaxFlowKeyLen, false); err != nil {
		return err
	}
	if err := validMeta(at, sp.Tags, sp.Metadata); err != nil {
		return err
	}
	switch {
	case sp.Cost < 0 || sp.Cost > MaxCost:
		return invalid(at+"Cost", "%d is outside [0, %d] (0 for 1)", sp.Cost, MaxCost)
	case sp.Cost > 0 && sp.FlowKey == "":
		return invalid(at+"Cost", "is set without a FlowKey, whose rate limit it counts against")
	}
	return validKeyOptions(sp, at)
}

// MaxCursorBytes bounds a dispatch cursor (ChildPage.Next,
// AddChildrenParams.From and To).
const MaxCursorBytes = 64 << 10

// validText refuses text that some database cannot store in a text
// column: invalid UTF-8 (PostgreSQL 22021, MySQL 1366), the NUL byte
// (PostgreSQL 22021), or more than max bytes. SQLite would store all of
// it; it is refused there too, so that what one database refuses, all do.
func validText(field, v string, max int) error {
	switch {
	case len(v) > max:
		return invalid(field, "%d bytes is over the limit of %d", len(v), max)
	case !utf8.ValidString(v):
		return invalid(field, "is not valid UTF-8")
	case strings.IndexByte(v, 0) >= 0:
		return invalid(field, "contains a NUL byte")
	}
	return nil
}

// insertColumns and insertRow are the shape of every new item: enqueued
// items and a barrier's children alike.
var insertColumns = []string{"id", "queue", "kind", "unique_key", "payload", "priority", "state", "available_at",
	"attempt", "max_attempts", "crash_count", "barrier_id", "created_at", "run_id"}

const (
	// insertRowNow is a row available at once; insertRowLater one with a
	// delay. Keeping the arithmetic out of rows that need none matters:
	// SQLite's prepare time grows with the square of the number of distinct
	// per-row expressions, so a batch is all of one kind.
	insertRowNow   = "?, ?, ?, ?, {json?}, ?, 'available', {now}, 0, ?, 0, ?, {now}, ?"
	insertRowLater = "?, ?, ?, ?, {json?}, ?, 'available', {now+?}, 0, ?, 0, ?, {now}, ?"
	argsPerInsert  = 10
	rowOverhead    = 256 // bytes per row besides its payload, for packet limits
	// maxInsertRows caps the rows of one INSERT unless the dialect says
	// otherwise (Capabilities.MaxInsertRows): past a few hundred rows a
	// bigger statement saves no round trips worth having and costs prepare
	// time.
	maxInsertRows = 500
)

// insertItems inserts specs with insert-or-ignore and learns which were new.
// A barrier's children (barrier != uuid.Nil) carry it and have their keys
// scoped by it. Statements: one per batch, plus one lookup per batch in
// which some keyed row already existed; with KeyPeriod, one read of the
// clock first; with KeyStates, for each key released, an update of its
// holder and the row's insert again in a later statement.
//
// Ids are made in the caller's order, and rows are split into statements
// in the caller's order (rows available at once first, then delayed ones),
// so that items of one call with the same priority and delay are claimed in
// that order: each statement stamps its own {now}, which never runs behind
// an earlier statement's, and within one statement the ids decide. Inside
// a statement the rows are bound in key order, so that two transactions
// inserting overlapping keys take the unique index's locks in the same
// order instead of deadlocking (InnoDB's ON DUPLICATE KEY locks each key it
// meets); a deadlock across statements is retried like any other.
func (s *Store) insertItems(ctx context.Context, q dialect.Querier, specs []ItemSpec, barrier uuid.UUID, keyScope string) ([]EnqueueResult, error) {
	specs, err := s.periodKeys(ctx, q, specs)
	if err != nil {
		return nil, err
	}
	rounds := keyRounds{}
	out := make([]EnqueueResult, len(specs))
	for i := range out {
		out[i].ID = uuid.Must(uuid.NewV7())
	}
	order := delayOrder(specs)
	sorted := make([]ItemSpec, len(specs))
	for i, j := range order {
		sorted[i] = specs[j]
	}
	for start := 0; start < len(sorted); {
		end := s.batchEnd(sorted, start)
		sortByKey(sorted[start:end], order[start:end])
		batch := sorted[start:end]
		ids := make([]uuid.UUID, len(batch))
		args := make([]any, 0, len(batch)*argsPerInsert)
		for i := range batch {
			sp := &batch[i]
			ids[i] = out[order[start+i]].ID
			maxAttempts := sp.MaxAttempts
			if maxAttempts == 0 {
				maxAttempts = s.opts.DefaultMaxAttempts
			}
			key := nullString(sp.Key)
			if sp.Key != "" && keyScope != "" {
				key = keyScope + sp.Key
			}
			args = append(args, s.d.UUID(ids[i]), sp.Queue, sp.Kind, key, s.jsonArg(sp.Payload), sp.Priority)
			if sp.Delay > 0 {
				args = append(args, micros(sp.Delay))
			}
			args = append(args, maxAttempts, nullUUID(s.d, barrier), nullUUID(s.d, sp.Run))
			if batch[0].FlowKey != "" {
				args = append(args, sp.FlowKey, max(1, sp.Cost))
			}
		}
		stmt := s.insertSQL(shapeOf(&batch[0]).row(), len(batch))
		res, err := q.ExecContext(ctx, stmt, args...)
		if err != nil {
			return nil, err
		}
		inserted, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		if int(inserted) < len(batch) {
			existing, states, err := s.resolveExisting(ctx, q, batch, ids, barrier, keyScope)
			if err != nil {
				return nil, err
			}
			for i, e := range existing {
				if e.Existed {
					out[order[start+i]] = e
				}
			}
			// Rows whose key was released or freed go again, in a later
			// statement.
			again, err := s.releaseKeys(ctx, q, batch, existing, states, keyScope)
			if err != nil {
				return nil, err
			}
			for _, i := range again {
				j := order[start+i]
				if err := rounds.next(j, &batch[i]); err != nil {
					return nil, err
				}
				// A fresh id, later than the holder's: on InnoDB the row
				// then goes after the holder's entry, not into the gap
				// that the enqueues waiting for the key have asked for.
				out[j] = EnqueueResult{ID: uuid.Must(uuid.NewV7())}
				sorted, order = append(sorted, batch[i]), append(order, j)
			}
		}
		start = end
	}
	if err := s.lanesReady(ctx, q, specs, out); err != nil {
		return nil, err
	}
	if err := s.insertMeta(ctx, q, specs, out); err != nil {
		return nil, err
	}
	if err := s.itemsReady(ctx, q, readyQueues(specs)...); err != nil {
		return nil, err
	}
	return out, nil
}

// delayOrder returns the indexes of specs with the rows that are not
// delayed first (a batch holds rows of one shape), the rows without a
// flow key before those with one, each shape in the caller's order.
func delayOrder(specs []ItemSpec) []int {
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return shapeOf(&specs[a]).rank() - shapeOf(&specs[b]).rank()
	})
	return order
}

// sortByKey sorts one statement's rows by queue and key, keyless rows in
// the caller's order, and order (the rows' positions in the caller's
// slice) along with them.
func sortByKey(batch []ItemSpec, order []int) {
	perm := make([]int, len(batch))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		x, y := &batch[a], &batch[b]
		if c := strings.Compare(x.Queue, y.Queue); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	specs, idx := slices.Clone(batch), slices.Clone(order)
	for i, p := range perm {
		batch[i], order[i] = specs[p], idx[p]
	}
}

// batchEnd returns the end of the batch that starts at start: rows of one
// kind (delayed or not), bounded by maxInsertRows, the bind-parameter limit,
// the IN-list limit and the statement size limit.
func (s *Store) batchEnd(specs []ItemSpec, start int) int {
	shape := shapeOf(&specs[start])
	maxRows := s.insertRowsMax()
	if shape.keyed {
		maxRows = s.keyedInsertRowsMax()
	}
	end, bytes := start, 0
	for end < len(specs) && end-start < maxRows && shapeOf(&specs[end]) == shape {
		size := len(specs[end].Payload) + len(specs[end].Key) + rowOverhead
		if s.caps.MaxStatementBytes > 0 && end > start && bytes+size > s.caps.MaxStatementBytes {
			break
		}
		bytes += size
		end++
	}
	return end
}

// resolveExisting finds, for each keyed spec of a batch in which not every
// row was inserted, the item that holds its key: the result at i has
// Existed set when that is not the row with ids[i], and the state at i is
// the holder's ("" when no item holds the key any more). For a barrier's
// children, a row holding the key that is not a child of the barrier is
// ErrKeyConflict, unless the spec's KeyStates release it: a child is never
// silently taken for another item.
func (s *Store) resolveExisting(ctx context.Context, q dialect.Querier, batch []ItemSpec, ids []uuid.UUID, barrier uuid.UUID, keyScope string) ([]EnqueueResult, []State, error) {
	byQueue := map[string][]string{}
	for _, sp := range batch {
		if sp.Key != "" {
			byQueue[sp.Queue] = append(byQueue[sp.Queue], keyScope+sp.Key)
		}
	}
	type holder struct {
		id    uuid.UUID
		state State
		mine  bool
	}
	found := map[[2]string]holder{}
	for queue, keys := range byQueue {
		for _, chunk := range chunks(keys, s.keysMax()) {
			args := make([]any, 0, len(chunk)+1)
			args = append(args, queue)
			for _, k := range chunk {
				args = append(args, k)
			}
			// A child's row is its barrier's own when it reports there, or
			// when it expanded and handed its membership to its own join.
			var ownArgs []any
			if barrier != uuid.Nil {
				ownArgs = []any{s.d.UUID(barrier), s.d.UUID(barrier)}
			}
			rows, err := q.QueryContext(ctx, s.sql(qExisting(len(chunk), barrier != uuid.Nil)), append(ownArgs, args...)...)
			if err != nil {
				return nil, nil, err
			}
			for rows.Next() {
				var h holder
				var key, state string
				var mine int
				if err := rows.Scan(&h.id, &key, &mine, &state); err != nil {
					rows.Close()
					return nil, nil, err
				}
				h.state, h.mine = State(state), mine == 1
				found[[2]string{queue, key}] = h
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, nil, err
			}
		}
	}
	out := make([]EnqueueResult, len(batch))
	states := make([]State, len(batch))
	for i := range batch {
		sp := &batch[i]
		out[i].ID = ids[i]
		if sp.Key == "" {
			continue
		}
		h, ok := found[[2]string{sp.Queue, keyScope + sp.Key}]
		if !ok {
			continue
		}
		states[i] = h.state
		if h.id == ids[i] {
			continue
		}
		if !h.mine && !releasable(sp, h.state) {
			return nil, nil, fmt.Errorf("plenum: child key %q of barrier %s in queue %q is held by item %s, which is not a child of that barrier: %w", keyScope+sp.Key, barrier, sp.Queue, h.id, ErrKeyConflict)
		}
		out[i] = EnqueueResult{ID: h.id, Existed: true}
	}
	return out, states, nil
}

// insertSQL is the insert-or-ignore of n item rows, each written as row.
// The statements a large enqueue or a fan-out sends page after page (the
// full size, and a fan-out's page, which may be smaller where the dialect
// takes long INSERTs) are built once per row shape and size: they are too
// long for Store.sql's cache, and rebuilding one cost a fan-out a tenth of
// its client time. Besides the full size, only the first
// maxCachedInsertSizes sizes of at least minCachedInsertRows rows met are
// kept, so that the cache stays small whatever sizes come.
func (s *Store) insertSQL(row string, n int) string {
	key := insertKey{row, n}
	if q, ok := s.inserts.Load(key); ok {
		return q.(string)
	}
	columns := insertColumns
	if row == insertRowNowKeyed || row == insertRowLaterKeyed {
		columns = insertColumnsKeyed
	}
	q := s.d.InsertIgnore(s.names.Items, columns, s.expand.Replace(row), n, itemConflict)
	if n == s.insertRowsMax() || (n >= minCachedInsertRows && s.insertSizes.Load() < maxCachedInsertSizes && s.insertSizes.Add(1) <= maxCachedInsertSizes) {
		s.inserts.Store(key, q)
	}
	return q
}

// insertKey names a cached INSERT: its row shape and its rows.
type insertKey struct {
	row string
	n   int
}

// maxCachedInsertSizes bounds the sizes of INSERT, besides the full one,
// that insertSQL keeps, and minCachedInsertRows is the fewest rows of one
// it keeps: a short statement costs little to build, and small enqueues of
// many sizes would otherwise take the places of a fan-out's page.
const (
	maxCachedInsertSizes = 8
	minCachedInsertRows  = 64
)

// insertRowsMax is the most rows one INSERT of items carries: the
// dialect's MaxInsertRows (default maxInsertRows), within the
// bind-parameter limit and the IN-list limit (the lookup of the keys that
// existed lists them).
func (s *Store) insertRowsMax() int {
	rows := maxInsertRows
	if s.caps.MaxInsertRows > 0 {
		rows = s.caps.MaxInsertRows
	}
	maxRows := min(rows, max(1, s.caps.MaxBindParams/argsPerInsert))
	if s.caps.MaxInList > 0 {
		maxRows = min(maxRows, s.caps.MaxInList)
	}
	return maxRows
}

// inListMax is the most values an IN list may carry next to extra other
// bind parameters.
func (s *Store) inListMax(extra int) int {
	n := s.caps.MaxBindParams - extra
	if s.caps.MaxInList > 0 {
		n = min(n, s.caps.MaxInList)
	}
	return max(1, n)
}

func chunks[T any](xs []T, n int) [][]T {
	var out [][]T
	for len(xs) > n {
		out = append(out, xs[:n])
		xs = xs[n:]
	}
	if len(xs) > 0 {
		out = append(out, xs)
	}
	return out
}

func (s *Store) jsonArg(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return s.d.JSON(b)
}
