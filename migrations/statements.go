package migrations

import (
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// Statements renders migration m in dialect d. up creates its tables and
// indexes in order; down drops its tables in reverse order, which drops
// their indexes too. (A later migration that adds an index to an older
// table will need a DropIndex in the dialect contract: dropping an index
// is spelled differently on every database.)
func Statements(d dialect.Dialect, m Migration) (up, down []string) {
	if d == nil {
		return nil, nil
	}
	var tables []string
	for _, c := range m.Changes {
		if c.Table != nil {
			up = append(up, d.CreateTable(*c.Table)...)
			tables = append(tables, c.Table.Name)
		}
		if c.Index != nil {
			up = append(up, d.CreateIndex(c.IndexTable, *c.Index)...)
		}
	}
	for i := len(tables) - 1; i >= 0; i-- {
		down = append(down, d.DropTable(tables[i])...)
	}
	return up, down
}

// versionColumns are the columns of a version row, in insert order.
var versionColumns = []string{"version", "name", "applied_at"}

// insertVersion returns the statement that records m as applied, with the
// version and name bound to two placeholders.
func insertVersion(d dialect.Dialect, prefix string) string {
	return d.Rebind("INSERT INTO " + NamesFor(prefix).Migrations + " (" +
		strings.Join(versionColumns, ", ") + ") VALUES (?, ?, " + d.Now(0) + ")")
}

// insertVersionLiteral returns a statement that records m as applied, with
// its values written out, and that does nothing when the row is already
// there: a generated file may run after Apply did the same work.
func insertVersionLiteral(d dialect.Dialect, prefix string, m Migration) string {
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
