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
)

// The oldest servers the dialect accepts.
//
// MySQL 8.0.11 is the first generally available 8.0 release; SKIP LOCKED
// arrived in 8.0.1, a development milestone that nobody should run. MariaDB
// 10.6 is the first with SKIP LOCKED (and with atomic DDL).
var (
	minMySQL   = version{8, 0, 11}
	minMariaDB = version{10, 6, 0}
)

// version is a server version, major.minor.patch.
type version [3]int

func (v version) String() string {
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}

// less reports whether v is older than w.
func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// server is what Check learned about the server.
type server struct {
	mariaDB bool
	version version
	raw     string // VERSION() as the server gave it
}

// parseServer reads the output of SELECT VERSION(): "8.0.36",
// "8.4.0-commercial", "10.11.19-MariaDB-0+deb12u1", or a MariaDB behind a
// replication-compatible prefix, "5.5.5-10.11.19-MariaDB".
func parseServer(raw string) (server, error) {
	s := server{raw: raw, mariaDB: strings.Contains(strings.ToLower(raw), "mariadb")}
	v := raw
	if s.mariaDB {
		v = strings.TrimPrefix(v, "5.5.5-")
	}
	end := 0
	for end < len(v) && (v[end] == '.' || (v[end] >= '0' && v[end] <= '9')) {
		end++
	}
	fields := strings.Split(strings.Trim(v[:end], "."), ".")
	if len(fields) < 2 || len(fields) > 3 {
		return s, fmt.Errorf("mysql: check: cannot read the server version from %q", raw)
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return s, fmt.Errorf("mysql: check: cannot read the server version from %q", raw)
		}
		s.version[i] = n
	}
	return s, nil
}

// supported refuses servers the dialect does not serve.
func (s server) supported() error {
	switch {
	case strings.Contains(strings.ToLower(s.raw), "tidb"):
		return fmt.Errorf("mysql: check: the server is TiDB (%s), which speaks MySQL's protocol but locks differently; the mysql dialect serves MySQL %s+ and MariaDB %s+", s.raw, minMySQL, minMariaDB)
	case s.mariaDB && s.version.less(minMariaDB):
		return fmt.Errorf("mysql: check: server is MariaDB %s (%s); the mysql dialect needs MariaDB %s or later (FOR UPDATE SKIP LOCKED)", s.version, s.raw, minMariaDB)
	case !s.mariaDB && s.version.less(minMySQL):
		return fmt.Errorf("mysql: check: server is MySQL %s (%s); the mysql dialect needs MySQL %s or later (FOR UPDATE SKIP LOCKED)", s.version, s.raw, minMySQL)
	}
	return nil
}

// Errors that mean a missing privilege.
const (
	errDBAccessDenied       = 1044 // ER_DBACCESS_DENIED_ERROR
	errTableAccessDenied    = 1142 // ER_TABLEACCESS_DENIED_ERROR
	errSpecificAccessDenied = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR
)

// probeTable is the temporary table Check writes to, private to its
// session; a real table of the same name is hidden, not touched.
const probeTable = "plenum_check_probe"

// Check verifies, on one connection, everything the dialect depends on, and
// refuses with an error naming the setting to change:
//
//   - the server: MySQL 8.0.11 or later, or MariaDB 10.6 or later;
//   - a default database in the DSN (Plenum's table names are not
//     qualified);
//   - parseTime=true in the DSN (a DATETIME must scan as a time.Time);
//   - loc=UTC in the DSN (a DATETIME must read back as the same UTC
//     instant, in winter and in summer);
//   - utf8mb4 as the connection's character set (charset=utf8mb4, the
//     driver's default), so that text is not converted on its way;
//   - a strict sql_mode (STRICT_TRANS_TABLES or STRICT_ALL_TABLES), so
//     that bad data is an error and never stored coerced;
//   - autocommit on (the migrator's statements outside transactions must
//     commit);
//   - max_allowed_packet of at least MinMaxAllowedPacket;
//   - no statement-based binary logging (log_bin on with
//     binlog_format=STATEMENT), under which InnoDB refuses the writes of
//     READ COMMITTED transactions;
//   - READ COMMITTED transactions can be begun;
//   - no clientFoundRows=true in the DSN: an UPDATE that changes nothing
//     must report 0 rows, or INSERT ... ON DUPLICATE KEY UPDATE would count
//     existing rows as inserted.
//
// The last two are probed on a TEMPORARY table, so the user needs the
// CREATE TEMPORARY TABLES privilege on the database (GRANT ALL on it
// includes it). Check creates nothing else and leaves no trace.
func (d *mysqlDialect) Check(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("mysql: check: nil *sql.DB")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mysql: check: cannot get a connection (is the *sql.DB closed?): %w", err)
	}
	defer conn.Close()
	if err := check(ctx, conn); err != nil {
		if _, ok := db.Driver().(*gomysql.MySQLDriver); !ok {
			// Another database's handle, most likely.
			return fmt.Errorf("mysql: check: the *sql.DB uses the driver %T, not go-sql-driver/mysql: is it a MySQL or MariaDB database? %w", db.Driver(), err)
		}
		return err
	}
	return nil
}

