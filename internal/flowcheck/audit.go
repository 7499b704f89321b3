package flowcheck

import (
	"context"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// AuditTable is a table named name that records runs: one row per start
// and per end of a claim of a keyed item, written inside the claim's
// fences (Record), so that a row exists only if the claim held.
func AuditTable(name string) dialect.Table {
	return dialect.Table{
		Name: name,
		Columns: []dialect.Column{
			{Name: "item", Type: dialect.String, Size: 64},
			{Name: "token", Type: dialect.String, Size: 64},
			{Name: "event", Type: dialect.String, Size: 8},
			{Name: "flow_key", Type: dialect.String, Size: 200},
			{Name: "at", Type: dialect.Time},
		},
		PrimaryKey: []string{"item", "token", "event"},
	}
}

// Record writes the row of event ("start" or "end") for c into the audit
// table through q, a fence of c: a start is stamped with the claim's time
// (the item's claimed_at in items, read under the fence's lock while the
// claim holds), an end with the database clock in the fence that
// completes the item, so that a run covers its claim.
func Record(ctx context.Context, q dialect.Querier, d dialect.Dialect, table, items string, c core.Claim, event string) error {
	if event == "start" {
		_, err := q.ExecContext(ctx, d.Rebind("INSERT INTO "+table+" (item, token, event, flow_key, at)"+
			" SELECT ?, ?, ?, ?, claimed_at FROM "+items+" WHERE id = ?"),
			c.ID.String(), c.Token.String(), event, c.FlowKey, d.UUID(c.ID))
		return err
	}
	_, err := q.ExecContext(ctx, d.Rebind("INSERT INTO "+table+" (item, token, event, flow_key, at) VALUES (?, ?, ?, ?, "+d.Now(0)+")"),
		c.ID.String(), c.Token.String(), event, c.FlowKey)
	return err
}
