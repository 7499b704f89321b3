package sqlcheck

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/migrations"
)

// recorder is a database/sql driver that records every distinct statement
// it is given, in order, and answers just enough for the oracle dialect's own code (Claim,
// Begin, Lock, the probes) to run to its end without a server: OUT binds of
// go-ora's Out type get a value (16-byte keys for a RAW, 0 for a number),
// and queries return one row of one column.
type recorder struct {
	mu    sync.Mutex
	stmts []string
	seen  map[string]bool
	// keys is the number of 16-byte keys a RAW OUT bind receives.
	keys int
	// fresh answers as an empty schema does: no version applied, and
	// every COUNT(*) (the probes of tables, indexes and columns) 0.
	// Otherwise every version is applied and every count is 1.
	fresh bool
}

func (r *recorder) record(q string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[q] {
		r.seen[q] = true
		r.stmts = append(r.stmts, q)
	}
}

func (r *recorder) Statements() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.stmts...)
}

func (r *recorder) Open(string) (driver.Conn, error) { return &recConn{r: r}, nil }

// open returns a *sql.DB on a new recorder.
func openRecorder(keys int) (*sql.DB, *recorder) {
	r := &recorder{keys: keys}
	return sql.OpenDB(connector{r}), r
}

type connector struct{ r *recorder }

func (c connector) Connect(context.Context) (driver.Conn, error) { return &recConn{r: c.r}, nil }
func (c connector) Driver() driver.Driver                        { return c.r }

type recConn struct{ r *recorder }

func (c *recConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("recorder: no Prepare")
}
func (c *recConn) Close() error              { return nil }
func (c *recConn) Begin() (driver.Tx, error) { return recTx{}, nil }
func (c *recConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	return recTx{}, nil
}

// CheckNamedValue lets go-ora's Out through, as go-ora's own connection
// does.
func (c *recConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *recConn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.r.record(q)
	for _, a := range args {
		if out, ok := a.Value.(goora.Out); ok {
			switch d := out.Dest.(type) {
			case *[]byte:
				*d = make([]byte, 16*c.r.keys)
				for i := range *d {
					(*d)[i] = byte(i/16 + 1)
				}
			case *int64:
				*d = 0
			}
		}
	}
	// One row changed: fenced updates hold, owners are alive.
	return driver.RowsAffected(1), nil
}

func (c *recConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	c.r.record(q)
	rows := 1
	if strings.Contains(q, "_migrations ORDER BY version") {
		rows = migrations.LatestVersion // every version applied
		if c.r.fresh {
			rows = 0
		}
	}
	return &recRows{cols: selectList(q), rows: rows, fresh: c.r.fresh}, nil
}

// selectList returns the names of the columns a SELECT returns: the last
// word of each top-level item of its select list ("p.id" is id, COUNT(*)
// is count).
func selectList(q string) []string {
	up := strings.ToUpper(q)
	start := strings.Index(up, "SELECT ")
	if start < 0 {
		return []string{"c"}
	}
	start += len("SELECT ")
	depth, end := 0, len(q)
	for i := start; i < len(q); i++ {
		switch q[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && strings.HasPrefix(up[i:], " FROM ") {
			end = i
			break
		}
	}
	var names []string
	depth, from := 0, start
	for i := start; i <= end; i++ {
		if i < end {
			switch q[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		item := strings.TrimSpace(q[from:i])
		from = i + 1
		if j := strings.IndexByte(item, '('); j >= 0 {
			item = item[:j]
		}
		f := strings.Fields(item)
		name := "c"
		if len(f) > 0 {
			name = f[len(f)-1]
		}
		if k := strings.LastIndexByte(name, '.'); k >= 0 {
			name = name[k+1:]
		}
		names = append(names, strings.ToLower(name))
	}
	return names
}

// cannedID is the id (and token) every answer holds.
var cannedID = [16]byte{15: 1}

// value is what a one-row answer holds for a column: enough for the
// core's scans to succeed.
func value(col string) driver.Value {
	switch {
	case col == "id" || strings.HasSuffix(col, "_id") || col == "claim_token" || col == "claimed_by":
		return cannedID[:]
	case strings.HasSuffix(col, "_at"):
		return time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	case col == "state":
		return "claimed"
	case col == "on_child_failure":
		return "fail"
	case col == "queue" || col == "kind" || col == "name" || col == "host" || col == "join_queue" || col == "join_kind" || col == "unique_key":
		return "q"
	case col == "payload" || col == "result" || col == "join_payload" || col == "last_error" || col == "dispatch_cursor":
		return nil
	case col == "sealed":
		return int64(0)
	case col == "c":
		return "APP"
	}
	return int64(1)
}

type recTx struct{}

func (recTx) Commit() error   { return nil }
func (recTx) Rollback() error { return nil }

// recRows are rows rows of the columns of a SELECT, each holding value;
// a version column counts the rows from 1.
type recRows struct {
	cols       []string
	rows, done int
	fresh      bool
}

func (r *recRows) Columns() []string { return r.cols }
func (r *recRows) Close() error      { return nil }
func (r *recRows) Next(dest []driver.Value) error {
	if r.done >= r.rows {
		return io.EOF
	}
	r.done++
	for i := range dest {
		dest[i] = value(r.cols[i])
		if r.cols[i] == "version" {
			dest[i] = int64(r.done)
		}
		if r.fresh && r.cols[i] == "count" {
			dest[i] = int64(0)
		}
		if len(r.cols) == 1 && r.cols[i] == "sys_extract_utc" {
			dest[i] = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC) // the clock
		}
	}
	return nil
}
