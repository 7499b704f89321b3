package worker_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// stuckClaims is SQLite whose claims never answer until their context
// ends: a claim stuck in the database, as on a connection that died
// without the driver noticing.
type stuckClaims struct {
	dialect.Dialect
	entered chan struct{}
}

func (s stuckClaims) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// Stop keeps to its context's deadline with a claim stuck in the
// database: the claim is cancelled once the handlers' grace is over,
// rather than holding Stop until the database answers.
func TestStop_CancelsAStuckClaimAtItsDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := stuckClaims{Dialect: sqlite.Dialect(), entered: make(chan struct{}, 1)}
	store := testdb.SQLiteStore(t, d)
	cfg := fast(map[string]int{"q": 1})
	cfg.ReapInterval = -1
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stoptest.Await(t, d.entered, testWait, "claim from the worker")
	if err := stoptest.Stop(t, w.Stop, 200*time.Millisecond); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	if owners, err := browse.New(store).Owners(ctx, browse.OwnersParams{}); err != nil || len(owners) != 0 {
		t.Errorf("owners after Stop: %v, %v; want none (deregistered)", owners, err)
	}
}
