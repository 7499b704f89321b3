package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Name is the dialect's registered name.
const Name = "mysql"

// DriverName is the database/sql driver name of github.com/go-sql-driver/mysql,
// which this package imports (and so registers).
const DriverName = "mysql"

// MaxStatementBytes is the size the dialect keeps each statement under,
// bound values included: 4 MiB, a quarter of MariaDB's default
// max_allowed_packet (16 MiB) and a sixteenth of MySQL 8's (64 MiB).
const MaxStatementBytes = 4 << 20

// MinMaxAllowedPacket is the smallest max_allowed_packet Check accepts:
// twice MaxStatementBytes, because the core sizes a batch by an estimate
// of each row (its payload and key exactly, the rest as a fixed overhead),
// and one row with a payload near Options.MaxPayloadBytes may go past the
// bound on its own.
const MinMaxAllowedPacket = 2 * MaxStatementBytes

// DialTimeout is the dial timeout DSN sets when the DSN has none.
const DialTimeout = 10 * time.Second

// openPingTimeout bounds the ping Open runs.
const openPingTimeout = 15 * time.Second

// driverDefaultMaxAllowedPacket is the driver's own default for its
// maxAllowedPacket parameter (64 MiB), which DSN replaces with 0: ask the
// server.
const driverDefaultMaxAllowedPacket = 64 << 20

func init() {
	dialect.Register(dialect.Registration{
		Dialect: Dialect(),
		Open:    Open,
		Aliases: []string{"mariadb"},
		DSN:     dialect.DSNForm{Example: "user:password@tcp(localhost:3306)/db", Recognize: isDriverDSN},
		Version: serverVersion,
	})
}

// serverVersion returns the product (MySQL or MariaDB) and VERSION().
func serverVersion(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("mysql: version: %w", err)
	}
	if strings.Contains(v, "MariaDB") {
		return "MariaDB " + v, nil
	}
	return "MySQL " + v, nil
}

type mysqlDialect struct{}

var theDialect = &mysqlDialect{}

// Dialect returns the MySQL/MariaDB dialect. It is stateless and safe for
// concurrent use.
func Dialect() dialect.Dialect { return theDialect }

// DSN returns dsn, a go-sql-driver/mysql data source name
// ("user:password@tcp(host:3306)/db?param=value"), with every setting the
// dialect depends on: parseTime=true (DATETIME columns scan as time.Time),
// loc=UTC (the driver's default: times are read and bound as UTC),
// maxAllowedPacket=0 (the driver asks the server for its limit and refuses
// a bigger statement itself, instead of the server dropping the
// connection), time_zone='+00:00' (so that NOW() and CURRENT_TIMESTAMP in the
// application's own statements agree with Plenum's UTC columns; Plenum
// itself reads only UTC_TIMESTAMP), and a dial timeout of DialTimeout when
// the DSN has none, and interpolateParams=true unless the DSN sets it.
// Other settings the DSN has are kept (parseTime=false
// is overridden), except that clientFoundRows=true and a loc other than UTC
// are refused: the dialect cannot work with either. No read timeout is set: it would cut off
// legitimate waits (row locks up to innodb_lock_wait_timeout, the
// application's own statements inside a fence) and turn a slow commit into
// an unknown outcome; contexts bound waits instead.
//
// interpolateParams has the driver write the bound values into the
// statement text, so that each statement is one round trip, where the
// binary protocol prepares, executes and closes it (three). It is safe
// here: the driver escapes every value, honours NO_BACKSLASH_ESCAPES, and
// refuses a collation whose multibyte characters can hide a backslash
// (BIG5, CP932, GB2312, GBK, SJIS), and Check refuses any connection
// character set but utf8mb4. A DSN with interpolateParams=false keeps the
// binary protocol.
func DSN(dsn string) (string, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return "", err
	}
	if cfg.ClientFoundRows {
		return "", errors.New("mysql: DSN has clientFoundRows=true: remove it; INSERT ... ON DUPLICATE KEY UPDATE then counts existing rows as affected, and the dialect learns which rows were new from that count")
	}
	if cfg.Loc != time.UTC {
		return "", fmt.Errorf("mysql: DSN has loc=%s: remove it or set loc=UTC; Plenum stores and reads every time in UTC", cfg.Loc)
	}
	cfg.ParseTime = true
	if cfg.Timeout == 0 {
		cfg.Timeout = DialTimeout
	}
	if cfg.MaxAllowedPacket == driverDefaultMaxAllowedPacket {
		cfg.MaxAllowedPacket = 0
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["time_zone"]; !ok {
		cfg.Params["time_zone"] = "'+00:00'"
	}
	if !setsParam(dsn, "interpolateParams") {
		cfg.InterpolateParams = true
	}
	return cfg.FormatDSN(), nil
}

