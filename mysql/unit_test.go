package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

func TestDSN_AddsWhatTheDialectNeeds(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"root@tcp(127.0.0.1:3306)/test",
		"user:pa:ss@tcp(db.example:3306)/app?charset=utf8mb4",
		"user:secret@unix(/var/run/mysqld/mysqld.sock)/app?parseTime=false",
		"/app",
	} {
		out, err := DSN(in)
		if err != nil {
			t.Fatalf("DSN(%q): %v", in, err)
		}
		cfg, err := gomysql.ParseDSN(out)
		if err != nil {
			t.Fatalf("DSN(%q) = %q, which does not parse: %v", in, out, err)
		}
		if !cfg.ParseTime || cfg.Loc != time.UTC || cfg.ClientFoundRows || cfg.MaxAllowedPacket != 0 || cfg.Timeout != DialTimeout {
			t.Errorf("DSN(%q) = %q: parseTime %v, loc %v, clientFoundRows %v, maxAllowedPacket %d, timeout %v",
				in, out, cfg.ParseTime, cfg.Loc, cfg.ClientFoundRows, cfg.MaxAllowedPacket, cfg.Timeout)
		}
		if cfg.Params["time_zone"] != "'+00:00'" {
			t.Errorf("DSN(%q) = %q: time_zone %q", in, out, cfg.Params["time_zone"])
		}
		if !cfg.InterpolateParams {
			t.Errorf("DSN(%q) = %q: no interpolateParams", in, out)
		}
		orig, _ := gomysql.ParseDSN(in)
		if cfg.User != orig.User || cfg.Passwd != orig.Passwd || cfg.Addr != orig.Addr || cfg.DBName != orig.DBName || cfg.Net != orig.Net {
			t.Errorf("DSN(%q) = %q changed the address or credentials", in, out)
		}
		again, err := DSN(out)
		if err != nil || again != out {
			t.Errorf("DSN is not idempotent: %q -> %q (%v)", out, again, err)
		}
	}
}

func TestDSN_KeepsInterpolateParamsFalse(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"u@tcp(h:3306)/d?interpolateParams=false",
		"u:p/w?x@tcp(h:3306)/d?charset=utf8mb4&interpolateParams=false",
	} {
		out, err := DSN(in)
		if err != nil {
			t.Fatalf("DSN(%q): %v", in, err)
		}
		cfg, _ := gomysql.ParseDSN(out)
		if cfg.InterpolateParams {
			t.Errorf("DSN(%q) = %q: the DSN's interpolateParams=false was overridden", in, out)
		}
	}
	// A '?' in the password is not the start of the parameters.
	out, err := DSN("u:p?interpolateParams=false@tcp(h:3306)/d")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := gomysql.ParseDSN(out); !cfg.InterpolateParams {
		t.Errorf("DSN read the password as parameters: %q", out)
	}
}

func TestDSN_KeepsTheUsersSettings(t *testing.T) {
	t.Parallel()
	out, err := DSN("u@tcp(h:3306)/d?timeout=3s&maxAllowedPacket=8388608&time_zone=%27Europe%2FParis%27&readTimeout=1m")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := gomysql.ParseDSN(out)
	if cfg.Timeout != 3*time.Second || cfg.MaxAllowedPacket != 8<<20 || cfg.Params["time_zone"] != "'Europe/Paris'" || cfg.ReadTimeout != time.Minute {
		t.Errorf("DSN dropped a setting: %q", out)
	}
}

