package sqlkit

import (
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// TableDDL renders CREATE TABLE IF NOT EXISTS for t, the shape every
// dialect shares: one column per line with its type from colType, NOT NULL
// unless the column is nullable (then NULL, when explicitNull asks for it:
// MySQL's defaults for some types differ), a table-level primary key, and
// options after the closing parenthesis ("" for none). Dialects build on
// it so that their DDL differs only where the databases do.
func TableDDL(t dialect.Table, colType func(dialect.Column) string, explicitNull bool, options string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS ")
	b.WriteString(t.Name)
	b.WriteString(" (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.WriteString(c.Name)
		b.WriteString(" ")
		b.WriteString(colType(c))
		switch {
		case !c.Nullable:
			b.WriteString(" NOT NULL")
		case explicitNull:
			b.WriteString(" NULL")
		}
	}
	if len(t.PrimaryKey) > 0 {
		if len(t.Columns) > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  PRIMARY KEY (")
		b.WriteString(strings.Join(t.PrimaryKey, ", "))
		b.WriteString(")")
	}
	b.WriteString("\n)")
	b.WriteString(options)
	return b.String()
}

// InsertValues renders INSERT INTO table (columns) VALUES (row), (row), ...
// with n copies of row, for a dialect's InsertIgnore to finish with its
// conflict clause. n below 1 gives a statement every server rejects.
func InsertValues(table string, columns []string, row string, n int) string {
	var b strings.Builder
	b.Grow(32 + len(table) + 16*len(columns) + (len(row)+4)*max(n, 0))
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(columns, ", "))
	b.WriteString(") VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		b.WriteString(row)
		b.WriteString(")")
	}
	return b.String()
}

// IndexDDL renders CREATE [UNIQUE] INDEX IF NOT EXISTS for ix on table,
// partial (WHERE ...) when ix.Where is set: the shape of the databases that
// have both (SQLite, PostgreSQL, CockroachDB).
func IndexDDL(table string, ix dialect.Index) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX IF NOT EXISTS ")
	b.WriteString(ix.Name)
	b.WriteString(" ON ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(ix.Columns, ", "))
	b.WriteString(")")
	if len(ix.Where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(Condition(ix.Where))
	}
	return b.String()
}

// Condition renders conds joined by AND, each "column = 'value'" (a
// standard SQL literal: quotes doubled), "column IS NOT NULL" or "column IS
// NULL".
func Condition(conds []dialect.Cond) string {
	return ConditionQuoted(conds, func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" })
}

// ConditionQuoted is Condition with the values written as literals by
// quote, for a database whose string literals need more than doubled
// quotes (MySQL reads a backslash as an escape).
func ConditionQuoted(conds []dialect.Cond, quote func(string) string) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		switch {
		case c.NotNull:
			parts[i] = c.Column + " IS NOT NULL"
		case c.Null:
			parts[i] = c.Column + " IS NULL"
		default:
			parts[i] = c.Column + " = " + quote(c.Value)
		}
	}
	return strings.Join(parts, " AND ")
}
