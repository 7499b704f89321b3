package bench

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// bareSQL is one hand-written claim and completion.
type bareSQL interface {
	// claim takes up to c.limit available items of c.queue in claim order
	// under c.token, inside tx.
	claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error)
	// complete completes the items ids that still hold token, inside tx,
	// and returns how many it changed.
	complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error)
}

// bareArriver is a shape that can complete a batch of a barrier's
// children, add them to the barrier's count and fire it in one
// statement: it returns how many items it completed and how many barriers
// it fired.
type bareArriver interface {
	completeArrive(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (done, fired int64, err error)
}

// bareShape is one way of writing the baseline by hand for a database.
type bareShape struct {
	// name says how ids are bound and statements run: "array", "IN list",
	// "json_each", "prepared IN list", ...
	name string
	sql  bareSQL
	// prepared runs every statement through a statement prepared once per
	// connection (database/sql's *sql.Stmt, bound to each transaction).
	prepared bool
	// oneStatement runs each step of a worker, the claim and the
	// completion, as one statement outside any transaction, which the
	// database commits by itself: no BEGIN or COMMIT round trips. A
	// fan-in's completion, count and fire are then one statement too
	// (bareArriver), or they would not commit together.
	oneStatement bool
	// begin, when set, is the statement that begins a write transaction
	// on a connection each worker keeps for itself, its statements
	// prepared on it (SQLite's BEGIN IMMEDIATE, which database/sql's
	// BeginTx cannot ask for).
	begin string
}

// shapesFor returns the hand-written shapes the bench knows for b's
// database, the one it measured fastest first (docs/benchmarks.md; measure
// again with --shapes). The baseline is SQL written for one database, so
// it goes by the dialect's name; a dialect without shapes of its own gets
// one built from its contract (its claim statement, IN lists).
func shapesFor(b *baseline) []bareShape {
	switch b.d.Name() {
	case "postgres":
		return []bareShape{
			{name: "array binds", sql: pgBare{}},
			{name: "IN list", sql: pgBare{inList: true}},
			// Two round trips fewer per step, and measured no faster
			// than the default on Plenum's schema (bench/BENCH.md, "Round
			// trips").
			{name: "array binds, no BEGIN", sql: pgBare{}, oneStatement: true},
		}
	case "sqlite":
		return []bareShape{
			{name: "json_each", sql: sqliteBare{jsonList: true}},
			{name: "prepared json_each", sql: sqliteBare{jsonList: true}, begin: "BEGIN IMMEDIATE"},
			{name: "IN list", sql: sqliteBare{}},
			{name: "prepared IN list", sql: sqliteBare{}, begin: "BEGIN IMMEDIATE"},
		}
	case "mysql":
		return []bareShape{
			{name: "prepared IN list", sql: mysqlBare{}, prepared: true},
			{name: "IN list", sql: mysqlBare{}},
			{name: "JSON_TABLE", sql: mysqlBare{jsonList: true}},
			{name: "prepared JSON_TABLE", sql: mysqlBare{jsonList: true}, prepared: true},
		}
	}
	return []bareShape{{name: "dialect claim, IN list", sql: genericBare{}}}
}

// bestShape is the first of shapesFor.
func bestShape(b *baseline) bareShape { return shapesFor(b)[0] }

// shapeNamed returns b's shape called name.
func shapeNamed(b *baseline, name string) (bareShape, error) {
	var names []string
	for _, s := range shapesFor(b) {
		if s.name == name {
			return s, nil
		}
		names = append(names, fmt.Sprintf("%q", s.name))
	}
	return bareShape{}, cmdline.Usagef("--shape %q: %s has %s", name, b.d.Name(), strings.Join(names, ", "))
}

// scanBare reads the rows of a claim: id, kind, payload, attempt, barrier.
func scanBare(rows *sql.Rows) ([]bareItem, error) {
	defer rows.Close()
	var out []bareItem
	for rows.Next() {
		var (
			it bareItem
			// What a worker needs to do the work; uuid.UUID reads both 16
			// bytes and text (PostgreSQL's uuid); []byte takes a JSON
			// column as bytes or text.
			kind    string
			payload []byte
			attempt int
		)
		if err := rows.Scan(&it.id, &kind, &payload, &attempt, &it.barrier); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// inList returns the placeholders of n values and the values, ids bound as
// the dialect binds UUIDs.
func inList(d dialect.Dialect, ids []uuid.UUID) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = d.UUID(id)
	}
	return sqlkit.Placeholders(len(ids)), args
}

// hexList returns ids as a JSON array of their hex forms.
func hexList(ids []uuid.UUID) string {
	var sb strings.Builder
	sb.Grow(len(ids)*35 + 2)
	sb.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		sb.WriteString(hex.EncodeToString(id[:]))
		sb.WriteByte('"')
	}
	sb.WriteByte(']')
	return sb.String()
}

