package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Name is the dialect's registered name.
const Name = "postgres"

// DriverName is the database/sql driver name of pgx's stdlib adapter
// (github.com/jackc/pgx/v5/stdlib), which this package imports.
const DriverName = "pgx"

// MinServerVersion is the oldest PostgreSQL release Check accepts, as
// server_version_num. Nothing in the dialect's SQL needs more than 9.5
// (SKIP LOCKED, ON CONFLICT); releases before 13 are past their end of life
// and untested, so they are refused rather than trusted.
const MinServerVersion = 130000

// openTimeout bounds the ping of Open.
const openTimeout = 30 * time.Second

func init() {
	dialect.Register(dialect.Registration{
		Dialect: Dialect(),
		Open:    Open,
		DSN:     dialect.DSNForm{Example: "postgres://user:password@localhost:5432/db?sslmode=disable", Schemes: []string{"postgres", "postgresql"}, Recognize: isKeywordDSN},
		Version: serverVersion,
		Settle:  Settle,
	})
}

// serverVersion returns "PostgreSQL " and the server_version setting.
func serverVersion(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version')").Scan(&v); err != nil {
		return "", fmt.Errorf("postgres: version: %w", err)
	}
	return "PostgreSQL " + v, nil
}

type pgDialect struct{}

var theDialect = &pgDialect{}

// Dialect returns the PostgreSQL dialect. It is stateless and safe for
// concurrent use.
func Dialect() dialect.Dialect { return theDialect }

// Open opens a *sql.DB on dsn through pgx's database/sql adapter and pings
// it, so that a wrong DSN fails here rather than at first use. dsn is a URL
// (postgres://user:password@host:5432/db?sslmode=disable) or a keyword/value
// string; parameters pgx does not know itself are sent to the server as
// run-time settings, so search_path=jobs puts Plenum's tables in the schema
// jobs (see the package documentation).
//
// The pool opens at most dialect.DefaultMaxOpenConns (25) connections at
// once; database/sql's idle and lifetime settings are left as they are.
// Set another bound with db.SetMaxOpenConns before handing db to
// core.Open (worker.MinOpenConns says what a worker needs; 0 removes the
// bound).
//
// A call on a connection whose server stopped answering (a half-open
// connection: a partition, a load balancer that dropped the flow) fails
// within about 20 s, and a new connection within 10 s
// (sqlkit.DefaultTCPBounds: connect_timeout, TCP keepalives, and
// TCP_USER_TIMEOUT on Linux), where the DSN sets none of libpq's
// connect_timeout, keepalives_idle, keepalives_interval, keepalives_count
// and tcp_user_timeout; see the package documentation.
func Open(dsn string) (*sql.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("postgres: open: empty DSN (e.g. postgres://user:password@localhost:5432/db?sslmode=disable)")
	}
	if k := sqlkit.DSNKind(dsn); k != "" && k != Name && k != "cockroach" {
		return nil, fmt.Errorf("postgres: open: the DSN is written for %s, not PostgreSQL: open it with the %s dialect, or give a PostgreSQL DSN (postgres://user:password@host:5432/db)", k, k)
	}
	cfg, err := boundedConfig(dsn)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(dialect.DefaultMaxOpenConns)
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, ConnectError("postgres: open", err)
	}
	return db, nil
}

// Name returns "postgres".
func (d *pgDialect) Name() string { return Name }

// Capabilities describes PostgreSQL: row locks with SKIP LOCKED, RETURNING,
// transactional DDL, a microsecond clock that every connection shares.
func (d *pgDialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{
		ReturningUpdate:  true,
		RecursiveScan:    true,
		LockClause:       " FOR NO KEY UPDATE",
		TransactionalDDL: true,
		// The wire protocol counts parameters in 16 bits.
		MaxBindParams: 65535,
		// A fan-out's page of 1,000 children goes in one INSERT (the
		// server executed it in 100 ms where two of 500 took 138). Not
		// the bind limit's 6,553 rows: every session keeps the plan of
		// each statement pgx prepared on it, and a prepared INSERT of
		// 6,553 rows holds 26.5 MB of the server's memory (1,000 rows:
		// 4.4 MB; 500: 2.2 MB).
		MaxInsertRows: 1000,
		// The server refuses a message over 1 GB; a batch of big payloads
		// stays well below it.
		MaxStatementBytes: 256 << 20,
		ClockResolution:   time.Microsecond,
		MaxClockOffset:    0,
	}
}