func TestDSN_RefusesWhatTheDialectCannotWorkWith(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                     "empty DSN",
		"   ":                                  "empty DSN",
		"u@tcp(h:3306)/d?clientFoundRows=true": "clientFoundRows=true",
		"u@tcp(h:3306)/d?loc=Local":            "loc=UTC",
		"u@tcp(h:3306)/d?loc=Europe%2FParis":   "loc=UTC",
		"u@tcp(h:3306)/d?strict=true":          "invalid DSN",
		"u@tcp(h:3306)/d?parseTime=maybe":      "invalid DSN",
		"u@tcp(h:3306":                         "invalid DSN",
		"no slash":                             "invalid DSN",
		// Other tools' form: the address without tcp( ).
		"u:hunter2@127.0.0.1:3306/d": `"127.0.0.1:3306" is a host and port without the network`,
		"u@db.example.com/d":         "write user:password@tcp(db.example.com)/database",
		"localhost:3306/d":           "write user:password@tcp(localhost:3306)/database",
	} {
		out, err := DSN(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DSN(%q) = %q, %v; want an error containing %q", in, out, err, want)
		}
	}
	// The password never shows in an error.
	if _, err := DSN("u:hunter2@tcp(h:3306)/d?clientFoundRows=1"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("DSN error %v", err)
	}
	if _, err := Open("u:hunter2@tcp(h:3306)/d?loc=Local"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open error %v", err)
	}
	// Nothing listens on port 1: the ping fails, and says where it went.
	if db, err := Open("u:hunter2@tcp(127.0.0.1:1)/d"); err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Open of a closed port = %v, %v; want an error naming the address, not the password", db, err)
	}
}

func TestParseServer(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]server{
		"8.0.36":                          {version: version{8, 0, 36}},
		"8.4.0-commercial":                {version: version{8, 4, 0}},
		"8.0.28-google":                   {version: version{8, 0, 28}},
		"8.0":                             {version: version{8, 0, 0}},
		"5.7.44-log":                      {version: version{5, 7, 44}},
		"10.11.19-MariaDB-0+deb12u1":      {mariaDB: true, version: version{10, 11, 19}},
		"5.5.5-10.6.12-MariaDB":           {mariaDB: true, version: version{10, 6, 12}},
		"11.4.2-MariaDB-ubu2404":          {mariaDB: true, version: version{11, 4, 2}},
		"10.5.23-MariaDB-1:10.5.23+maria": {mariaDB: true, version: version{10, 5, 23}},
	} {
		got, err := parseServer(raw)
		if err != nil || got.mariaDB != want.mariaDB || got.version != want.version {
			t.Errorf("parseServer(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "MySQL", "8", "x8.0.1", "8.0.1.2"} {
		if got, err := parseServer(raw); err == nil {
			t.Errorf("parseServer(%q) = %+v, want an error", raw, got)
		}
	}
}

func TestServer_Supported(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"8.0.11":               "",
		"8.4.3":                "",
		"9.1.0":                "",
		"10.6.0-MariaDB":       "",
		"11.4.2-MariaDB":       "",
		"8.0.4-rc":             "MySQL 8.0.11 or later",
		"5.7.44":               "MySQL 8.0.11 or later",
		"10.5.23-MariaDB":      "MariaDB 10.6.0 or later",
		"5.5.5-10.4.1-MariaDB": "MariaDB 10.6.0 or later",
		"8.0.11-TiDB-v7.5.0":   "TiDB",
	} {
		s, err := parseServer(raw)
		if err != nil {
			t.Fatal(err)
		}
		err = s.supported()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: supported() = %v, want %q", raw, err, want)
		}
	}
}

