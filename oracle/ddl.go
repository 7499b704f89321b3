package oracle

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Oracle error numbers the DDL blocks ignore.
const (
	errNameInUse    = 955  // ORA-00955: name is already used by an existing object
	errNoSuchTable  = 942  // ORA-00942: table or view does not exist
	errColumnExists = 1430 // ORA-01430: column being added already exists in table
	errInvalidIdent = 904  // ORA-00904: invalid identifier (here: no such column)
	errNoSuchIndex  = 1418 // ORA-01418: specified index does not exist
)

// columnType maps an abstract type to Oracle's. Strings are VARCHAR2 in
// characters (the schema's sizes are characters; 255 CHAR is at most 1,020
// bytes in AL32UTF8, within the 4,000 bytes of MAX_STRING_SIZE=STANDARD);
// JSON is a CLOB with an IS JSON check, which 19c and 23ai both take (the
// JSON type is 21c and later); booleans NUMBER(1) checked to 0 or 1 (the
// BOOLEAN type is 23ai only); times TIMESTAMP(6) holding UTC.
func columnType(c dialect.Column) string {
	switch c.Type {
	case dialect.UUID:
		return "RAW(16)"
	case dialect.String:
		size := c.Size
		if size <= 0 {
			size = 255
		}
		return "VARCHAR2(" + strconv.Itoa(size) + " CHAR)"
	case dialect.JSON:
		return "CLOB CHECK (" + c.Name + " IS JSON)"
	case dialect.Int:
		return "NUMBER(10)"
	case dialect.BigInt:
		return "NUMBER(19)"
	case dialect.Bool:
		return "NUMBER(1) CHECK (" + c.Name + " IN (0, 1))"
	case dialect.Time:
		return "TIMESTAMP(6)"
	}
	return "CLOB" // Text, and anything newer than this dialect
}

// CreateTable renders CREATE TABLE with a table-level primary key, inside
// a PL/SQL block that ignores ORA-00955 (the table exists), so that it is
// safe to run again: Oracle 19c has no IF NOT EXISTS. A column that may
// hold the empty string (Column.Empty) is left nullable, because Oracle
// stores the empty string as NULL.
func (d *oraDialect) CreateTable(t dialect.Table) []string {
	t.Columns = slices.Clone(t.Columns)
	for i := range t.Columns {
		if t.Columns[i].Empty {
			t.Columns[i].Nullable = true
		}
	}
	stmt := sqlkit.TableDDL(t, columnType, false, "")
	stmt = strings.Replace(stmt, "CREATE TABLE IF NOT EXISTS ", "CREATE TABLE ", 1)
	return []string{ignoring(stmt, errNameInUse)}
}

// CreateIndex renders CREATE INDEX inside a block that ignores ORA-00955.
// Oracle has no partial indexes, but it does not store an index entry
// whose key columns are all NULL, which makes a function-based index
// partial:
//
//   - the claim's index (ix.Claim) becomes one expression per column,
//     CASE WHEN <conditions> THEN column END, holding only claimable rows;
//     the claim writes the same expressions (see Claim);
//   - a unique index with a nullable column, or partial, is function-based
//     so that a row outside it has an all-NULL key: Oracle compares keys
//     that are only partly NULL, so (queue, NULL) would collide with
//     (queue, NULL). One nullable column leads as itself (lookups by it can
//     still use the index) and the others are CASE WHEN it IS NOT NULL
//     THEN column END;
//   - any other partial index becomes a composite index led by the columns
//     its conditions compare (as on MySQL), which the core's queries, as
//     written for every database, can use.
func (d *oraDialect) CreateIndex(table string, ix dialect.Index) []string {
	var cols []string
	switch {
	case ix.Claim && len(ix.Where) > 0:
		for _, c := range ix.Columns {
			cols = append(cols, seekExpr(ix.Where, c))
		}
	case ix.Unique && (len(ix.Nullable) > 0 || len(ix.Where) > 0):
		cols = uniqueKey(ix)
	default:
		for _, c := range ix.Where {
			if !c.NotNull && !slices.Contains(cols, c.Column) && !slices.Contains(ix.Columns, c.Column) {
				cols = append(cols, c.Column)
			}
		}
		cols = append(cols, ix.Columns...)
	}
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX " + ix.Name + " ON " + table + " (" + strings.Join(cols, ", ") + ")")
	return []string{ignoring(b.String(), errNameInUse)}
}