// setsParam reports whether the DSN's parameters (after the '?' that
// follows the last '/', as the driver reads them) name param.
func setsParam(dsn, param string) bool {
	slash := strings.LastIndexByte(dsn, '/')
	q := strings.IndexByte(dsn[slash+1:], '?')
	if q < 0 {
		return false
	}
	for kv := range strings.SplitSeq(dsn[slash+1+q+1:], "&") {
		if k, _, _ := strings.Cut(kv, "="); k == param {
			return true
		}
	}
	return false
}

// parseDSN is the driver's ParseDSN, with its panic (it panics on the
// removed "strict" parameter) turned into an error.
func parseDSN(dsn string) (cfg *gomysql.Config, err error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("mysql: empty DSN (want user:password@tcp(host:3306)/database)")
	}
	if strings.Contains(dsn, "://") {
		// go-sql-driver's DSNs have no scheme; a URL is for another
		// driver, or a mysql:// URL a habit from elsewhere.
		k := sqlkit.DSNKind(dsn)
		if k == "" || k == Name {
			return nil, errors.New("mysql: invalid DSN: a URL is not a go-sql-driver DSN: write user:password@tcp(host:3306)/database")
		}
		return nil, fmt.Errorf("mysql: invalid DSN: the DSN is written for %s, not MySQL: open it with the %s dialect, or give a MySQL DSN (user:password@tcp(host:3306)/database)", k, k)
	}
	defer func() {
		if p := recover(); p != nil {
			cfg, err = nil, fmt.Errorf("mysql: invalid DSN: %v", p)
		}
	}()
	cfg, err = gomysql.ParseDSN(dsn)
	if err != nil {
		if addr, ok := bareAddress(dsn); ok {
			return nil, fmt.Errorf("mysql: invalid DSN: %q is a host and port without the network that go-sql-driver's DSNs name: write user:password@tcp(%s)/database", addr, addr)
		}
		return nil, fmt.Errorf("mysql: invalid DSN: %w", err)
	}
	return cfg, nil
}

// bareAddress returns the address of a DSN written user@host:port/db,
// the form of other tools, where go-sql-driver wants
// user@tcp(host:port)/db: it reads the host and port as the name of a
// network, and says only "default addr for network ... unknown".
func bareAddress(dsn string) (string, bool) {
	slash := strings.LastIndexByte(dsn, '/')
	if slash < 0 {
		return "", false
	}
	head := dsn[:slash]
	addr := head[strings.LastIndexByte(head, '@')+1:]
	switch addr {
	case "", "tcp", "tcp4", "tcp6", "unix":
		return "", false
	}
	if strings.ContainsAny(addr, "()") {
		return "", false
	}
	return addr, true
}