func TestVariables_Validate(t *testing.T) {
	t.Parallel()
	const mode = "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"
	utf8 := [3]string{"utf8mb4", "utf8mb4", "UTF8MB4"}
	ok := variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 16 << 20, logBin: 1, binlogFormat: "ROW"}
	for name, tc := range map[string]struct {
		v    variables
		want string
	}{
		"defaults":                   {ok, ""},
		"binlog off, STATEMENT":      {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 64 << 20, binlogFormat: "STATEMENT"}, ""},
		"MIXED":                      {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 64 << 20, logBin: 1, binlogFormat: "MIXED"}, ""},
		"no binlog_format variable":  {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 64 << 20, logBin: 1}, ""},
		"exactly the minimum packet": {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: MinMaxAllowedPacket}, ""},
		"autocommit off":             {variables{charsets: utf8, sqlMode: mode, packet: 64 << 20}, "autocommit"},
		"strict all tables":          {variables{charsets: utf8, sqlMode: "strict_all_tables", autocommit: 1, packet: 64 << 20}, ""},
		"not strict":                 {variables{charsets: utf8, sqlMode: "NO_ENGINE_SUBSTITUTION", autocommit: 1, packet: 64 << 20}, "STRICT_TRANS_TABLES"},
		"empty sql_mode":             {variables{charsets: utf8, autocommit: 1, packet: 64 << 20}, "STRICT_TRANS_TABLES"},
		"MySQL 5.7's 4 MiB packet":   {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 4 << 20}, "max_allowed_packet=8388608"},
		"latin1 client":              {variables{charsets: [3]string{"latin1", "utf8mb4", "utf8mb4"}, sqlMode: mode, autocommit: 1, packet: 64 << 20}, "character_set_client"},
		"utf8mb3 results":            {variables{charsets: [3]string{"utf8mb4", "utf8mb4", "utf8mb3"}, sqlMode: mode, autocommit: 1, packet: 64 << 20}, "character_set_results"},
		"statement binlog":           {variables{charsets: utf8, sqlMode: mode, autocommit: 1, packet: 64 << 20, logBin: 1, binlogFormat: "statement"}, "binlog_format=ROW"},
	} {
		err := tc.v.validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: validate() = %v, want %q", name, err, tc.want)
		}
	}
}

func TestScanTime(t *testing.T) {
	t.Parallel()
	d := Dialect()
	want := time.Date(2026, 3, 29, 1, 30, 0, 123456000, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	for _, src := range []any{want, want.In(paris), []byte("2026-03-29 01:30:00.123456"), "2026-03-29 01:30:00.123456"} {
		got, err := d.ScanTime(src)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ScanTime(%v) = %v, %v; want %v in UTC", src, got, err, want)
		}
	}
	if got, err := d.ScanTime([]byte("2026-03-29 01:30:00")); err != nil || !got.Equal(want.Truncate(time.Second)) {
		t.Errorf("ScanTime without fraction = %v, %v", got, err)
	}
	for _, src := range []any{nil, 42, int64(42), "yesterday", []byte("2026-13-01 00:00:00"), 1.5} {
		if got, err := d.ScanTime(src); err == nil {
			t.Errorf("ScanTime(%#v) = %v, want an error", src, got)
		}
	}
}

func TestBindValues(t *testing.T) {
	t.Parallel()
	d := Dialect()
	u := uuid.Must(uuid.NewV7())
	b, ok := d.UUID(u).([]byte)
	if !ok || len(b) != 16 || uuid.UUID(b) != u {
		t.Fatalf("UUID(%s) = %#v", u, d.UUID(u))
	}
	b[0] ^= 0xff // a copy: changing it does not change u
	if uuid.UUID(b) == u {
		t.Fatal("UUID returned the uuid's own bytes")
	}
	if d.JSON(nil) != nil || d.JSON([]byte(`{"a":1}`)) != `{"a":1}` {
		t.Errorf("JSON binds %#v and %#v", d.JSON(nil), d.JSON([]byte(`{"a":1}`)))
	}
	if d.Bool(true) != int64(1) || d.Bool(false) != int64(0) {
		t.Errorf("Bool binds %#v and %#v", d.Bool(true), d.Bool(false))
	}
}

