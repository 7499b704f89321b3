package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// The audit is the evidence a round leaves: one row per unit of work that
// completed, inserted by the handler through its fence, so that the row
// commits with the completion or not at all. It is append-only and has no
// unique index: a unit done twice leaves two rows, which Check counts.
// The table is the round's own, under the round's prefix, and is not part
// of Plenum's schema.

// auditTable is the audit's name under prefix.
func auditTable(prefix string) string { return prefix + "chaos_audit" }

// createAudit creates the audit table under prefix, in SQL every local
// database accepts as it is, and the flow audit (flow.go).
func createAudit(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) error {
	_, err := db.ExecContext(ctx, "CREATE TABLE "+auditTable(prefix)+` (
		unit VARCHAR(200) NOT NULL,
		kind VARCHAR(40) NOT NULL,
		item_id VARCHAR(36) NOT NULL,
		token VARCHAR(36) NOT NULL,
		owner_id VARCHAR(36) NOT NULL,
		worker INT NOT NULL,
		attempt INT NOT NULL,
		seen BIGINT NOT NULL,
		total BIGINT NOT NULL,
		app_time VARCHAR(40) NOT NULL)`)
	if err != nil {
		return fmt.Errorf("chaos: create the audit table: %w", err)
	}
	for _, stmt := range d.CreateTable(flowAudit(prefix)) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("chaos: create the flow audit table: %w", err)
		}
	}
	return nil
}

// dropAudit drops the audit table under prefix, if it is there.
func dropAudit(ctx context.Context, db *sql.DB, prefix string) error {
	for _, t := range []string{auditTable(prefix), flowAudit(prefix).Name} {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("chaos: drop the audit table %s: %w", t, err)
		}
	}
	return nil
}

// auditRow is one completion's evidence.
type auditRow struct {
	Unit, Kind  string
	Claim       core.Claim
	Worker      int
	Seen, Total int64
	AppTime     time.Time
}

// insertAudit writes r through the fence f: it commits with f's
// completion.
func insertAudit(ctx context.Context, f *core.Fenced, d dialect.Dialect, prefix string, r auditRow) error {
	_, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+auditTable(prefix)+
		" (unit, kind, item_id, token, owner_id, worker, attempt, seen, total, app_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		r.Unit, r.Kind, r.Claim.ID.String(), r.Claim.Token.String(), r.Claim.Owner.String(), r.Worker, r.Claim.Attempt,
		r.Seen, r.Total, r.AppTime.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("chaos: audit %s: %w", r.Unit, err)
	}
	return nil
}