// Open opens the database dsn names with the settings DSN adds, and pings
// it, so that an unreachable server or a bad password fails here rather
// than at first use. It sets a connection lifetime of three minutes, below
// the idle timeouts of servers and proxies, as the driver recommends. The
// error never includes the password.
//
// The pool opens at most dialect.DefaultMaxOpenConns (25) connections at
// once; database/sql's idle and lifetime settings are left as they are (but for that lifetime).
// Set another bound with db.SetMaxOpenConns before handing db to
// core.Open (worker.MinOpenConns says what a worker needs; 0 removes the
// bound).
//
// Over TCP, a call on a connection whose server stopped answering (a
// half-open connection: a partition, a load balancer that dropped the
// flow) fails within about 20 s, and a dial within the DSN's timeout
// (DialTimeout, 10 s, where it sets none): TCP keepalives and, on Linux,
// TCP_USER_TIMEOUT (sqlkit.DefaultTCPBounds). See the package
// documentation, "When the network fails".
func Open(dsn string) (*sql.DB, error) {
	full, err := DSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := parseDSN(full)
	if err != nil {
		return nil, err
	}
	where := cfg.Net + "(" + cfg.Addr + ")/" + cfg.DBName
	if cfg.Net == "tcp" && cfg.DialFunc == nil {
		b := sqlkit.DefaultTCPBounds
		b.Connect = cfg.Timeout
		cfg.DialFunc = b.Dialer().DialContext
	}
	connector, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: open %s: %w", where, err)
	}
	db := sql.OpenDB(connector)
	db.SetConnMaxLifetime(3 * time.Minute)
	db.SetMaxOpenConns(dialect.DefaultMaxOpenConns)
	ctx, cancel := context.WithTimeout(context.Background(), openPingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, connectError(where, err)
	}
	return db, nil
}

// Name returns "mysql".
func (d *mysqlDialect) Name() string { return Name }

// Capabilities describes MySQL 8 and MariaDB 10.6+: row locks with SKIP
// LOCKED, no UPDATE ... RETURNING, DDL that commits on its own, a
// microsecond clock. No RecursiveScan: MariaDB 10.11 runs the key scan's
// correlated probe (flow_key > the key before) as a read of the queue's
// index prefix from its first entry, not as a range from the bound (a
// claim of 100 keys examined 25,000 rows of a 5,000-item queue and took
// 0.1 to 0.3 s), so claims of keyed items take lanes here.
func (d *mysqlDialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{
		SingleWriter:      false,
		ReturningUpdate:   false,
		LockClause:        " FOR UPDATE",
		TransactionalDDL:  false,
		MaxBindParams:     65535,
		MaxStatementBytes: MaxStatementBytes,
		MaxInList:         0,
		ClockResolution:   time.Microsecond,
		MaxClockOffset:    0,
	}
}

// Rebind returns query unchanged: MySQL takes '?'.
func (d *mysqlDialect) Rebind(query string) string { return sqlkit.RebindQuestion(query) }

// Param returns "?": MySQL infers every type Plenum binds.
func (d *mysqlDialect) Param(dialect.ColumnType) string { return "?" }

// Now returns UTC_TIMESTAMP(6), shifted by offset. It is the time at which
// the statement started, so it moves between the statements of a
// transaction, and it does not depend on the session's time_zone.
// (SYSDATE(6) would move within a statement too, but keeps indexes from
// being used and is unsafe for statement-based binary logs.)
func (d *mysqlDialect) Now(offset time.Duration) string {
	const now = "UTC_TIMESTAMP(6)"
	if us := offset.Microseconds(); us != 0 {
		return "DATE_ADD(" + now + ", INTERVAL " + strconv.FormatInt(us, 10) + " MICROSECOND)"
	}
	return now
}

// Limit returns " LIMIT n"; a negative n becomes 0.
func (d *mysqlDialect) Limit(n int) string {
	if n < 0 {
		n = 0
	}
	return " LIMIT " + strconv.Itoa(n)
}

// AddMicros adds a bound number of microseconds to t.
func (d *mysqlDialect) AddMicros(t string) string {
	return "DATE_ADD(" + t + ", INTERVAL ? MICROSECOND)"
}

// Claim takes up to spec.Limit rows in three statements of the caller's
// transaction, since neither server has UPDATE ... RETURNING:
//
//	SELECT key FROM t WHERE filter ORDER BY order LIMIT n FOR UPDATE SKIP LOCKED
//	UPDATE t SET set WHERE key IN (...)
//	SELECT returning FROM t WHERE key IN (...) ORDER BY order
//
// The first locks the rows it returns and passes over rows other
// transactions hold; it must read them through an index in claim order (no
// filesort), or InnoDB locks every row it sorts. It returns the rows of the
// last statement, or an empty result when nothing was free.
func (d *mysqlDialect) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if err := validClaim(q, spec); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, claimSelect(spec), spec.FilterArgs...)
	if err != nil {
		return nil, err
	}
	var ids []any
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	returning := strings.Join(spec.Returning, ", ")
	if len(ids) == 0 {
		// The caller reads columns, so give it the right ones, and no row.
		return q.QueryContext(ctx, "SELECT "+returning+" FROM "+spec.Table+" WHERE 1 = 0")
	}
	in := spec.Key + " IN (" + sqlkit.Placeholders(len(ids)) + ")"
	args := make([]any, 0, len(spec.SetArgs)+len(ids))
	args = append(args, spec.SetArgs...)
	args = append(args, ids...)
	if _, err := q.ExecContext(ctx, "UPDATE "+spec.Table+" SET "+spec.Set+" WHERE "+in, args...); err != nil {
		return nil, err
	}
	return q.QueryContext(ctx, "SELECT "+returning+" FROM "+spec.Table+" WHERE "+in+" ORDER BY "+spec.OrderBy, ids...)
}

