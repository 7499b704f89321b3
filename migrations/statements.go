package migrations

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// Statements renders migration m in dialect d. up runs its changes in
// order; down undoes them in reverse order. The down of an index or a
// column on a table that m itself creates is left out: dropping the table
// drops it too. (Version 1's down is its DROP TABLEs alone.)
func Statements(d dialect.Schema, m Migration) (up, down []string) {
	if d == nil {
		return nil, nil
	}
	created := createdTables(m)
	for _, c := range m.Changes {
		u, _ := c.statements(d)
		up = append(up, u...)
	}
	for _, c := range slices.Backward(m.Changes) {
		if c.goesWithTable(created) {
			continue
		}
		_, dn := c.statements(d)
		down = append(down, dn...)
	}
	return up, down
}

// createdTables lists the tables m creates.
func createdTables(m Migration) map[string]bool {
	created := map[string]bool{}
	for _, c := range m.Changes {
		if c.Table != nil {
			created[c.Table.Name] = true
		}
	}
	return created
}

// goesWithTable reports an index or column change whose down is left out
// because its table, created by the same migration, is dropped there.
func (c Change) goesWithTable(created map[string]bool) bool {
	return (c.Index != nil || c.DropIndex != nil || c.Column != nil) && created[c.table()]
}

// statements renders one change and its inverse.
func (c Change) statements(d dialect.Schema) (up, down []string) {
	switch {
	case c.Table != nil:
		return d.CreateTable(*c.Table), d.DropTable(c.Table.Name)
	case c.Index != nil:
		return d.CreateIndex(c.IndexTable, *c.Index), d.DropIndex(c.IndexTable, *c.Index)
	case c.DropIndex != nil:
		return d.DropIndex(c.IndexTable, *c.DropIndex), d.CreateIndex(c.IndexTable, *c.DropIndex)
	case c.Column != nil:
		return d.AddColumn(c.ColumnTable, *c.Column), d.DropColumn(c.ColumnTable, *c.Column)
	case c.Data != nil:
		var up, down []string
		if c.Data.Up != nil {
			up = c.Data.Up(d)
		}
		if c.Data.Down != nil {
			down = c.Data.Down(d)
		}
		return up, down
	}
	return nil, nil
}

// table is the table a change works on.
func (c Change) table() string {
	switch {
	case c.Table != nil:
		return c.Table.Name
	case c.Index != nil, c.DropIndex != nil:
		return c.IndexTable
	case c.Column != nil:
		return c.ColumnTable
	case c.Data != nil:
		return c.Data.Table
	}
	return ""
}

// validate reports a change that does not set exactly one step.
func (c Change) validate() error {
	n := 0
	for _, set := range []bool{c.Table != nil, c.Index != nil, c.DropIndex != nil, c.Column != nil, c.Data != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("a change must set exactly one of Table, Index, DropIndex, Column and Data; this one sets %d", n)
	case (c.Index != nil || c.DropIndex != nil) && c.IndexTable == "":
		return fmt.Errorf("an index change needs IndexTable")
	case c.Column != nil && c.ColumnTable == "":
		return fmt.Errorf("a column change needs ColumnTable")
	case c.Column != nil && !c.Column.Nullable:
		return fmt.Errorf("column %s: an added column must be nullable (the table may hold rows)", c.Column.Name)
	case c.Data != nil && (c.Data.Up == nil || c.Data.Down == nil):
		return fmt.Errorf("a data step needs Up and Down")
	}
	return nil
}

