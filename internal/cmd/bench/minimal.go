package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// The minimal baseline is the bare loop of the claim+complete row (one
// claim in claim order that passes over locked rows, a completion fenced
// by the ids and the claim token, through database/sql) on a table that
// holds only what that loop needs: the primary key, the claim's index
// (partial, of the available items, where the database has partial
// indexes) and only the columns the claim and the completion touch. The
// claim filters on queue, state and available_at, orders by priority,
// available_at and id, sets state, claim_token, lease_expires_at and
// attempt, and returns id, payload and attempt; the completion sets the
// state of the claimed rows that still hold the token. Next to the claim+complete
// row, which runs the same loop on Plenum's tables, it shows what those
// tables cost: their other columns and indexes, which each state change
// writes entries into. It is not a shape: --shapes picks among SQL on
// Plenum's own tables.

// minimalSQL is the minimal table of one database: its DDL and its loop.
type minimalSQL struct {
	// ddl creates the table named t and its claim index.
	ddl func(t string) []string
	// shape is the bare loop on it.
	shape bareShape
}

// minimalFor returns the minimal table of d's database, and false for a
// database the bench has no minimal table for (the row is then left out).
// Like the baseline, it is SQL written for one database, so it goes by
// the dialect's name.
func minimalFor(d dialect.Dialect) (minimalSQL, bool) { return minimalNamed(d.Name()) }

// minimalNamed is minimalFor by the database's name.
func minimalNamed(database string) (minimalSQL, bool) {
	switch database {
	case "postgres":
		return minimalSQL{ddl: func(t string) []string {
			return []string{
				"CREATE TABLE " + t + " (id uuid NOT NULL PRIMARY KEY, queue varchar(128) NOT NULL, priority integer NOT NULL," +
					" available_at timestamptz NOT NULL, state varchar(16) NOT NULL, attempt integer NOT NULL," +
					" claim_token uuid, lease_expires_at timestamptz, payload jsonb)",
				"CREATE INDEX " + t + "_claim ON " + t + " (queue, priority, available_at, id) WHERE state = 'available'",
			}
		}, shape: bareShape{name: "minimal table", sql: pgMinimal{}}}, true
	case "sqlite":
		return minimalSQL{ddl: func(t string) []string {
			return []string{
				"CREATE TABLE " + t + " (id BLOB NOT NULL PRIMARY KEY, queue TEXT NOT NULL, priority INTEGER NOT NULL," +
					" available_at INTEGER NOT NULL, state TEXT NOT NULL, attempt INTEGER NOT NULL," +
					" claim_token BLOB, lease_expires_at INTEGER, payload TEXT)",
				"CREATE INDEX " + t + "_claim ON " + t + " (queue, priority, available_at, id) WHERE state = 'available'",
			}
		}, shape: bareShape{name: "minimal table", sql: sqliteMinimal{}}}, true
	case "mysql":
		// No partial indexes: the claim index leads with the state, as
		// Plenum's does on MySQL and MariaDB.
		return minimalSQL{ddl: func(t string) []string {
			return []string{
				"CREATE TABLE " + t + " (id BINARY(16) NOT NULL PRIMARY KEY, queue VARBINARY(512) NOT NULL, priority INT NOT NULL," +
					" available_at DATETIME(6) NOT NULL, state VARBINARY(64) NOT NULL, attempt INT NOT NULL," +
					" claim_token BINARY(16) NULL, lease_expires_at DATETIME(6) NULL, payload LONGTEXT NULL) ENGINE=InnoDB",
				"CREATE INDEX " + t + "_claim ON " + t + " (state, queue, priority, available_at, id)",
			}
		}, shape: bareShape{name: "minimal table", sql: mysqlMinimal{}, prepared: true}}, true
	}
	return minimalSQL{}, false
}

// minimalTable is the minimal table of a run, under the baseline's
// prefix.
func minimalTable(prefix string) string { return prefix + "minimal" }