func validClaim(q dialect.Querier, spec dialect.ClaimSpec) error {
	if q == nil {
		return errors.New("mysql: claim: nil querier")
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("mysql: claim: %w", err)
	}
	return nil
}

// claimSelect is the locking SELECT that picks the rows a claim takes.
func claimSelect(spec dialect.ClaimSpec) string {
	return spec.Candidates(" LIMIT "+strconv.Itoa(spec.Limit)) + " FOR UPDATE SKIP LOCKED"
}

// LockRows returns the first statement of Claim reading spec.Returning
// in place of the key, with no update (dialect.RowLocker): it must read
// the rows through an index in claim order too, or InnoDB locks every
// row it sorts.
func (d *mysqlDialect) LockRows(spec dialect.ClaimSpec) (string, []any, error) {
	if err := spec.ValidateLock(); err != nil {
		return "", nil, fmt.Errorf("mysql: lock rows: %w", err)
	}
	return spec.Locked(" LIMIT "+strconv.Itoa(spec.Limit), " FOR UPDATE SKIP LOCKED"), spec.FilterArgs, nil
}

// InsertIgnore returns INSERT ... VALUES (row), ... ON DUPLICATE KEY UPDATE
// c = c, where c is the first column. A row that hits any unique index is
// left as it was; without the CLIENT_FOUND_ROWS flag (clientFoundRows=true,
// which DSN and Check refuse) such a row counts 0 affected rows and an
// inserted one 1, so rows affected is the number inserted. INSERT IGNORE is
// not used: it also turns bad data into warnings and stores a coerced
// value, even in strict mode. n below 1 gives a statement the server
// rejects.
func (d *mysqlDialect) InsertIgnore(table string, columns []string, row string, n int, _ []string) string {
	stmt := sqlkit.InsertValues(table, columns, row, n)
	if len(columns) > 0 {
		stmt += " ON DUPLICATE KEY UPDATE " + columns[0] + " = " + columns[0]
	}
	return stmt
}

// UUID binds the 16 bytes, for a BINARY(16) column.
func (d *mysqlDialect) UUID(u uuid.UUID) any {
	b := make([]byte, 16)
	copy(b, u[:])
	return b
}

// JSON binds the document as text, for a utf8mb4 LONGTEXT column, and a
// nil slice as NULL.
func (d *mysqlDialect) JSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Bool binds 0 or 1, for a TINYINT(1) column.
func (d *mysqlDialect) Bool(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

// datetimeLayout is how the server writes a DATETIME(6) value as text.
const datetimeLayout = "2006-01-02 15:04:05.999999"

// ScanTime reads a DATETIME(6) value. With parseTime=true and loc=UTC (which
// Check requires) it arrives as a time.Time in UTC; the text form the
// driver returns without parseTime is read as UTC too, so that a value is
// never misread, whatever the connection.
func (d *mysqlDialect) ScanTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return v.UTC(), nil
	case []byte:
		return parseDatetime(string(v))
	case string:
		return parseDatetime(v)
	case nil:
		return time.Time{}, errors.New("mysql: scan time: NULL")
	}
	return time.Time{}, fmt.Errorf("mysql: scan time: unsupported type %T", src)
}

func parseDatetime(s string) (time.Time, error) {
	t, err := time.ParseInLocation(datetimeLayout, strings.TrimSpace(s), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("mysql: scan time: %q is not a DATETIME", s)
	}
	return t, nil
}