// check runs every probe of Check on conn.
func check(ctx context.Context, conn *sql.Conn) error {
	var raw string
	var schema sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT VERSION(), DATABASE()").Scan(&raw, &schema); err != nil {
		return fmt.Errorf("mysql: check: SELECT VERSION(), DATABASE(): %w", err)
	}
	srv, err := parseServer(raw)
	if err != nil {
		return err
	}
	if err := srv.supported(); err != nil {
		return err
	}
	if !schema.Valid || schema.String == "" {
		return errors.New("mysql: check: the connection has no default database: name one in the DSN (user:password@tcp(host:3306)/database)")
	}
	if err := checkTimes(ctx, conn); err != nil {
		return err
	}
	vars, err := readVariables(ctx, conn)
	if err != nil {
		return err
	}
	if err := vars.validate(); err != nil {
		return err
	}
	return checkWrites(ctx, conn)
}

// checkTimes reads two fixed DATETIME(6) values, one in January and one in
// July, so that a zone that is UTC in winter only is caught too.
func checkTimes(ctx context.Context, conn *sql.Conn) error {
	want := []time.Time{
		time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC),
		time.Date(2000, 7, 1, 12, 0, 0, 0, time.UTC),
	}
	var got [2]any
	err := conn.QueryRowContext(ctx, "SELECT CAST('2000-01-01 00:00:00.000001' AS DATETIME(6)), CAST('2000-07-01 12:00:00' AS DATETIME(6))").Scan(&got[0], &got[1])
	if err != nil {
		return fmt.Errorf("mysql: check: reading a DATETIME: %w", err)
	}
	for i, v := range got {
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("mysql: check: a DATETIME scans as %T, not time.Time: add parseTime=true to the DSN (or open with mysql.Open)", v)
		}
		if !t.Equal(want[i]) {
			return fmt.Errorf("mysql: check: the DATETIME %s reads back as %s: the driver reads times in zone %s; set loc=UTC in the DSN (or leave loc out: UTC is the default)",
				want[i].Format(datetimeLayout), t.Format(time.RFC3339Nano), t.Location())
		}
	}
	return nil
}

// variables are the server variables the dialect depends on.
type variables struct {
	charsets     [3]string // character_set_client, _connection, _results
	sqlMode      string
	autocommit   int64
	packet       int64
	logBin       int64
	binlogFormat string // "" when the server has no such variable
}

// readVariables reads variables on conn.
func readVariables(ctx context.Context, conn *sql.Conn) (variables, error) {
	var v variables
	err := conn.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode, @@SESSION.autocommit, @@SESSION.max_allowed_packet, @@GLOBAL.log_bin").Scan(&v.sqlMode, &v.autocommit, &v.packet, &v.logBin)
	if err != nil {
		return v, fmt.Errorf("mysql: check: reading sql_mode, autocommit, max_allowed_packet and log_bin: %w", err)
	}
	var results sql.NullString // NULL means "no conversion", which is fine
	err = conn.QueryRowContext(ctx, "SELECT @@SESSION.character_set_client, @@SESSION.character_set_connection, @@SESSION.character_set_results").Scan(&v.charsets[0], &v.charsets[1], &results)
	if err != nil {
		return v, fmt.Errorf("mysql: check: reading the connection's character sets: %w", err)
	}
	v.charsets[2] = results.String
	if !results.Valid {
		v.charsets[2] = "utf8mb4"
	}
	var format sql.NullString
	// A server without the variable (a future one) logs rows, the only
	// format left, so an error here is not one.
	if conn.QueryRowContext(ctx, "SELECT @@SESSION.binlog_format").Scan(&format) == nil {
		v.binlogFormat = format.String
	}
	return v, nil
}

