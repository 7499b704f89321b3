package mysql_test

import (
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/upgradetest"
	"github.com/plenumdb/plenum/mysql"
)

// The schema upgrade from version 1 with data, down and up again,
// concurrent migrators, and failures before each statement of version 2's
// up and down: DDL commits on its own here, so the version shows as partly
// applied (or rolled back) and the next run completes it.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	if openDB(t) == nil {
		return
	}
	upgradetest.Run(t, upgradetest.Config{
		Dialect: mysql.Dialect(),
		Open:    func(t testing.TB) *sql.DB { return openDB(t) },
	})
}
