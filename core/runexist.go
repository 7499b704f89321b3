package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// specRun names specs[i].Run, for runsExist.
func specRun(i int) string { return fmt.Sprintf("specs[%d].Run", i) }

// qRunsExisting lists those of n run ids that name a run.
func qRunsExisting(n int) string {
	return "SELECT id FROM {runs} WHERE id IN (" + sqlkit.Placeholders(n) + ")"
}

// runsMax is the most run ids one existence check binds.
func (s *Store) runsMax() int { return s.inListMax(0) }

// runsExist refuses specs whose Run names no run, with ErrNotFound naming
// the first such spec's field (field(i) names specs[i].Run), so that an item is never stored in a run that
// Get, RunItems and CancelRun would not know. It reads in q, the enqueue's
// own transaction, so a run created earlier in it (CreateRunTx) counts;
// runs are never deleted, so what it sees stays true until the commit.
// Specs without a Run cost nothing: no statement is sent.
func (s *Store) runsExist(ctx context.Context, q dialect.Querier, specs []ItemSpec, field func(i int) string) error {
	var ids []uuid.UUID
	asked := map[uuid.UUID]bool{}
	for _, sp := range specs {
		if sp.Run != uuid.Nil && !asked[sp.Run] {
			asked[sp.Run] = true
			ids = append(ids, sp.Run)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found := make(map[uuid.UUID]bool, len(ids))
	for _, chunk := range chunks(ids, s.runsMax()) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = s.d.UUID(id)
		}
		rows, err := q.QueryContext(ctx, s.sql(qRunsExisting(len(chunk))), args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id uuid.UUID
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			found[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for i, sp := range specs {
		if sp.Run != uuid.Nil && !found[sp.Run] {
			return fmt.Errorf("plenum: %s: run %s: %w", field(i), sp.Run, ErrNotFound)
		}
	}
	return nil
}
