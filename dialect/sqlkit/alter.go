package sqlkit

import (
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// AddColumnDDL renders ALTER TABLE table ADD COLUMN for c, with its type
// from colType, NOT NULL unless c is nullable (then NULL when explicitNull
// asks for it, as TableDDL does), and IF NOT EXISTS when ifNotExists is set
// (PostgreSQL, CockroachDB; SQLite and MySQL 8 lack it). The migrator adds
// only nullable columns to tables that may hold rows: a NOT NULL column
// without a default would fail on the first row.
func AddColumnDDL(table string, c dialect.Column, colType func(dialect.Column) string, explicitNull, ifNotExists bool) string {
	var b strings.Builder
	b.WriteString("ALTER TABLE ")
	b.WriteString(table)
	b.WriteString(" ADD COLUMN ")
	if ifNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(c.Name)
	b.WriteString(" ")
	b.WriteString(colType(c))
	switch {
	case !c.Nullable:
		b.WriteString(" NOT NULL")
	case explicitNull:
		b.WriteString(" NULL")
	}
	return b.String()
}

// DropColumnDDL renders ALTER TABLE table DROP COLUMN column, with IF
// EXISTS when ifExists is set.
func DropColumnDDL(table, column string, ifExists bool) string {
	s := "ALTER TABLE " + table + " DROP COLUMN "
	if ifExists {
		s += "IF EXISTS "
	}
	return s + column
}

// DropIndexDDL renders DROP INDEX IF EXISTS name, the shape of the
// databases whose index names need no table (SQLite, PostgreSQL).
func DropIndexDDL(name string) string {
	return "DROP INDEX IF EXISTS " + name
}
