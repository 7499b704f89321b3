package crashtest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// AuditedStore opens a store on db under a fresh prefix, with a table of
// its own, prefix+"audit", of one text column: the fenced effects of a
// killed-worker test, with no primary key, so that an effect done twice
// shows instead of failing. Both are dropped when t ends, before db is
// closed.
func AuditedStore(ctx context.Context, t *testing.T, db *sql.DB, d dialect.Dialect, column string) (store *core.Store, prefix, audit string) {
	t.Helper()
	t.Cleanup(func() { db.Close() }) // after the drop below
	prefix = fmt.Sprintf("pk%08x_", time.Now().UnixNano()&0xffffffff)
	audit = prefix + "audit"
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range d.DropTable(audit) {
			_, _ = db.ExecContext(cctx, stmt)
		}
		if err := migrations.Drop(cctx, db, d, prefix); err != nil {
			t.Errorf("drop %s*: %v", prefix, err)
		}
	})
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+audit+" ("+column+" VARCHAR(200) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return store, prefix, audit
}
