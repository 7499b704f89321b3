package migrations

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/plenumdb/plenum/dialect"
)

// Drop drops every table of Plenum's under prefix (those of every version
// this build knows, and the migrations table) if they exist, with their
// data and indexes, whatever version the schema is at. It touches no other
// table. Tests use it to clean up; Down(..., 0) is the rollback.
func Drop(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	if db == nil || d == nil {
		return errors.New("migrations: drop: nil database or dialect")
	}
	var stmts []string
	for _, m := range slices.Backward(All(prefix)) {
		for _, c := range slices.Backward(m.Changes) {
			if c.Table != nil {
				stmts = append(stmts, d.DropTable(c.Table.Name)...)
			}
		}
	}
	stmts = append(stmts, d.DropTable(NamesFor(prefix).Migrations)...)

	if !d.Capabilities().TransactionalDDL {
		if err := execAll(ctx, db, stmts); err != nil {
			return fmt.Errorf("migrations: drop: %w", err)
		}
		return nil
	}
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return fmt.Errorf("migrations: drop: %w", err)
	}
	defer tx.Rollback()
	if err := execAll(ctx, tx, stmts); err != nil {
		return fmt.Errorf("migrations: drop: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrations: drop: commit: %w", err)
	}
	return nil
}
