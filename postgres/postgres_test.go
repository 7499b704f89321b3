package postgres_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

var d = postgres.Dialect()

func TestRegistered(t *testing.T) {
	t.Parallel()
	got, err := dialect.Lookup(postgres.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got != d || got.Name() != "postgres" {
		t.Fatalf("Lookup(postgres) = %v", got)
	}
	if _, ok := d.(dialect.TableProber); !ok {
		t.Fatal("the dialect does not implement dialect.TableProber")
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	want := dialect.Capabilities{
		ReturningUpdate:   true,
		RecursiveScan:     true,
		LockClause:        " FOR NO KEY UPDATE",
		TransactionalDDL:  true,
		MaxBindParams:     65535,
		MaxStatementBytes: 256 << 20,
		MaxInsertRows:     1000,
		ClockResolution:   time.Microsecond,
	}
	if got := d.Capabilities(); got != want {
		t.Fatalf("Capabilities() = %+v, want %+v", got, want)
	}
}

func TestRendering(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{d.Rebind("SELECT ? FROM t WHERE a = '?' AND b = ?"), "SELECT $1 FROM t WHERE a = '?' AND b = $2"},
		{d.Param(dialect.JSON), "CAST(? AS jsonb)"},
		{d.Param(dialect.UUID), "?"},
		{d.Now(0), "statement_timestamp()"},
		{d.Now(1500 * time.Millisecond), "(statement_timestamp() + INTERVAL '1500000 microseconds')"},
		{d.Now(-2 * time.Second), "(statement_timestamp() + INTERVAL '-2000000 microseconds')"},
		{d.Limit(10), " LIMIT 10"},
		{d.Limit(-1), " LIMIT 0"},
		{d.AddMicros("statement_timestamp()"), "(statement_timestamp() + CAST(? AS bigint) * INTERVAL '1 microsecond')"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	u := uuid.MustParse("01890a5d-ac96-774b-bcce-b302099a8057")
	if got := d.UUID(u); got != "01890a5d-ac96-774b-bcce-b302099a8057" {
		t.Errorf("UUID = %#v", got)
	}
	if got := d.JSON([]byte(`{"a":1}`)); got != `{"a":1}` {
		t.Errorf("JSON = %#v", got)
	}
	if got := d.JSON(nil); got != nil {
		t.Errorf("JSON(nil) = %#v, want nil (NULL)", got)
	}
	if got := d.Bool(true); got != true {
		t.Errorf("Bool = %#v", got)
	}
	local := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("X", 3600))
	if got, err := d.ScanTime(local); err != nil || !got.Equal(local) || got.Location() != time.UTC {
		t.Errorf("ScanTime(%v) = %v, %v; want the same instant in UTC", local, got, err)
	}
	for _, bad := range []any{nil, "2024-05-06", int64(5)} {
		if _, err := d.ScanTime(bad); err == nil {
			t.Errorf("ScanTime(%#v) succeeded", bad)
		}
	}
}

// recorder is a Querier that records the statement it is asked to run and
// fails it.
type recorder struct {
	query string
	args  []any
}

var errRecorded = errors.New("recorded")

func (r *recorder) ExecContext(_ context.Context, q string, args ...any) (sql.Result, error) {
	r.query, r.args = q, args
	return nil, errRecorded
}

func (r *recorder) QueryContext(_ context.Context, q string, args ...any) (*sql.Rows, error) {
	r.query, r.args = q, args
	return nil, errRecorded
}

func (r *recorder) QueryRowContext(context.Context, string, ...any) *sql.Row { return nil }

func TestClaim_Statement(t *testing.T) {
	t.Parallel()
	var r recorder
	_, err := d.Claim(t.Context(), &r, dialect.ClaimSpec{
		Table: "p_items", Key: "id",
		Filter: "queue = ? AND state = 'available'", FilterArgs: []any{"q"},
		OrderBy: "priority, available_at, id", Limit: 7,
		Set: "state = 'claimed', claim_token = ?", SetArgs: []any{"tok"},
		Returning: []string{"id", "state"},
	})
	if !errors.Is(err, errRecorded) {
		t.Fatalf("Claim = %v", err)
	}
	want := "WITH c AS (SELECT id FROM p_items WHERE queue = $1 AND state = 'available' ORDER BY priority, available_at, id LIMIT 7 FOR UPDATE SKIP LOCKED) " +
		"UPDATE p_items SET state = 'claimed', claim_token = $2 WHERE id = ANY(ARRAY(SELECT id FROM c)) RETURNING id, state"
	if r.query != want {
		t.Errorf("claim statement\n got %s\nwant %s", r.query, want)
	}
	if fmt.Sprint(r.args) != "[q tok]" {
		t.Errorf("claim arguments %v, want the filter's, then the assignment's", r.args)
	}
}

func TestClaim_RefusesIncompleteSpec(t *testing.T) {
	t.Parallel()
	good := dialect.ClaimSpec{Table: "t", Key: "id", Filter: "true", OrderBy: "id", Limit: 1, Set: "a = 1", Returning: []string{"id"}}
	for name, mod := range map[string]func(*dialect.ClaimSpec){
		"limit 0":      func(s *dialect.ClaimSpec) { s.Limit = 0 },
		"no table":     func(s *dialect.ClaimSpec) { s.Table = "" },
		"no filter":    func(s *dialect.ClaimSpec) { s.Filter = "" },
		"no returning": func(s *dialect.ClaimSpec) { s.Returning = nil },
	} {
		spec := good
		mod(&spec)
		var r recorder
		if _, err := d.Claim(t.Context(), &r, spec); err == nil || errors.Is(err, errRecorded) {
			t.Errorf("%s: Claim = %v, want a refusal before any statement", name, err)
		}
	}
	if _, err := d.Claim(t.Context(), nil, good); err == nil {
		t.Error("Claim with a nil querier succeeded")
	}
}

func TestInsertIgnore_Statement(t *testing.T) {
	t.Parallel()
	got := d.InsertIgnore("p_items", []string{"id", "queue", "payload"}, "?, ?, CAST(? AS jsonb)", 2, []string{"queue", "unique_key"})
	want := "INSERT INTO p_items (id, queue, payload) VALUES ($1, $2, CAST($3 AS jsonb)), ($4, $5, CAST($6 AS jsonb)) ON CONFLICT DO NOTHING"
	if got != want {
		t.Errorf("InsertIgnore\n got %s\nwant %s", got, want)
	}
}

func TestDDL(t *testing.T) {
	t.Parallel()
	table := dialect.Table{
		Name: "p_t",
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "queue", Type: dialect.String, Size: 128},
			{Name: "body", Type: dialect.Text, Nullable: true},
			{Name: "doc", Type: dialect.JSON, Nullable: true},
			{Name: "n", Type: dialect.Int},
			{Name: "big", Type: dialect.BigInt},
			{Name: "ok", Type: dialect.Bool},
			{Name: "at", Type: dialect.Time},
		},
		PrimaryKey: []string{"id"},
	}
	want := "CREATE TABLE IF NOT EXISTS p_t (\n  id uuid NOT NULL,\n  queue varchar(128) NOT NULL,\n  body text,\n  doc jsonb,\n  n integer NOT NULL,\n" +
		"  big bigint NOT NULL,\n  ok boolean NOT NULL,\n  at timestamptz NOT NULL,\n  PRIMARY KEY (id)\n)"
	if got := d.CreateTable(table); len(got) != 1 || got[0] != want {
		t.Errorf("CreateTable\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct {
		ix   dialect.Index
		want string
	}{
		{dialect.Index{Name: "p_claim", Columns: []string{"queue", "priority"}, Where: []dialect.Cond{{Column: "state", Value: "available"}}},
			"CREATE INDEX IF NOT EXISTS p_claim ON p_t (queue, priority) WHERE state = 'available'"},
		{dialect.Index{Name: "p_key", Columns: []string{"queue", "unique_key"}, Unique: true},
			"CREATE UNIQUE INDEX IF NOT EXISTS p_key ON p_t (queue, unique_key)"},
		{dialect.Index{Name: "p_b", Columns: []string{"barrier_id"}, Where: []dialect.Cond{{Column: "barrier_id", NotNull: true}, {Column: "state", Value: "it's"}}},
			"CREATE INDEX IF NOT EXISTS p_b ON p_t (barrier_id) WHERE barrier_id IS NOT NULL AND state = 'it''s'"},
	} {
		if got := d.CreateIndex("p_t", c.ix); len(got) != 1 || got[0] != c.want {
			t.Errorf("CreateIndex\n got %q\nwant %q", got, c.want)
		}
	}
	if got := d.DropTable("p_t"); len(got) != 1 || got[0] != "DROP TABLE IF EXISTS p_t" {
		t.Errorf("DropTable = %q", got)
	}
}

// The schema's partial indexes stay partial: the claim path indexes only
// available items, the reaper's and heartbeat's only claimed ones.
func TestDDL_SchemaIndexesArePartial(t *testing.T) {
	t.Parallel()
	up, _ := migrations.Statements(d, migrations.All("plenum_")[0])
	all := strings.Join(up, ";\n")
	for _, want := range []string{
		"CREATE INDEX IF NOT EXISTS plenum_items_claim ON plenum_items (queue, priority, available_at, id) WHERE state = 'available'",
		"CREATE INDEX IF NOT EXISTS plenum_items_lease ON plenum_items (lease_expires_at) WHERE state = 'claimed'",
		"CREATE INDEX IF NOT EXISTS plenum_items_owner ON plenum_items (claimed_by) WHERE state = 'claimed'",
		"CREATE UNIQUE INDEX IF NOT EXISTS plenum_items_key ON plenum_items (queue, unique_key)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("migration 1 lacks %q", want)
		}
	}
}

