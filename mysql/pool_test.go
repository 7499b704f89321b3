package mysql_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/mysql"
)

// TestOpen_BoundsThePool checks that Open's pool opens at most
// dialect.DefaultMaxOpenConns connections, and makes a caller wait for
// more.
func TestOpen_BoundsThePool(t *testing.T) {
	t.Parallel()
	testdb.CheckOpenBound(t, mysql.Open, conformance.DSN(t, "mysql"))
}