// pgBare is PostgreSQL by hand: one statement claims (a CTE picks the rows
// with FOR UPDATE SKIP LOCKED, the UPDATE takes them and returns them), one
// completes, the ids bound as one uuid[] (a statement whose text never
// changes, prepared once per connection by pgx's statement cache) or as an
// IN list.
//
// The claims of every shape read "flow_key IS NULL" with the state: the
// claim index, items_claim, holds only the available items without a flow
// key (schema version 8), and PostgreSQL and SQLite use a partial index
// only for a query whose condition implies its predicate.
type pgBare struct{ inList bool }

// claimSQL is the claim: queue, limit, token, worker, lease.
func (pgBare) claimSQL(b *baseline) string {
	return "WITH c AS (SELECT id FROM " + b.names.Items +
		" WHERE queue = $1 AND state = 'available' AND flow_key IS NULL AND available_at <= statement_timestamp()" +
		" ORDER BY priority, available_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)" +
		" UPDATE " + b.names.Items + " AS i SET state = 'claimed', claim_token = $3, claimed_by = $4," +
		" claimed_at = statement_timestamp(), lease_expires_at = statement_timestamp() + CAST($5 AS bigint) * INTERVAL '1 microsecond'," +
		" attempt = i.attempt + 1 FROM c WHERE i.id = c.id RETURNING i.id, i.kind, i.payload, i.attempt, i.barrier_id"
}

func (p pgBare) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	rows, err := tx.query(ctx, p.claimSQL(b), c.queue, c.limit, c.token.String(), c.worker.String(), baseLease)
	if err != nil {
		return nil, err
	}
	return scanBare(rows)
}

// pgHeld is the completion's fence on PostgreSQL. The state is tested as a
// range of one value: "state = 'claimed'" implies the predicate of the
// partial indexes of claimed items, and the planner may then read a whole
// such index, an entry for every claim since the last vacuum, instead of
// the ids' primary keys (the core's heldBy does the same).
const pgHeld = " AND claim_token = $3 AND state >= 'claimed' AND state <= 'claimed'"

// pgCompleteHead is the completion up to its result's placeholder.
func pgCompleteHead(b *baseline) string {
	return "UPDATE " + b.names.Items + " SET state = 'completed', finished_at = statement_timestamp(), lease_expires_at = NULL, result = "
}

// pgArrayComplete is the completion with the ids bound as one uuid[]:
// result $1, ids $2, token $3.
func pgArrayComplete(b *baseline) string {
	return pgCompleteHead(b) + "$1 WHERE id = ANY($2::uuid[])" + pgHeld
}

// uuidTexts are ids as the text pgx binds to a uuid[].
func uuidTexts(ids []uuid.UUID) []string {
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = id.String()
	}
	return strs
}

