package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
)

// The databases the conformance suite runs against: the server
// PLENUM_MYSQL_DSN names (CI: a local MariaDB 10.11), and MySQL 8 and
// MariaDB servers of those kinds where PLENUM_MYSQL8_DSN and
// PLENUM_MARIADB_DSN name them. The containers module (containers/) starts
// MySQL 8 and MariaDB in containers where a Docker engine answers.
var (
	harnessMySQL   = conformance.Harness{Name: "mysql"}
	harnessMySQL8  = conformance.Harness{Name: "mysql8"}
	harnessMariaDB = conformance.Harness{Name: "mariadb"}
)

// TestConformance runs the shared suite on the server of PLENUM_MYSQL_DSN.
// It counts the deadlocks (1213) and lock wait timeouts (1205) the store
// met and retried, and logs them at the end.
func TestConformance(t *testing.T) {
	runConformance(t, harnessMySQL.DSN(t))
}

// TestConformance_MySQL8 runs the suite on the MySQL 8 server of
// PLENUM_MYSQL8_DSN.
func TestConformance_MySQL8(t *testing.T) {
	runConformance(t, harnessMySQL8.DSN(t))
}

// TestConformance_MariaDB runs the suite on the MariaDB server of
// PLENUM_MARIADB_DSN.
func TestConformance_MariaDB(t *testing.T) {
	runConformance(t, harnessMariaDB.DSN(t))
}

func runConformance(t *testing.T, dsn string) {
	t.Helper()
	if dsn == "" {
		return // skipped
	}
	full, err := mysql.DSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// No parseTime: DATETIME columns would scan as []byte.
	bare, err := gomysql.ParseDSN(full)
	if err != nil {
		t.Fatal(err)
	}
	bare.ParseTime = false
	counting := &countingDialect{wrapped: wrapped{mysql.Dialect()}}
	t.Cleanup(func() {
		deadlocks, waits := counting.counts()
		t.Logf("retryable errors met by the whole suite: %d deadlocks (1213), %d lock wait timeouts (1205)", deadlocks, waits)
	})
	conformance.Run(t, conformance.Config{
		Dialect:       counting,
		Open:          conformance.Opener(mysql.DriverName, full),
		Misconfigured: conformance.Opener(mysql.DriverName, bare.FormatDSN()),
	})
}

// wrapped is a dialect that passes everything to the one it wraps, the
// migrator's optional interfaces included, and the core's through Unwrap
// (dialect.Wrapper), so that a test can change one method and the store
// still sends what a store over the dialect sends.
type wrapped struct{ dialect.Dialect }

// Unwrap returns the dialect wrapped.
func (w wrapped) Unwrap() dialect.Dialect { return w.Dialect }

func (w wrapped) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return w.Dialect.(dialect.TableProber).TableExists(ctx, q, table)
}

func (w wrapped) IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error) {
	return w.Dialect.(dialect.IndexProber).IndexExists(ctx, q, table, index)
}

func (w wrapped) ColumnExists(ctx context.Context, q dialect.Querier, table, column string) (bool, error) {
	return w.Dialect.(dialect.ColumnProber).ColumnExists(ctx, q, table, column)
}

// countingDialect counts the distinct server errors 1213 and 1205 that it
// classifies as retryable. The core classifies one error more than once
// at times, so errors are counted by identity.
type countingDialect struct {
	wrapped
	mu   sync.Mutex
	seen map[*gomysql.MySQLError]bool
	by   map[uint16]int
}

func (c *countingDialect) Classify(err error) dialect.ErrorClass {
	class := c.wrapped.Classify(err)
	var me *gomysql.MySQLError
	if class == dialect.Retryable && errors.As(err, &me) {
		c.mu.Lock()
		if c.seen == nil {
			c.seen, c.by = map[*gomysql.MySQLError]bool{}, map[uint16]int{}
		}
		if !c.seen[me] {
			c.seen[me] = true
			c.by[me.Number]++
		}
		c.mu.Unlock()
	}
	return class
}

func (c *countingDialect) counts() (deadlocks, lockWaits int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[1213], c.by[1205]
}

// openDB opens the server of PLENUM_MYSQL_DSN through mysql.Open, or skips.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	dsn := harnessMySQL.DSN(t)
	if dsn == "" {
		return nil
	}
	db, err := mysql.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