// uniqueKey returns the key expressions of a unique index whose rows with
// a NULL column (or outside its conditions) must not be compared.
func uniqueKey(ix dialect.Index) []string {
	var conds []dialect.Cond
	for _, c := range ix.Nullable {
		conds = append(conds, dialect.Cond{Column: c, NotNull: true})
	}
	// A condition that one of the nullable columns is not NULL is one of
	// those already: the index over the same columns renders the same.
	where := slices.DeleteFunc(slices.Clone(ix.Where), func(c dialect.Cond) bool {
		return c.NotNull && slices.Contains(ix.Nullable, c.Column)
	})
	conds = append(conds, where...)
	var lead string
	if len(ix.Nullable) == 1 && len(where) == 0 {
		lead = ix.Nullable[0]
	}
	var cols []string
	if lead != "" {
		cols = append(cols, lead)
	}
	for _, c := range ix.Columns {
		if c != lead {
			cols = append(cols, seekExpr(conds, c))
		}
	}
	return cols
}

// seekExpr is the index expression of column under the conditions where:
// the column where they hold, NULL elsewhere.
func seekExpr(where []dialect.Cond, column string) string {
	return "CASE WHEN " + condition(where) + " THEN " + column + " END"
}

// condition renders conditions with Oracle's string literals (quotes
// doubled; a backslash is an ordinary character).
func condition(where []dialect.Cond) string { return sqlkit.Condition(where) }

// DropTable renders DROP TABLE ... PURGE inside a block that ignores
// ORA-00942 (no such table); the table's indexes go with it, and PURGE
// keeps it out of the recycle bin.
func (d *oraDialect) DropTable(table string) []string {
	return []string{ignoring("DROP TABLE "+table+" PURGE", errNoSuchTable)}
}

// DropIndex renders DROP INDEX inside a block that ignores ORA-01418 (no
// such index): Oracle 19c has no IF EXISTS, and an index name is unique in
// its schema, so the table is not named.
func (d *oraDialect) DropIndex(table string, ix dialect.Index) []string {
	return []string{ignoring("DROP INDEX "+ix.Name, errNoSuchIndex)}
}

// AddColumn renders ALTER TABLE ... ADD (Oracle has no COLUMN keyword
// there) inside a block that ignores ORA-01430 (the column exists), so that
// it is safe to run again. A column that may hold the empty string
// (Column.Empty) is left nullable, as in CreateTable. Adding a nullable
// column without a default changes only the data dictionary: the table's
// rows are not rewritten.
func (d *oraDialect) AddColumn(table string, c dialect.Column) []string {
	if c.Empty {
		c.Nullable = true
	}
	stmt := "ALTER TABLE " + table + " ADD (" + c.Name + " " + columnType(c)
	if !c.Nullable {
		stmt += " NOT NULL"
	}
	return []string{ignoring(stmt+")", errColumnExists)}
}

// DropColumn renders ALTER TABLE ... DROP COLUMN inside a block that
// ignores ORA-00904 (no such column), so that it is safe to run again.
// The whole table is rewritten; Plenum drops only columns a failed or
// rolled-back version added.
func (d *oraDialect) DropColumn(table string, c dialect.Column) []string {
	return []string{ignoring("ALTER TABLE "+table+" DROP COLUMN "+c.Name, errInvalidIdent)}
}

// ignoring wraps a DDL statement in a PL/SQL block that runs it and
// ignores the Oracle error code, and only that one.
func ignoring(ddl string, code int) string {
	return "BEGIN\n  EXECUTE IMMEDIATE '" + strings.ReplaceAll(ddl, "'", "''") + "';\n" +
		"EXCEPTION\n  WHEN OTHERS THEN\n    IF SQLCODE != -" + strconv.Itoa(code) + " THEN\n      RAISE;\n    END IF;\nEND;"
}

// TableExists reports whether the current schema has table. Unquoted
// names are stored in upper case.
func (d *oraDialect) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return sqlkit.Exists(ctx, q, "oracle: table exists", "SELECT COUNT(*) FROM user_tables WHERE table_name = UPPER(:1)", table)
}

// ColumnExists reports whether table, in the current schema, has a column
// named column. The migrator (dialect.ColumnProber) asks it before it
// adds or drops a column; the statements are safe to run again anyway.
func (d *oraDialect) ColumnExists(ctx context.Context, q dialect.Querier, table, column string) (bool, error) {
	return sqlkit.Exists(ctx, q, "oracle: column exists", "SELECT COUNT(*) FROM user_tab_columns WHERE table_name = UPPER(:1) AND column_name = UPPER(:2)", table, column)
}

// IndexExists reports whether table, in the current schema, has an index
// named index. CreateIndex is safe to run again on its own; the migrator
// asks this first and skips the statement.
func (d *oraDialect) IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error) {
	return sqlkit.Exists(ctx, q, "oracle: index exists", "SELECT COUNT(*) FROM user_indexes WHERE table_name = UPPER(:1) AND index_name = UPPER(:2)", table, index)
}
