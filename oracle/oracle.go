package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Name is the dialect's registered name.
const Name = "oracle"

// DriverName is the database/sql driver name of github.com/sijms/go-ora/v2,
// which this package imports (and so registers).
const DriverName = "oracle"

// MaxInList is the most values Oracle takes in one IN (...) list (more is
// ORA-01795). Capabilities.MaxInList carries it, so the core splits its
// batches (and bounds a claim) to it.
const MaxInList = 1000

// MaxBindParams is the most bind variables the dialect lets one statement
// carry: 65,535, the limit of the protocol's bind count (a statement with
// more fails in the driver or the server).
const MaxBindParams = 65535

// LOBThreshold is the longest JSON document or Text value, in bytes, bound
// as a string; a longer one is bound as a temporary CLOB (go-ora's Clob),
// since a VARCHAR2 bind in SQL holds at most 4,000 bytes
// (MAX_STRING_SIZE=STANDARD) and a longer string would travel as LONG,
// which Oracle refuses in expressions: a MERGE's source, a SELECT list
// (ORA-00997).
const LOBThreshold = 4000

// openPingTimeout bounds the ping Open runs.
const openPingTimeout = 15 * time.Second

func init() {
	dialect.Register(dialect.Registration{
		Dialect: Dialect(),
		Open:    Open,
		DSN:     dialect.DSNForm{Example: "oracle://user:password@localhost:1521/FREEPDB1", Schemes: []string{"oracle"}},
		Version: serverVersion,
	})
}

// serverVersion returns "Oracle Database " and the server's release
// ("19.0.0.0.0", "23.4.0.24.05"), for reports such as the CLI's
// conformance table.
func serverVersion(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, versionQuery).Scan(&v); err != nil {
		return "", fmt.Errorf("oracle: version: %w", err)
	}
	return "Oracle Database " + v, nil
}

// versionQuery reads the server's release from PRODUCT_COMPONENT_VERSION,
// which every user may read.
const versionQuery = "SELECT version FROM product_component_version WHERE product LIKE 'Oracle Database%' FETCH FIRST 1 ROWS ONLY"

type oraDialect struct{}

var theDialect = &oraDialect{}

// Dialect returns the Oracle dialect. It is stateless and safe for
// concurrent use.
func Dialect() dialect.Dialect { return theDialect }

// Open opens the database dsn names through go-ora and pings it, so that
// an unreachable server or a bad password fails here rather than at first
// use. dsn is a go-ora URL, oracle://user:password@host:1521/service
// (goora.BuildUrl builds one). The error never includes the password.
//
// The pool opens at most dialect.DefaultMaxOpenConns (25) connections at
// once; database/sql's idle and lifetime settings are left as they are.
// Set another bound with db.SetMaxOpenConns before handing db to
// core.Open (worker.MinOpenConns says what a worker needs; 0 removes the
// bound).
//
// A call on a connection whose server stopped answering (a half-open
// connection: a partition, a load balancer that dropped the flow) fails
// within about 20 s, and a new connection within 10 s: Open dials through
// go-ora's connector with sqlkit.DefaultTCPBounds (TCP keepalives, and
// TCP_USER_TIMEOUT on Linux). go-ora's CONNECTION TIMEOUT in the DSN
// (seconds) sets the connect bound; see the package documentation.
func Open(dsn string) (*sql.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("oracle: empty DSN (want oracle://user:password@host:1521/service)")
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "oracle" {
		return nil, errors.New("oracle: invalid DSN: want oracle://user:password@host:1521/service")
	}
	where := u.Host + u.Path
	b, err := tcpBounds(u)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector(dsn, b))
	db.SetMaxOpenConns(dialect.DefaultMaxOpenConns)
	ctx, cancel := context.WithTimeout(context.Background(), openPingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("oracle: open %s: %w", where, err)
	}
	return db, nil
}

// Name returns "oracle".
func (d *oraDialect) Name() string { return Name }

// Capabilities describes Oracle 19c and 23ai: row locks with SKIP LOCKED,
// no UPDATE ... RETURNING that database/sql can read (RETURNING INTO takes
// OUT binds), DDL that commits on its own, IN lists of at most 1,000, SELECT
// of expressions from DUAL, and a microsecond clock (SYSTIMESTAMP on Linux;
// TIMESTAMP(6) columns).
func (d *oraDialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{
		SingleWriter:     false,
		ReturningUpdate:  false,
		LockClause:       " FOR UPDATE",
		TransactionalDDL: false,
		MaxBindParams:    MaxBindParams,
		MaxInList:        MaxInList,
		DualTable:        "dual",
		ClockResolution:  time.Microsecond,
		MaxClockOffset:   0,
	}
}