// newMinimal creates the minimal table of d's database on db and returns
// the baseline that runs the bare loop on it and the DDL it ran; ok is
// false when the bench has none for the database.
func newMinimal(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string, batch int) (m *baseline, ddl []string, ok bool, err error) {
	ms, ok := minimalFor(d)
	if !ok {
		return nil, nil, false, nil
	}
	table := minimalTable(prefix)
	ddl = ms.ddl(table)
	for _, q := range ddl {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, ddl, true, fmt.Errorf("minimal table: %w", err)
		}
	}
	return newBaseline(db, d, migrations.Names{Items: table}, batch, ms.shape), ddl, true, nil
}

// dropMinimal drops the minimal table under prefix, if there is one.
func dropMinimal(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) error {
	if _, ok := minimalFor(d); !ok {
		return nil
	}
	for _, q := range d.DropTable(minimalTable(prefix)) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// minimalArgsPerRow are the bind parameters of a row of the minimal
// table's INSERT: id, queue, payload.
const minimalArgsPerRow = 3

// enqueueMinimal inserts n items into queue of the minimal table,
// benchChunk per transaction, in multi-row INSERTs as large as the
// dialect's limits allow.
func (b *baseline) enqueueMinimal(ctx context.Context, queue string, n int) error {
	head := "INSERT INTO " + b.names.Items + " (id, queue, priority, available_at, state, attempt, payload) VALUES "
	row := "(?, ?, 0, " + b.now + ", 'available', 0, " + b.json + ")"
	maxRows := max(1, b.d.Capabilities().MaxBindParams/minimalArgsPerRow)
	s := &bareSession{b: b}
	for i := 0; i < n; i += benchChunk {
		type stmt struct {
			text string
			args []any
		}
		var stmts []stmt
		var (
			q     strings.Builder
			args  []any
			bytes int
		)
		flush := func() {
			stmts = append(stmts, stmt{b.d.Rebind(q.String()), args})
			q.Reset()
			args, bytes = nil, 0
		}
		for j := i; j < min(i+benchChunk, n); j++ {
			payload := fmt.Appendf(nil, `{"n":%d}`, j)
			size := len(row) + len(queue) + len(payload) + baseRowOverhead
			rows := len(args) / minimalArgsPerRow
			if rows == maxRows || (b.maxBytes > 0 && rows > 0 && len(head)+bytes+size > b.maxBytes) {
				flush()
				rows = 0
			}
			if rows == 0 {
				q.WriteString(head)
			} else {
				q.WriteString(", ")
			}
			q.WriteString(row)
			bytes += size
			args = append(args, b.d.UUID(uuid.Must(uuid.NewV7())), queue, b.d.JSON(payload))
		}
		flush()
		err := s.tx(ctx, func(tx bareTx) error {
			for _, s := range stmts {
				if _, err := tx.exec(ctx, s.text, s.args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// countMinimal returns how many items of queue the minimal table holds
// completed.
func (b *baseline) countMinimal(ctx context.Context, queue string) (int64, error) {
	var n int64
	q := b.d.Rebind("SELECT COUNT(*) FROM " + b.names.Items + " WHERE queue = ? AND state = 'completed'")
	err := b.db.QueryRowContext(ctx, q, queue).Scan(&n)
	return n, err
}

// scanMinimal reads the rows of a minimal claim: id, payload, attempt.
func scanMinimal(rows *sql.Rows) ([]bareItem, error) {
	defer rows.Close()
	var out []bareItem
	for rows.Next() {
		var (
			it      bareItem
			payload []byte
			attempt int
		)
		if err := rows.Scan(&it.id, &payload, &attempt); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// pgMinimal is PostgreSQL's bare loop on the minimal table: the claim a
// CTE with FOR UPDATE SKIP LOCKED, the completion by id = ANY($1::uuid[])
// AND claim_token = $2 (and the state, so that completing again changes
// nothing: the table has no partial index of claimed items for the
// planner to read whole instead of the primary key).
type pgMinimal struct{}

func (pgMinimal) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	q := "WITH c AS (SELECT id FROM " + b.names.Items +
		" WHERE queue = $1 AND state = 'available' AND available_at <= statement_timestamp()" +
		" ORDER BY priority, available_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)" +
		" UPDATE " + b.names.Items + " AS i SET state = 'claimed', claim_token = $3," +
		" lease_expires_at = statement_timestamp() + CAST($4 AS bigint) * INTERVAL '1 microsecond', attempt = i.attempt + 1" +
		" FROM c WHERE i.id = c.id RETURNING i.id, i.payload, i.attempt"
	rows, err := tx.query(ctx, q, c.queue, c.limit, c.token.String(), baseLease)
	if err != nil {
		return nil, err
	}
	return scanMinimal(rows)
}

func (pgMinimal) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	res, err := tx.exec(ctx, "UPDATE "+b.names.Items+" SET state = 'completed' WHERE id = ANY($1::uuid[]) AND claim_token = $2 AND state = 'claimed'",
		uuidTexts(ids), token.String())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// sqliteMinimal is SQLite's: the claim one UPDATE ... WHERE id IN (SELECT
// ... LIMIT n) RETURNING in the dialect's write transaction (SQLite has no
// SKIP LOCKED: it has one writer), the completion by ids bound as one JSON
// array and the token.
type sqliteMinimal struct{}

func (sqliteMinimal) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	q := "UPDATE " + b.names.Items + " SET state = 'claimed', claim_token = ?, lease_expires_at = " + b.later +
		", attempt = attempt + 1 WHERE id IN (SELECT id FROM " + b.names.Items +
		" WHERE queue = ? AND state = 'available' AND available_at <= " + b.now +
		" ORDER BY priority, available_at, id LIMIT ?) RETURNING id, payload, attempt"
	rows, err := tx.query(ctx, q, b.d.UUID(c.token), baseLease, c.queue, c.limit)
	if err != nil {
		return nil, err
	}
	return scanMinimal(rows)
}

func (sqliteMinimal) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	res, err := tx.exec(ctx, "UPDATE "+b.names.Items+" SET state = 'completed' WHERE id IN (SELECT unhex(value) FROM json_each(?)) AND claim_token = ? AND state = 'claimed'",
		hexList(ids), b.d.UUID(token))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// mysqlMinimal is MySQL's and MariaDB's: no UPDATE ... RETURNING, so the
// claim is a locking read (FOR UPDATE SKIP LOCKED) and an UPDATE of the
// rows it locked; the completion an UPDATE by IN list and token; every
// statement prepared once per connection (the fastest shape on Plenum's
// tables there).
type mysqlMinimal struct{}

func (mysqlMinimal) claim(ctx context.Context, b *baseline, tx bareTx, c bareClaim) ([]bareItem, error) {
	rows, err := tx.query(ctx, "SELECT id, payload, attempt FROM "+b.names.Items+
		" WHERE queue = ? AND state = 'available' AND available_at <= "+b.now+
		" ORDER BY priority, available_at, id LIMIT ? FOR UPDATE SKIP LOCKED", c.queue, c.limit)
	if err != nil {
		return nil, err
	}
	items, err := scanMinimal(rows)
	if err != nil || len(items) == 0 {
		return items, err
	}
	ids := make([]uuid.UUID, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	marks, idArgs := inList(b.d, ids)
	_, err = tx.exec(ctx, "UPDATE "+b.names.Items+" SET state = 'claimed', claim_token = ?, lease_expires_at = "+b.later+
		", attempt = attempt + 1 WHERE id IN ("+marks+")", append([]any{b.d.UUID(c.token), baseLease}, idArgs...)...)
	return items, err
}

func (mysqlMinimal) complete(ctx context.Context, b *baseline, tx bareTx, ids []uuid.UUID, token uuid.UUID) (int64, error) {
	marks, idArgs := inList(b.d, ids)
	res, err := tx.exec(ctx, "UPDATE "+b.names.Items+" SET state = 'completed' WHERE id IN ("+marks+") AND claim_token = ? AND state = 'claimed'",
		append(idArgs, b.d.UUID(token))...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// minimalRow names the row of the minimal table.
const minimalRow = "minimal"
