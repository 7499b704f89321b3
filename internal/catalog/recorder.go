package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/plenumdb/plenum/dialect"
)

// recorder is a stand-in database/sql connection for the catalog: it
// records every statement it is sent, answers every query with rows rows
// of one 16-byte column (a key, as a dialect's locking read of the
// candidates selects), and every exec with rows rows affected. A dialect
// whose claim takes several steps thus takes them all, as it would on a
// server that had rows to give.
type recorder struct {
	rows int
	mu   sync.Mutex
	qs   []string
}

func (r *recorder) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.qs...)
}

func (r *recorder) note(q string) {
	r.mu.Lock()
	r.qs = append(r.qs, q)
	r.mu.Unlock()
}

func openRecorder(r *recorder) *sql.DB { return sql.OpenDB(recorderConnector{r}) }

type recorderConnector struct{ r *recorder }

func (c recorderConnector) Connect(context.Context) (driver.Conn, error) {
	return recorderConn(c), nil
}
func (c recorderConnector) Driver() driver.Driver { return recorderDriver{} }

type recorderDriver struct{}

func (recorderDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("plenum: the catalog's recorder opens through its connector")
}

type recorderConn struct{ r *recorder }

func (c recorderConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("plenum: the catalog's recorder prepares nothing")
}
func (c recorderConn) Close() error              { return nil }
func (c recorderConn) Begin() (driver.Tx, error) { return recorderTx{}, nil }
func (c recorderConn) CheckNamedValue(*driver.NamedValue) error {
	return nil
}

func (c recorderConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	c.r.note(q)
	return driver.RowsAffected(c.r.rows), nil
}

func (c recorderConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	c.r.note(q)
	return &recorderRows{left: c.r.rows}, nil
}

type recorderTx struct{}

func (recorderTx) Commit() error   { return nil }
func (recorderTx) Rollback() error { return nil }

type recorderRows struct{ left int }

func (r *recorderRows) Columns() []string { return []string{"id"} }
func (r *recorderRows) Close() error      { return nil }
func (r *recorderRows) Next(dest []driver.Value) error {
	if r.left == 0 {
		return io.EOF
	}
	r.left--
	for i := range dest {
		dest[i] = make([]byte, 16)
	}
	return nil
}

// recordClaims are the statements d's Claim sends for spec: once with
// spec.Limit rows to take, and once with none (a storesql.ClaimRecorder).
func recordClaims(d dialect.Dialect, spec dialect.ClaimSpec) []string {
	var out []string
	for _, rows := range []int{spec.Limit, 0} {
		for _, q := range recordClaim(d, spec, rows) {
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// recordClaim runs d's Claim for spec against a stand-in connection on
// which every query returns rows rows, and returns the statements sent.
func recordClaim(d dialect.Dialect, spec dialect.ClaimSpec, rows int) []string {
	r := &recorder{rows: rows}
	db := openRecorder(r)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	if rs, err := d.Claim(ctx, conn, spec); err == nil {
		for rs.Next() {
		}
		rs.Close()
	}
	return r.sent()
}