// validate refuses variables the dialect cannot work with.
func (v variables) validate() error {
	strict := false
	for _, m := range strings.Split(strings.ToUpper(v.sqlMode), ",") {
		strict = strict || m == "STRICT_TRANS_TABLES" || m == "STRICT_ALL_TABLES"
	}
	if !strict {
		return fmt.Errorf("mysql: check: sql_mode is %q, without STRICT_TRANS_TABLES: the server would store bad data coerced (truncated text, mangled characters) with only a warning; add STRICT_TRANS_TABLES to the server's sql_mode (the default of MySQL 8 and MariaDB 10.6)", v.sqlMode)
	}
	for i, name := range []string{"character_set_client", "character_set_connection", "character_set_results"} {
		if !strings.EqualFold(v.charsets[i], "utf8mb4") {
			return fmt.Errorf("mysql: check: %s is %s, not utf8mb4: text would be converted on its way in or out (and characters outside the BMP refused); set charset=utf8mb4 in the DSN (the driver's default)", name, v.charsets[i])
		}
	}
	if v.autocommit != 1 {
		return errors.New("mysql: check: autocommit is off on this connection: statements outside transactions would never commit; remove autocommit=0 from the DSN (or from the server's init_connect)")
	}
	if v.packet < MinMaxAllowedPacket {
		return fmt.Errorf("mysql: check: max_allowed_packet is %d bytes; Plenum needs at least %d (%d MiB): set max_allowed_packet=%d on the server (SET GLOBAL max_allowed_packet = %d, and in its configuration file)",
			v.packet, MinMaxAllowedPacket, MinMaxAllowedPacket>>20, MinMaxAllowedPacket, MinMaxAllowedPacket)
	}
	if v.logBin != 0 && strings.EqualFold(v.binlogFormat, "STATEMENT") {
		return errors.New("mysql: check: binary logging is on with binlog_format=STATEMENT, under which InnoDB refuses the writes of READ COMMITTED transactions (error 1665); set binlog_format=ROW (or MIXED) on the server")
	}
	return nil
}

// checkWrites probes, on a temporary table, that READ COMMITTED
// transactions can be begun and that an UPDATE which changes nothing
// reports 0 rows affected (no CLIENT_FOUND_ROWS).
func checkWrites(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS "+probeTable); err != nil {
		return fmt.Errorf("mysql: check: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE "+probeTable+" (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB"); err != nil {
		var me *gomysql.MySQLError
		if errors.As(err, &me) && (me.Number == errDBAccessDenied || me.Number == errTableAccessDenied || me.Number == errSpecificAccessDenied) {
			return fmt.Errorf("mysql: check: cannot create a TEMPORARY table to probe the connection: grant the CREATE TEMPORARY TABLES privilege on this database: %w", err)
		}
		return fmt.Errorf("mysql: check: creating a TEMPORARY table to probe the connection: %w", err)
	}
	defer func() {
		// Drop even when ctx ended; a failure leaves the table to the
		// session, which drops it when it ends.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(dctx, "DROP TEMPORARY TABLE IF EXISTS "+probeTable)
	}()
	if _, err := conn.ExecContext(ctx, "INSERT INTO "+probeTable+" (id, v) VALUES (1, 1)"); err != nil {
		return fmt.Errorf("mysql: check: probe insert: %w", err)
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("mysql: check: cannot begin a READ COMMITTED transaction: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "UPDATE "+probeTable+" SET v = 1 WHERE id = 1")
	if err != nil {
		return fmt.Errorf("mysql: check: probe update in a READ COMMITTED transaction: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("mysql: check: probe update: %w", err)
	}
	if n != 0 {
		return errors.New("mysql: check: an UPDATE that changes nothing reports 1 row affected: the DSN has clientFoundRows=true; remove it (INSERT ... ON DUPLICATE KEY UPDATE would count existing rows as inserted)")
	}
	return nil
}
