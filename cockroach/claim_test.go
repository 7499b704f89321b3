package cockroach

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// recorder keeps the statement a dialect sends, and sends none.
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

// TestClaim_StatementFindsRowsBySemiJoin pins CockroachDB's claim: the
// PostgreSQL shape, its update finding the rows chosen with IN (SELECT
// ...), not PostgreSQL's array (Claim says why).
func TestClaim_StatementFindsRowsBySemiJoin(t *testing.T) {
	t.Parallel()
	var r recorder
	_, err := Dialect().Claim(t.Context(), &r, dialect.ClaimSpec{
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
		"UPDATE p_items SET state = 'claimed', claim_token = $2 WHERE id IN (SELECT id FROM c) RETURNING id, state"
	if r.query != want {
		t.Errorf("claim statement\n got %s\nwant %s", r.query, want)
	}
	if fmt.Sprint(r.args) != "[q tok]" {
		t.Errorf("claim arguments %v, want the filter's, then the assignment's", r.args)
	}
	if _, err := Dialect().Claim(t.Context(), &r, dialect.ClaimSpec{Table: "t"}); err == nil {
		t.Error("Claim took a spec without a key, filter, order, limit or assignment")
	}
	if _, err := Dialect().Claim(t.Context(), nil, dialect.ClaimSpec{}); err == nil {
		t.Error("Claim took a nil querier")
	}
}