// done reports, for a database whose DDL is not transactional, whether
// change c is already in place (up) or already undone (down), as far as the
// dialect's probers can tell; without the prober a change needs, it is
// not done, and its statements must be safe to run again (IF [NOT]
// EXISTS). A data step is skipped only when its table is missing.
func (c Change) done(ctx context.Context, q dialect.Querier, d dialect.Dialect, down bool) (bool, error) {
	switch {
	case c.Table != nil:
		if p, ok := d.(dialect.TableProber); ok {
			exists, err := p.TableExists(ctx, q, c.Table.Name)
			if err != nil {
				return false, fmt.Errorf("checking for table %s: %w", c.Table.Name, err)
			}
			return exists != down, nil
		}
	case c.Index != nil, c.DropIndex != nil:
		if p, ok := d.(dialect.IndexProber); ok {
			ix := c.Index
			if ix == nil {
				ix = c.DropIndex
			}
			exists, err := p.IndexExists(ctx, q, c.IndexTable, ix.Name)
			if err != nil {
				return false, fmt.Errorf("checking for index %s: %w", ix.Name, err)
			}
			// Creating it (up of Index, down of DropIndex) is done when it
			// exists; dropping it when it does not.
			return exists == (down == (c.DropIndex != nil)), nil
		}
	case c.Column != nil:
		if p, ok := d.(dialect.ColumnProber); ok {
			exists, err := p.ColumnExists(ctx, q, c.ColumnTable, c.Column.Name)
			if err != nil {
				return false, fmt.Errorf("checking for column %s.%s: %w", c.ColumnTable, c.Column.Name, err)
			}
			return exists != down, nil
		}
	case c.Data != nil:
		if p, ok := d.(dialect.TableProber); ok && c.Data.Table != "" {
			exists, err := p.TableExists(ctx, q, c.Data.Table)
			if err != nil {
				return false, fmt.Errorf("checking for table %s: %w", c.Data.Table, err)
			}
			if down && !exists {
				return true, nil
			}
		}
		if p, ok := d.(dialect.ColumnProber); ok && down && c.Data.DownReads != "" {
			exists, err := p.ColumnExists(ctx, q, c.Data.Table, c.Data.DownReads)
			if err != nil {
				return false, fmt.Errorf("checking for column %s.%s: %w", c.Data.Table, c.Data.DownReads, err)
			}
			return !exists, nil
		}
	}
	return false, nil
}

// runChanges runs the statements of m in direction down (or up), change by
// change. When resumable (DDL commits on its own, so m may be half done),
// it first asks the dialect's probers whether each change is done, and
// skips it if so.
func runChanges(ctx context.Context, q dialect.Querier, d dialect.Dialect, m Migration, down, resumable bool) error {
	if !resumable {
		up, dn := Statements(d, m)
		if down {
			return execAll(ctx, q, dn)
		}
		return execAll(ctx, q, up)
	}
	created := createdTables(m)
	changes := slices.Clone(m.Changes)
	if down {
		slices.Reverse(changes)
	}
	for i, c := range changes {
		if down && c.goesWithTable(created) {
			continue
		}
		done, err := c.done(ctx, q, d, down)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		up, dn := c.statements(d)
		stmts := up
		if down {
			stmts = dn
		}
		if err := execAll(ctx, q, stmts); err != nil {
			return fmt.Errorf("change %d of %d: %w", i+1, len(changes), err)
		}
	}
	return nil
}

func execAll(ctx context.Context, q dialect.Querier, stmts []string) error {
	for i, s := range stmts {
		if err := fault.HitWith(ctx, fault.MigrateBeforeStatement, s); err != nil {
			return fmt.Errorf("statement %d of %d: %w", i+1, len(stmts), err)
		}
		if _, err := q.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("statement %d of %d: %w", i+1, len(stmts), err)
		}
	}
	return nil
}

// versionColumns are the columns of a version row, in insert order.
var versionColumns = []string{"version", "name", "applied_at"}

// insertVersion returns the statement that records m as applied, with the
// version and name bound to two placeholders.
func insertVersion(d dialect.Syntax, prefix string) string {
	return d.Rebind("INSERT INTO " + NamesFor(prefix).Migrations + " (" +
		strings.Join(versionColumns, ", ") + ") VALUES (?, ?, " + d.Now(0) + ")")
}

// deleteVersion returns the statement that deletes the row of the version
// bound to its one placeholder.
func deleteVersion(d dialect.Syntax, prefix string) string {
	return d.Rebind("DELETE FROM " + NamesFor(prefix).Migrations + " WHERE version = ?")
}

// insertVersionLiteral returns a statement that records m as applied, with
// its values written out, and that does nothing when the row is already
// there: a generated file may run after Apply did the same work.
func insertVersionLiteral(d dialect.Syntax, prefix string, m Migration) string {
	row := strconv.Itoa(m.Version) + ", " + quote(m.Name) + ", " + d.Now(0)
	return d.InsertIgnore(NamesFor(prefix).Migrations, versionColumns, row, 1, []string{"version"})
}

// deleteVersionLiteral returns the statement that forgets that m was
// applied.
func deleteVersionLiteral(prefix string, m Migration) string {
	return "DELETE FROM " + NamesFor(prefix).Migrations + " WHERE version = " + strconv.Itoa(m.Version)
}

// quote renders s as an SQL string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