// Rebind rewrites '?' placeholders as go-ora's positional :1, :2, ...
// Every placeholder gets its own number, so that each bound value is used
// once, which is how go-ora and the server pair them in SQL and in PL/SQL
// blocks alike.
func (d *oraDialect) Rebind(query string) string { return sqlkit.RebindNumbered(query, ":") }

// Param returns TO_CLOB(?) for JSON, so that every row of a MERGE's source
// gives the column one type (CLOB) whether its value was bound as a
// string, a temporary CLOB or NULL; "?" for the rest.
func (d *oraDialect) Param(t dialect.ColumnType) string {
	if t == dialect.JSON || t == dialect.Text {
		return "TO_CLOB(?)"
	}
	return "?"
}

// clock is the database clock: the server's time at the start of the
// statement, in UTC, as a TIMESTAMP without a time zone. SYSTIMESTAMP is
// the server's time with the server's offset; SYS_EXTRACT_UTC takes the UTC
// instant out of it, so neither the session's nor the server's time zone
// plays a part (CURRENT_TIMESTAMP and LOCALTIMESTAMP are the session's).
const clock = "SYS_EXTRACT_UTC(SYSTIMESTAMP)"

// Now returns SYS_EXTRACT_UTC(SYSTIMESTAMP), shifted by offset. SYSTIMESTAMP
// is read once per statement, so it moves between the statements of a
// transaction and holds still within one.
func (d *oraDialect) Now(offset time.Duration) string {
	if us := offset.Microseconds(); us != 0 {
		return "(" + clock + " + NUMTODSINTERVAL(" + strconv.FormatInt(us, 10) + " / 1000000, 'SECOND'))"
	}
	return clock
}

// Limit returns " FETCH FIRST n ROWS ONLY" (Oracle 12c and later); a
// negative n becomes 0. The core never puts it in a query with a locking
// clause (ORA-02014); the claim does not use it.
func (d *oraDialect) Limit(n int) string {
	if n < 0 {
		n = 0
	}
	return " FETCH FIRST " + strconv.Itoa(n) + " ROWS ONLY"
}

// AddMicros adds a bound number of microseconds to t, as a day-to-second
// interval (exact: NUMBER division, and intervals keep nine fractional
// digits).
func (d *oraDialect) AddMicros(t string) string {
	return "(" + t + " + NUMTODSINTERVAL(? / 1000000, 'SECOND'))"
}

// UUID binds the 16 bytes, for a RAW(16) column.
func (d *oraDialect) UUID(u uuid.UUID) any {
	b := make([]byte, 16)
	copy(b, u[:])
	return b
}

// JSON binds the document as a string up to LOBThreshold bytes and as a
// temporary CLOB above it, for a CLOB column with an IS JSON check; a nil
// slice is NULL.
func (d *oraDialect) JSON(b []byte) any {
	if b == nil {
		return nil
	}
	if len(b) > LOBThreshold {
		return goora.Clob{String: string(b), Valid: true}
	}
	return string(b)
}

// Text binds s, for a CLOB column where the bind is an expression (the
// SELECT list of the attempts' INSERT ... SELECT, inside TO_CLOB), as JSON
// binds a document: a string up to LOBThreshold bytes and a temporary CLOB
// above, since a longer string would travel as LONG, which Oracle refuses
// in an expression (ORA-00997). It makes the dialect a dialect.TextBinder.
func (d *oraDialect) Text(s string) any {
	if len(s) > LOBThreshold {
		return goora.Clob{String: s, Valid: true}
	}
	return s
}

// Bool binds 0 or 1, for a NUMBER(1) column.
func (d *oraDialect) Bool(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

// ScanTime reads a TIMESTAMP(6) column, which holds a UTC wall-clock time
// without a zone: its fields are taken as UTC, whatever location the driver
// attached. A TIMESTAMP WITH TIME ZONE value would carry its own offset;
// Plenum's columns have none.
func (d *oraDialect) ScanTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC), nil
	case nil:
		return time.Time{}, errors.New("oracle: scan time: NULL")
	}
	return time.Time{}, fmt.Errorf("oracle: scan time: unsupported type %T", src)
}