func TestClockAndLimit(t *testing.T) {
	t.Parallel()
	d := Dialect()
	for offset, want := range map[time.Duration]string{
		0:                     "UTC_TIMESTAMP(6)",
		time.Hour:             "DATE_ADD(UTC_TIMESTAMP(6), INTERVAL 3600000000 MICROSECOND)",
		-90 * time.Second:     "DATE_ADD(UTC_TIMESTAMP(6), INTERVAL -90000000 MICROSECOND)",
		500 * time.Nanosecond: "UTC_TIMESTAMP(6)",
	} {
		if got := d.Now(offset); got != want {
			t.Errorf("Now(%v) = %q, want %q", offset, got, want)
		}
	}
	if got := d.AddMicros("UTC_TIMESTAMP(6)"); got != "DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? MICROSECOND)" {
		t.Errorf("AddMicros = %q", got)
	}
	if d.Limit(10) != " LIMIT 10" || d.Limit(-1) != " LIMIT 0" {
		t.Errorf("Limit = %q, %q", d.Limit(10), d.Limit(-1))
	}
	if d.Rebind("a = ? AND b = '?'") != "a = ? AND b = '?'" || d.Param(dialect.JSON) != "?" {
		t.Error("Rebind or Param changed the statement")
	}
	caps := d.Capabilities()
	if caps.SingleWriter || caps.ReturningUpdate || caps.RecursiveScan || caps.TransactionalDDL || caps.LockClause != " FOR UPDATE" ||
		caps.MaxBindParams != 65535 || caps.MaxStatementBytes != MaxStatementBytes || caps.ClockResolution != time.Microsecond || caps.MaxClockOffset != 0 {
		t.Errorf("Capabilities = %+v", caps)
	}
	if MinMaxAllowedPacket > 16<<20 {
		t.Errorf("MinMaxAllowedPacket %d is above MariaDB's default max_allowed_packet", MinMaxAllowedPacket)
	}
}

