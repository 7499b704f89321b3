package mysql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
)

// DDL commits statement by statement here, so the migrator runs outside a
// transaction; a statement that fails as retryable (a deadlock, 1213)
// changed nothing, and Apply resumes the version it stopped in by itself
// instead of returning "left partly applied". The schema it leaves is
// current: a second Apply has nothing to do.
func TestApply_ResumesAfterARetryableStatement(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	if db == nil {
		return
	}
	prefix := fmt.Sprintf("mr%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, mysql.Dialect(), prefix); err != nil {
			t.Errorf("drop %s*: %v", prefix, err)
		}
	})
	var seen, failed atomic.Int32
	ctx := fault.With(t.Context(), fault.MigrateBeforeStatement, fault.Rule{Action: fault.Call, Func: func(ctx context.Context) error {
		stmt := fault.Detail(ctx)
		// The fifth statement, once: inside version 1, after some of
		// its tables exist.
		if seen.Add(1) == 5 && strings.Contains(stmt, prefix) {
			failed.Add(1)
			return &gomysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock (planted)"}
		}
		return nil
	}})
	done, err := migrations.Apply(ctx, db, mysql.Dialect(), prefix)
	if err != nil {
		t.Fatalf("Apply after a retryable statement: %v", err)
	}
	if failed.Load() != 1 {
		t.Fatalf("the planted failure fired %d times, want once", failed.Load())
	}
	if len(done) != migrations.LatestVersion || done[0] != 1 || done[len(done)-1] != migrations.LatestVersion {
		t.Errorf("Apply = %v, want versions 1 to %d", done, migrations.LatestVersion)
	}
	again, err := migrations.Apply(t.Context(), db, mysql.Dialect(), prefix)
	if err != nil || len(again) != 0 {
		t.Errorf("a second Apply = %v, %v; want nothing to do", again, err)
	}
}