// Rebind rewrites '?' placeholders as $1, $2, ...
func (d *pgDialect) Rebind(query string) string { return sqlkit.RebindNumbered(query, "$") }

// Param casts JSON parameters to jsonb: inside a CASE or a VALUES list the
// server cannot infer their type, and would read them as text.
func (d *pgDialect) Param(t dialect.ColumnType) string {
	if t == dialect.JSON {
		return "CAST(? AS jsonb)"
	}
	return "?"
}

// Now returns statement_timestamp(): the time the server received the
// statement, one value for the whole statement, moving from each statement
// to the next. now() would not do: it is frozen at the start of the
// transaction, and heartbeats, the reaper and fences compare and stamp
// times inside transactions that may last long. clock_timestamp() moves
// within a statement too, so the rows of one multi-row INSERT would get
// different times, in the order the rows are written rather than the order
// the caller gave them.
func (d *pgDialect) Now(offset time.Duration) string {
	us := offset.Microseconds()
	if us == 0 {
		return "statement_timestamp()"
	}
	return "(statement_timestamp() + INTERVAL '" + strconv.FormatInt(us, 10) + " microseconds')"
}

// Limit returns " LIMIT n"; a negative n becomes 0.
func (d *pgDialect) Limit(n int) string {
	return " LIMIT " + strconv.Itoa(max(n, 0))
}

// AddMicros adds a bound number of microseconds to the time t. The cast
// fixes the parameter's type, which the multiplication leaves open.
func (d *pgDialect) AddMicros(t string) string {
	return "(" + t + " + CAST(? AS bigint) * INTERVAL '1 microsecond')"
}

// Claim takes the rows in one statement: a CTE picks them with FOR UPDATE
// SKIP LOCKED, in claim order, and an UPDATE of the same table applies the
// claim and returns them. Runs at READ COMMITTED (Begin), where a row that
// another transaction changed after the snapshot is checked again against
// the filter before it is locked.
func (d *pgDialect) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if q == nil {
		return nil, errors.New("postgres: claim: nil querier")
	}
	stmt, args, err := claimStatement(spec)
	if err != nil {
		return nil, err
	}
	return q.QueryContext(ctx, stmt, args...)
}

// claimStatement returns the statement Claim runs for spec, rebound, with
// its arguments: the filter's first (the CTE comes first in the text), then
// the assignment's. The update finds the chosen rows by their ids as an
// array (id = ANY(ARRAY(...))), which the planner reads through the primary
// key whatever the table's size: as id IN (SELECT ...), a semi-join, it
// hashed the chosen ids and read the whole table where the table was small
// enough to look cheap (a claim of 50 of 10,000 lanes read all 10,000,
// TestLaneTakePlan_FlatInKeys).
func claimStatement(spec dialect.ClaimSpec) (string, []any, error) {
	if err := spec.Validate(); err != nil {
		return "", nil, fmt.Errorf("postgres: claim: %w", err)
	}
	stmt, args := sqlkit.CTEClaim(spec, spec.Key+" = ANY(ARRAY(SELECT "+spec.Key+" FROM c))")
	return sqlkit.RebindNumbered(stmt, "$"), args, nil
}

// InsertIgnore returns INSERT ... VALUES (row), ... ON CONFLICT DO NOTHING,
// rebound. Without a conflict target every unique index is covered, as the
// contract asks; the command tag counts only the rows inserted. The core
// learns the ids of the rows that already existed with one lookup per batch
// in which some row was skipped, so an enqueue costs one round trip, or two
// when a key already existed. n below 1 gives a statement the server
// rejects.
func (d *pgDialect) InsertIgnore(table string, columns []string, row string, n int, _ []string) string {
	return sqlkit.RebindNumbered(sqlkit.InsertValues(table, columns, row, n)+" ON CONFLICT DO NOTHING", "$")
}