func TestInsertIgnore(t *testing.T) {
	t.Parallel()
	got := Dialect().InsertIgnore("p_items", []string{"id", "queue"}, "?, ?", 3, []string{"queue"})
	want := "INSERT INTO p_items (id, queue) VALUES (?, ?), (?, ?), (?, ?) ON DUPLICATE KEY UPDATE id = id"
	if got != want {
		t.Errorf("InsertIgnore =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(strings.ToUpper(got), "IGNORE") {
		t.Error("InsertIgnore uses INSERT IGNORE")
	}
}

func TestClaim_RefusesBadSpecs(t *testing.T) {
	t.Parallel()
	good := dialect.ClaimSpec{Table: "t", Key: "id", Filter: "1 = 1", OrderBy: "id", Limit: 1, Set: "x = 1", Returning: []string{"id"}}
	for name, mod := range map[string]func(*dialect.ClaimSpec){
		"limit 0":      func(s *dialect.ClaimSpec) { s.Limit = 0 },
		"no table":     func(s *dialect.ClaimSpec) { s.Table = "" },
		"no filter":    func(s *dialect.ClaimSpec) { s.Filter = "" },
		"no returning": func(s *dialect.ClaimSpec) { s.Returning = nil },
	} {
		s := good
		mod(&s)
		if _, err := Dialect().Claim(context.Background(), nilQuerier{}, s); err == nil {
			t.Errorf("%s: Claim accepted %+v", name, s)
		}
	}
	if _, err := Dialect().Claim(context.Background(), nil, good); err == nil {
		t.Error("Claim accepted a nil querier")
	}
	want := "SELECT id FROM t WHERE 1 = 1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
	if got := claimSelect(good); got != want {
		t.Errorf("claimSelect = %q, want %q", got, want)
	}
}

// nilQuerier is a Querier that must never be reached.
type nilQuerier struct{ dialect.Querier }

func TestDDL_Shapes(t *testing.T) {
	t.Parallel()
	d := Dialect()
	up, _ := migrations.Statements(d, migrations.All("p_")[0])
	all := strings.Join(up, ";\n")
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS p_items (\n  id BINARY(16) NOT NULL,\n  queue VARBINARY(512) NOT NULL,",
		"  unique_key VARBINARY(1020) NULL,\n  payload LONGTEXT NULL,\n  priority INT NOT NULL,\n  state VARBINARY(64) NOT NULL,\n  available_at DATETIME(6) NOT NULL,",
		"  PRIMARY KEY (id)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
		"  sealed TINYINT(1) NOT NULL,",
		"  pid BIGINT NOT NULL,",
		"CREATE INDEX p_items_claim ON p_items (state, queue, priority, available_at, id)",
		"CREATE UNIQUE INDEX p_items_key ON p_items (queue, unique_key)",
		"CREATE INDEX p_items_lease ON p_items (state, lease_expires_at)",
		"CREATE INDEX p_items_owner ON p_items (state, claimed_by)",
		"CREATE INDEX p_items_barrier ON p_items (barrier_id, id)",
		"CREATE UNIQUE INDEX p_barriers_owner ON p_barriers (owner_id, name)",
		"CREATE INDEX p_barriers_unfired ON p_barriers (fired_at, created_at, id)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("DDL lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "INDEX IF NOT EXISTS") || strings.Contains(all, " JSON") || strings.Contains(all, "WHERE") {
		t.Errorf("DDL uses syntax one of the servers lacks:\n%s", all)
	}
	// Unique and partial: the contract forbids a stricter index.
	got := d.CreateIndex("t", dialect.Index{Name: "t_one_open", Columns: []string{"owner"}, Unique: true,
		Where: []dialect.Cond{{Column: "state", Value: "it's open"}, {Column: "parent", NotNull: true}}})
	want := "ALTER TABLE t ADD COLUMN t_one_open_on TINYINT GENERATED ALWAYS AS (CASE WHEN state = 'it''s open' AND parent IS NOT NULL THEN 1 END) VIRTUAL, ADD UNIQUE INDEX t_one_open (owner, t_one_open_on)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("unique partial index = %q,\nwant %q", got, want)
	}
	got = d.CreateIndex("t", dialect.Index{Name: "t_wait", Columns: []string{"created_at"}, Unique: true, Where: []dialect.Cond{{Column: "fired_at", Null: true}}})
	want = "ALTER TABLE t ADD COLUMN t_wait_on TINYINT GENERATED ALWAYS AS (CASE WHEN fired_at IS NULL THEN 1 END) VIRTUAL, ADD UNIQUE INDEX t_wait (created_at, t_wait_on)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("unique index on IS NULL = %q,\nwant %q", got, want)
	}
	// Unique and partial only in leaving out NULL keys: InnoDB's unique
	// indexes never compare those rows, so no marker column is needed.
	keyed := dialect.Index{Name: "t_keyed", Columns: []string{"queue", "k"}, Unique: true, Where: []dialect.Cond{{Column: "k", NotNull: true}}}
	if got, want := d.CreateIndex("t", keyed), "CREATE UNIQUE INDEX t_keyed ON t (queue, k)"; len(got) != 1 || got[0] != want {
		t.Errorf("unique index without NULL keys = %q, want %q", got, want)
	}
	if got, want := d.DropIndex("t", keyed), "DROP INDEX t_keyed ON t"; len(got) != 1 || got[0] != want {
		t.Errorf("its drop = %q, want %q", got, want)
	}
	// A NOT NULL condition on a column it does not index still needs one.
	keyed.Where = []dialect.Cond{{Column: "parent", NotNull: true}}
	if got := d.CreateIndex("t", keyed); len(got) != 1 || !strings.Contains(got[0], "t_keyed_on") {
		t.Errorf("unique index on another column's NOT NULL = %q, want a marker column", got)
	}
	if got := d.DropTable("t"); len(got) != 1 || got[0] != "DROP TABLE IF EXISTS t" {
		t.Errorf("DropTable = %q", got)
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"available": "'available'",
		"it's":      "'it''s'",
		`a\b`:       `CONCAT('a', CHAR(92), 'b')`,
		`\`:         `CONCAT('', CHAR(92), '')`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLockName(t *testing.T) {
	t.Parallel()
	if got := lockName("test", "plenum_migrate"); got != "test.plenum_migrate" {
		t.Errorf("lockName = %q", got)
	}
	long := strings.Repeat("d", 64)
	a, b := lockName(long, "p_migrate"), lockName(long, "q_migrate")
	if len(a) != maxLockName || a == b || !strings.HasPrefix(a, "plenum.") {
		t.Errorf("lockName of long names = %q, %q", a, b)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	d := Dialect()
	wrap := func(err error) error { return fmt.Errorf("plenum: claim: %w", err) }
	for _, tc := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{nil, dialect.Other},
		{&gomysql.MySQLError{Number: 1213}, dialect.Retryable},
		{wrap(&gomysql.MySQLError{Number: 1205}), dialect.Retryable},
		{&gomysql.MySQLError{Number: 1062}, dialect.UniqueViolation},
		{&gomysql.MySQLError{Number: 1586}, dialect.UniqueViolation},
		{&gomysql.MySQLError{Number: 1927}, dialect.ConnectionLost},
		{&gomysql.MySQLError{Number: 4031}, dialect.ConnectionLost},
		{&gomysql.MySQLError{Number: 2013}, dialect.ConnectionLost},
		{&gomysql.MySQLError{Number: 1064}, dialect.Other},
		{&gomysql.MySQLError{Number: 1665}, dialect.Other},
		{&gomysql.MySQLError{Number: 3572}, dialect.Other}, // NOWAIT: not used, not retried
		{gomysql.ErrInvalidConn, dialect.ConnectionLost},
		{wrap(gomysql.ErrInvalidConn), dialect.ConnectionLost},
		{driver.ErrBadConn, dialect.ConnectionLost},
		{io.ErrUnexpectedEOF, dialect.ConnectionLost},
		{&net.OpError{Op: "read", Err: errors.New("connection reset")}, dialect.ConnectionLost},
		{gomysql.ErrPktTooLarge, dialect.Other},
		{context.Canceled, dialect.Other},
		{context.DeadlineExceeded, dialect.Other},
		{errors.New("boom"), dialect.Other},
	} {
		if got := d.Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	d, err := dialect.Lookup(Name)
	if err != nil || d != Dialect() || d.Name() != "mysql" {
		t.Fatalf("Lookup(%q) = %v, %v", Name, d, err)
	}
	if _, ok := d.(dialect.TableProber); !ok {
		t.Error("the dialect is not a dialect.TableProber")
	}
	if _, ok := d.(dialect.IndexProber); !ok {
		t.Error("the dialect is not a dialect.IndexProber")
	}
}

func TestAlterDDL(t *testing.T) {
	t.Parallel()
	d := Dialect()
	name := dialect.Column{Name: "name", Type: dialect.String, Size: 255, Nullable: true}
	for _, c := range []struct {
		got  []string
		want string
	}{
		{d.AddColumn("t", name), "ALTER TABLE t ADD COLUMN name VARBINARY(1020) NULL"},
		{d.DropColumn("t", name), "ALTER TABLE t DROP COLUMN name"},
		{d.DropIndex("t", dialect.Index{Name: "t_a", Columns: []string{"a"}, Where: []dialect.Cond{{Column: "state", Value: "x"}}}), "DROP INDEX t_a ON t"},
		{d.DropIndex("t", dialect.Index{Name: "t_one_open", Columns: []string{"owner"}, Unique: true, Where: []dialect.Cond{{Column: "state", Value: "x"}}}),
			"ALTER TABLE t DROP INDEX t_one_open, DROP COLUMN t_one_open_on"},
	} {
		if len(c.got) != 1 || c.got[0] != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	t.Parallel()
	d := Dialect()
	wrap := func(err error) error { return fmt.Errorf("plenum: claim: %w", err) }
	for _, tc := range []struct {
		err  error
		want dialect.Refusal
	}{
		{nil, dialect.NotRefused},
		{wrap(&gomysql.MySQLError{Number: 1040}), dialect.RefusedResources},
		{&gomysql.MySQLError{Number: 1203}, dialect.RefusedResources},
		{&gomysql.MySQLError{Number: 1226}, dialect.RefusedResources},
		{&gomysql.MySQLError{Number: 1044}, dialect.RefusedAccess},
		{wrap(&gomysql.MySQLError{Number: 1045}), dialect.RefusedAccess},
		{&gomysql.MySQLError{Number: 1142}, dialect.RefusedAccess},
		{&gomysql.MySQLError{Number: 1213}, dialect.NotRefused},
		{&gomysql.MySQLError{Number: 1062}, dialect.NotRefused},
		{wrap(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), dialect.RefusedUnreachable},
		{&net.OpError{Op: "read", Err: errors.New("connection reset")}, dialect.NotRefused},
		{context.DeadlineExceeded, dialect.NotRefused},
	} {
		if got := dialect.RefusalOf(d, tc.err); got != tc.want {
			t.Errorf("RefusalOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}