func (p pgBare) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	head := pgCompleteHead(b)
	var res sql.Result
	var err error
	if p.inList {
		marks, args := inList(b.d, ids)
		q := b.d.Rebind(head + "? WHERE id IN (" + marks + ") AND claim_token = ? AND state >= 'claimed' AND state <= 'claimed'")
		res, err = tx.exec(ctx, q, append(append([]any{b.d.JSON(benchResult)}, args...), token.String())...)
	} else {
		res, err = tx.exec(ctx, pgArrayComplete(b), b.d.JSON(benchResult), uuidTexts(ids), token.String())
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// completeArrive is the completion, the count and the fire in one
// statement, for a shape without BEGIN: data-modifying CTEs, the barrier
// updated from the completed rows' count. Under READ COMMITTED the update
// of a barrier another worker has just counted waits for it and counts on
// its new row; the statement that brings the count to expected fires it
// (the count only grows, so exactly one does).
func (pgBare) completeArrive(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (done, fired int64, err error) {
	q := "WITH done AS (" + pgArrayComplete(b) + " RETURNING barrier_id)," +
		" n AS (SELECT barrier_id, COUNT(*) AS n FROM done WHERE barrier_id IS NOT NULL GROUP BY barrier_id)," +
		" f AS (UPDATE " + b.names.Barriers + " AS b SET arrived = b.arrived + n.n," +
		" fired_at = CASE WHEN b.fired_at IS NULL AND b.sealed = $4 AND b.arrived + n.n + b.failed = b.expected THEN statement_timestamp() ELSE b.fired_at END" +
		" FROM n WHERE b.id = n.barrier_id" +
		" RETURNING b.sealed = $4 AND b.arrived + b.failed = b.expected AND b.arrived - n.n + b.failed < b.expected AS fired)" +
		" SELECT (SELECT COUNT(*) FROM done), (SELECT COUNT(*) FROM f WHERE fired)"
	rows, err := tx.query(ctx, q, b.d.JSON(benchResult), uuidTexts(ids), token.String(), b.d.Bool(true))
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, 0, err
		}
		return 0, 0, errors.New("the completion returned no row")
	}
	if err := rows.Scan(&done, &fired); err != nil {
		return 0, 0, err
	}
	return done, fired, rows.Close()
}

// sqliteBare is SQLite by hand: one UPDATE ... WHERE id IN (SELECT ...
// LIMIT n) RETURNING claims in a write transaction, one UPDATE completes,
// the ids bound as an IN list of blobs or as one JSON array read by
// json_each.
type sqliteBare struct{ jsonList bool }

// claimSQL is the claim: token, worker, lease, queue, limit.
func (sqliteBare) claimSQL(b *baseline) string {
	return "UPDATE " + b.names.Items + " SET state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = " + b.now +
		", lease_expires_at = " + b.later + ", attempt = attempt + 1 WHERE id IN (SELECT id FROM " + b.names.Items +
		" WHERE queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= " + b.now +
		" ORDER BY priority, available_at, id LIMIT ?) RETURNING id, kind, payload, attempt, barrier_id"
}

func (s sqliteBare) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	rows, err := tx.query(ctx, s.claimSQL(b), b.d.UUID(c.token), b.d.UUID(c.worker), baseLease, c.queue, c.limit)
	if err != nil {
		return nil, err
	}
	return scanBare(rows)
}