type netErr struct{}

func (netErr) Error() string   { return "network is down" }
func (netErr) Timeout() bool   { return false }
func (netErr) Temporary() bool { return false }

var _ net.Error = netErr{}

func TestClassify(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	for _, c := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{nil, dialect.Other},
		{pg("40001"), dialect.Retryable},
		{pg("40P01"), dialect.Retryable},
		{pg("55P03"), dialect.Retryable},
		{pg("23505"), dialect.UniqueViolation},
		{pg("08006"), dialect.ConnectionLost},
		{pg("08003"), dialect.ConnectionLost},
		{pg("57P01"), dialect.ConnectionLost},
		{pg("57P02"), dialect.ConnectionLost},
		{pg("57P03"), dialect.ConnectionLost},
		{pg("40003"), dialect.ConnectionLost},
		{pg("57014"), dialect.Other},
		{pg("23503"), dialect.Other},
		{pg("42P01"), dialect.Other},
		{pgconn.ErrConnClosed, dialect.ConnectionLost},
		{fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), dialect.ConnectionLost},
		{driver.ErrBadConn, dialect.ConnectionLost},
		{netErr{}, dialect.ConnectionLost},
		{context.Canceled, dialect.Other},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), dialect.Other},
		{errors.New("something else"), dialect.Other},
	} {
		if got := d.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	for _, c := range []struct {
		err  error
		want dialect.Refusal
	}{
		{nil, dialect.NotRefused},
		{pg("53300"), dialect.RefusedResources},
		{pg("53100"), dialect.RefusedResources},
		{pg("28P01"), dialect.RefusedAccess},
		{pg("28000"), dialect.RefusedAccess},
		{pg("42501"), dialect.RefusedAccess},
		{pg("57P03"), dialect.RefusedUnreachable},
		{pg("40001"), dialect.NotRefused},
		{pg("57014"), dialect.NotRefused},
		{pg("08006"), dialect.NotRefused},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, dialect.RefusedUnreachable},
		{netErr{}, dialect.NotRefused},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), dialect.NotRefused},
	} {
		if got := dialect.RefusalOf(d, c.err); got != c.want {
			t.Errorf("RefusalOf(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestOpen_RefusesBadDSN(t *testing.T) {
	t.Parallel()
	if _, err := postgres.Open(" "); err == nil || !strings.Contains(err.Error(), "empty DSN") {
		t.Errorf("Open(empty) = %v", err)
	}
	if _, err := postgres.Open("postgres://u@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"); err == nil || !strings.Contains(err.Error(), "cannot reach the server") {
		t.Errorf("Open(nothing listening) = %v", err)
	}
	if _, err := postgres.Open("postgres://%zz"); err == nil {
		t.Error("Open(malformed URL) succeeded")
	}
}

// fakeDriver stands for a PostgreSQL driver other than pgx.
type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return nil, errors.New("fake: no connections") }

func init() { sql.Register("plenum-fake-postgres", fakeDriver{}) }

func TestCheck_RefusesOtherDrivers(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("plenum-fake-postgres", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = d.Check(t.Context(), db)
	if err == nil || !strings.Contains(err.Error(), `sql.Open("pgx"`) {
		t.Fatalf("Check on another driver = %v, want a refusal naming pgx", err)
	}
	if err := d.Check(t.Context(), nil); err == nil {
		t.Fatal("Check(nil) succeeded")
	}
}

func TestBegin_NilDB(t *testing.T) {
	t.Parallel()
	if tx, err := d.Begin(t.Context(), nil, dialect.TxOptions{}); err == nil || tx != nil {
		t.Fatalf("Begin(nil) = %v, %v", tx, err)
	}
	if _, err := d.Lock(t.Context(), nil, "x"); err == nil {
		t.Fatal("Lock(nil conn) succeeded")
	}
}

func TestAlterDDL(t *testing.T) {
	t.Parallel()
	name := dialect.Column{Name: "name", Type: dialect.String, Size: 255, Nullable: true}
	for _, c := range []struct {
		got  []string
		want string
	}{
		{d.AddColumn("p_t", name), "ALTER TABLE p_t ADD COLUMN IF NOT EXISTS name varchar(255)"},
		{d.DropColumn("p_t", name), "ALTER TABLE p_t DROP COLUMN IF EXISTS name"},
		{d.DropIndex("p_t", dialect.Index{Name: "p_a", Columns: []string{"a"}}), "DROP INDEX IF EXISTS p_a"},
	} {
		if len(c.got) != 1 || c.got[0] != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// Settle refuses what it cannot vacuum before it sends anything, and the
// registration brings it, for tools that settle tables between
// measurements.
func TestSettle_RefusesBadInputAndIsRegistered(t *testing.T) {
	t.Parallel()
	if err := postgres.Settle(context.Background(), nil, "t"); err == nil || !strings.Contains(err.Error(), "nil database") {
		t.Errorf("Settle(nil db) = %v", err)
	}
	db, err := sql.Open(postgres.DriverName, "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := postgres.Settle(context.Background(), db, ""); err == nil || !strings.Contains(err.Error(), "empty table name") {
		t.Errorf("Settle(\"\") = %v", err)
	}
	r, err := dialect.Registered(postgres.Name)
	if err != nil || r.Settle == nil {
		t.Errorf("the postgres registration has no Settle (%v)", err)
	}
}