// UUID binds the canonical text form, which the server reads as uuid.
func (d *pgDialect) UUID(u uuid.UUID) any { return u.String() }

// JSON binds the document as text for a jsonb parameter (pgx sends a
// string to a json or jsonb parameter as is), and nil as NULL.
func (d *pgDialect) JSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Bool binds a bool.
func (d *pgDialect) Bool(b bool) any { return b }

// ScanTime reads a timestamptz, which pgx returns as a time.Time.
func (d *pgDialect) ScanTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return v.UTC(), nil
	case nil:
		return time.Time{}, errors.New("postgres: scan time: NULL")
	}
	return time.Time{}, fmt.Errorf("postgres: scan time: unsupported type %T (is the column timestamptz?)", src)
}

// isPgx reports whether db talks through pgx's database/sql adapter.
func isPgx(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// InUUIDs tests column against a uuid[] parameter: one parameter, and one
// statement text, whatever the number of ids.
func (d *pgDialect) InUUIDs(column string) string {
	return column + " = ANY(CAST(? AS uuid[]))"
}

// UUIDList binds ids as the text of a uuid[] literal, {id,id,...}, which
// the server reads as the parameter's declared type.
func (d *pgDialect) UUIDList(ids []uuid.UUID) any {
	b := make([]byte, 0, 2+37*len(ids))
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		var s [36]byte
		hexUUID(s[:], id)
		b = append(b, s[:]...)
	}
	return string(append(b, '}'))
}

var _ dialect.KeyLister = theDialect

// FirstPerKey reads the first rows of each key in one query whatever the
// number of keys: the keys and their counts are two arrays, unnested side
// by side, and a LATERAL subquery reads each key's rows along its index,
// stopping at its count. Planned and started once, where a UNION ALL of
// one subquery per key was planned and started once per key (50 keys:
// 7-15 ms of planning against under 1 ms for 4). The arrays' columns have
// names no table of the core's has, so that the subquery's own columns
// are never taken for them.
func (d *pgDialect) FirstPerKey(table, columns, key, filter, orderBy string) string {
	return firstPerKey(table, columns, key, filter, orderBy, "")
}

// firstPerKey is FirstPerKey with lock after each key's LIMIT.
func firstPerKey(table, columns, key, filter, orderBy, lock string) string {
	return "SELECT f_.* FROM unnest(CAST(? AS text[]), CAST(? AS integer[])) AS k_(key_, n_)" +
		" CROSS JOIN LATERAL (SELECT " + columns + " FROM " + table + " WHERE " + filter + " AND " + key + " = k_.key_" +
		" ORDER BY " + orderBy + " LIMIT k_.n_" + lock + ") f_"
}

// FirstPerKeyLocked is FirstPerKey with each key's read locking its rows
// and passing over those another transaction holds, inside the LATERAL
// subquery: two claims of the same keys then take each key's next rows.
func (d *pgDialect) FirstPerKeyLocked(table, columns, key, filter, orderBy string) string {
	return firstPerKey(table, columns, key, filter, orderBy, d.Capabilities().LockClause+" SKIP LOCKED")
}

// KeyList binds keys as the text of a text[] literal, each element quoted
// (a backslash before a quote or a backslash), and counts as an integer[]
// literal, as UUIDList does ids.
func (d *pgDialect) KeyList(keys []string, counts []int) (any, any) {
	b := make([]byte, 0, 2+16*len(keys))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(k); j++ {
			if k[j] == '"' || k[j] == '\\' {
				b = append(b, '\\')
			}
			b = append(b, k[j])
		}
		b = append(b, '"')
	}
	b = append(b, '}')
	c := make([]byte, 0, 2+4*len(counts))
	c = append(c, '{')
	for i, n := range counts {
		if i > 0 {
			c = append(c, ',')
		}
		c = strconv.AppendInt(c, int64(n), 10)
	}
	return string(b), string(append(c, '}'))
}

// hexUUID writes the canonical text form of id into dst, without the
// allocation of uuid.UUID.String.
func hexUUID(dst []byte, id uuid.UUID) {
	const digits = "0123456789abcdef"
	j := 0
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = digits[c>>4], digits[c&0xf]
		j += 2
	}
}