func (s sqliteBare) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	head := "UPDATE " + b.names.Items + " SET state = 'completed', finished_at = " + b.now +
		", lease_expires_at = NULL, result = ? WHERE "
	var res sql.Result
	var err error
	if s.jsonList {
		res, err = tx.exec(ctx, head+"id IN (SELECT unhex(value) FROM json_each(?)) AND claim_token = ? AND state = 'claimed'",
			b.d.JSON(benchResult), hexList(ids), b.d.UUID(token))
	} else {
		marks, args := inList(b.d, ids)
		res, err = tx.exec(ctx, head+"id IN ("+marks+") AND claim_token = ? AND state = 'claimed'",
			append(append([]any{b.d.JSON(benchResult)}, args...), b.d.UUID(token))...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// mysqlBare is MySQL and MariaDB by hand: there is no UPDATE ...
// RETURNING, so a claim is a locking read of what the worker needs (FOR
// UPDATE SKIP LOCKED) and an UPDATE of the rows it locked; one UPDATE
// completes. The ids are bound as an IN list of 16-byte values or as one
// JSON array that JSON_TABLE turns into rows, joined to the items (MariaDB
// plans "id IN (SELECT ... FROM JSON_TABLE(...))" as a dependent subquery
// over the whole table; the join reads the primary key once per id).
type mysqlBare struct{ jsonList bool }

// update returns the UPDATE of the items ids with set (and setArgs), and
// cond (and condArgs) where given, with its arguments.
func (m mysqlBare) update(b *baseline, ids []uuid.UUID, set string, setArgs []any, cond string, condArgs ...any) (string, []any) {
	if m.jsonList {
		q := "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (id CHAR(32) PATH '$')) AS j STRAIGHT_JOIN " + b.names.Items +
			" AS i ON i.id = UNHEX(j.id) SET " + set
		if cond != "" {
			q += " WHERE " + cond
		}
		return q, append(append([]any{hexList(ids)}, setArgs...), condArgs...)
	}
	marks, idArgs := inList(b.d, ids)
	q := "UPDATE " + b.names.Items + " SET " + set + " WHERE id IN (" + marks + ")"
	if cond != "" {
		q += " AND " + cond
	}
	return q, append(append(setArgs, idArgs...), condArgs...)
}

func (m mysqlBare) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	rows, err := tx.query(ctx, "SELECT id, kind, payload, attempt, barrier_id FROM "+b.names.Items+
		" WHERE queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= "+b.now+
		" ORDER BY priority, available_at, id LIMIT ? FOR UPDATE SKIP LOCKED", c.queue, c.limit)
	if err != nil {
		return nil, err
	}
	items, err := scanBare(rows)
	if err != nil || len(items) == 0 {
		return items, err
	}
	ids := make([]uuid.UUID, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	q, args := m.update(b, ids, "state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = "+b.now+
		", lease_expires_at = "+b.later+", attempt = attempt + 1", []any{b.d.UUID(c.token), b.d.UUID(c.worker), baseLease}, "")
	_, err = tx.exec(ctx, q, args...)
	return items, err
}

func (m mysqlBare) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	q, args := m.update(b, ids, "state = 'completed', finished_at = "+b.now+", lease_expires_at = NULL, result = ?",
		[]any{b.d.JSON(benchResult)}, "claim_token = ? AND state = 'claimed'", b.d.UUID(token))
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// genericBare is the baseline for a dialect the bench has no hand-written
// SQL for: the dialect's own claim statement (SKIP LOCKED, or its
// lock-then-update pair) with a claim token, and a completion by IN list
// fenced on the token.
type genericBare struct{}

func (genericBare) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	spec := dialect.ClaimSpec{
		Table:      b.names.Items,
		Key:        "id",
		Filter:     "queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= " + b.now,
		FilterArgs: []any{c.queue},
		OrderBy:    "priority, available_at, id",
		Limit:      c.limit,
		Set:        "state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = " + b.now + ", lease_expires_at = " + b.later + ", attempt = attempt + 1",
		SetArgs:    []any{b.d.UUID(c.token), b.d.UUID(c.worker), baseLease},
		Returning:  []string{"id", "kind", "payload", "attempt", "barrier_id"},
	}
	rows, err := b.d.Claim(ctx, countingQuerier{tx.q, tx.c}, spec)
	if err != nil {
		return nil, err
	}
	return scanBare(rows)
}

func (genericBare) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	marks, args := inList(b.d, ids)
	q := b.d.Rebind("UPDATE " + b.names.Items + " SET state = 'completed', finished_at = " + b.now +
		", lease_expires_at = NULL, result = " + b.json + " WHERE id IN (" + marks + ") AND claim_token = ? AND state = 'claimed'")
	res, err := tx.exec(ctx, q, append(append([]any{b.d.JSON(benchResult)}, args...), b.d.UUID(token))...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
