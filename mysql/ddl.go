package mysql

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// tableOptions end every CREATE TABLE: InnoDB for row locks and
// transactions whatever default_storage_engine says, and utf8mb4 with a
// binary collation for the text columns (LONGTEXT), so that any Unicode
// text is stored and read back unchanged.
const tableOptions = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"

// columnType maps an abstract type to the type both servers accept.
//
// String is VARBINARY, four bytes per character (the most utf8mb4 needs):
// queue names, idempotency keys and barrier names must compare byte for
// byte. Every utf8mb4 collation the two servers share is PAD SPACE
// (utf8mb4_bin included), so 'k' and 'k ' would be the same key, and their
// NO PAD binary collations have different names (MySQL's utf8mb4_0900_bin,
// MariaDB's utf8mb4_nopad_bin), which one generated file cannot name.
// Binary strings compare byte for byte, with no padding, on both. The core
// checks lengths in characters and UTF-8 validity before a value gets here.
//
// JSON is LONGTEXT, not MySQL's JSON type: MySQL rewrites a JSON document
// (key order, spacing, duplicate keys) while MariaDB's JSON is LONGTEXT
// with a CHECK, so LONGTEXT gives back the bytes that were stored on both
// servers. The core validates documents before they get here, and the
// servers' JSON functions still read the column.
func columnType(c dialect.Column) string {
	switch c.Type {
	case dialect.UUID:
		return "BINARY(16)"
	case dialect.String:
		size := c.Size
		if size <= 0 {
			size = 255
		}
		return "VARBINARY(" + strconv.Itoa(4*size) + ")"
	case dialect.Text, dialect.JSON:
		return "LONGTEXT"
	case dialect.Int:
		return "INT"
	case dialect.BigInt:
		return "BIGINT"
	case dialect.Bool:
		return "TINYINT(1)"
	case dialect.Time:
		return "DATETIME(6)"
	}
	return "LONGTEXT"
}

// CreateTable renders CREATE TABLE IF NOT EXISTS with a table-level primary
// key. A CREATE TABLE is atomic on both servers (MySQL 8's data dictionary,
// MariaDB 10.6's atomic DDL), and IF NOT EXISTS makes it safe to run again.
func (d *mysqlDialect) CreateTable(t dialect.Table) []string {
	return []string{sqlkit.TableDDL(t, columnType, true, tableOptions)}
}

// CreateIndex renders one statement that creates ix, without IF NOT EXISTS,
// which MySQL 8 lacks: the migrator asks IndexExists first (see the package
// doc), so one generated file serves both servers.
//
// Neither server has partial indexes. A non-unique partial index becomes a
// composite index led by the columns its conditions compare with a value
// (state = 'available' gives (state, queue, priority, available_at, id) for
// the claim index): the query that repeats the condition seeks straight to
// the rows that meet it, in the order of the remaining columns. An IS NULL
// condition leads the same way (InnoDB seeks to NULL as to a value: the
// unfired barriers, fired_at IS NULL, in creation order). An IS NOT NULL
// condition adds nothing: rows with NULL there are merely indexed too.
//
// A unique partial index cannot be widened that way: unique over more
// columns is weaker, and unique over the same columns for every row is
// stricter than the partial one, which the contract forbids. It becomes a
// unique index over its columns plus a virtual generated column that is 1
// where every condition holds and NULL elsewhere; NULLs never collide in a
// unique index, so exactly the rows the partial index would hold are unique.
// The column and the index are added by one ALTER TABLE, which is atomic.
// A unique partial index that only leaves out rows with a NULL key column
// (dialect.Index.ExcludesOnlyNullKeys) needs no marker: InnoDB's unique
// indexes never compare such rows, so the plain unique index over its
// columns is exactly as strict.
func (d *mysqlDialect) CreateIndex(table string, ix dialect.Index) []string {
	if markedUnique(ix) {
		marker := markerColumn(ix.Name)
		cols := append(slices.Clone(ix.Columns), marker)
		return []string{"ALTER TABLE " + table +
			" ADD COLUMN " + marker + " TINYINT GENERATED ALWAYS AS (CASE WHEN " + condition(ix.Where) + " THEN 1 END) VIRTUAL," +
			" ADD UNIQUE INDEX " + ix.Name + " (" + strings.Join(cols, ", ") + ")"}
	}
	var cols []string
	for _, c := range ix.Where {
		if !c.NotNull && !slices.Contains(cols, c.Column) && !slices.Contains(ix.Columns, c.Column) {
			cols = append(cols, c.Column)
		}
	}
	cols = append(cols, ix.Columns...)
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	b.WriteString(ix.Name)
	b.WriteString(" ON ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(")")
	return []string{b.String()}
}

// markedUnique reports whether ix is rendered with a marker column: a
// unique partial index whose conditions leave out more than NULL keys.
func markedUnique(ix dialect.Index) bool {
	return ix.Unique && len(ix.Where) > 0 && !ix.ExcludesOnlyNullKeys()
}

// markerColumn names the generated column of a unique partial index.
func markerColumn(index string) string { return index + "_on" }

// condition renders a partial index's conditions as one SQL condition,
// with MySQL's literals.
func condition(where []dialect.Cond) string { return sqlkit.ConditionQuoted(where, quote) }

// DropTable renders DROP TABLE IF EXISTS; the table's indexes go with it.
func (d *mysqlDialect) DropTable(table string) []string {
	return []string{"DROP TABLE IF EXISTS " + table}
}

// DropIndex renders DROP INDEX ... ON table, without IF EXISTS (MySQL 8
// lacks it: the migrator asks IndexExists first). A unique partial index
// goes with its generated column, in one ALTER TABLE.
func (d *mysqlDialect) DropIndex(table string, ix dialect.Index) []string {
	if markedUnique(ix) {
		return []string{"ALTER TABLE " + table + " DROP INDEX " + ix.Name + ", DROP COLUMN " + markerColumn(ix.Name)}
	}
	return []string{"DROP INDEX " + ix.Name + " ON " + table}
}

// AddColumn renders ALTER TABLE ... ADD COLUMN, without IF NOT EXISTS,
// which MySQL 8 lacks: the migrator asks ColumnExists first. Adding a
// nullable column is an in-place change on both servers (MySQL 8's
// INSTANT, MariaDB 10.3's instant ADD COLUMN).
func (d *mysqlDialect) AddColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.AddColumnDDL(table, c, columnType, true, false)}
}

// DropColumn renders ALTER TABLE ... DROP COLUMN, without IF EXISTS, which
// MySQL 8 lacks: the migrator asks ColumnExists first.
func (d *mysqlDialect) DropColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.DropColumnDDL(table, c.Name, false)}
}

// quote renders s as a string literal that means the same with or without
// the NO_BACKSLASH_ESCAPES SQL mode.
func quote(s string) string {
	s = strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		// A backslash is an escape character unless NO_BACKSLASH_ESCAPES is
		// on: spell it with CONCAT and CHAR(92) to be safe either way.
		parts := strings.Split(s, `\`)
		for i, p := range parts {
			parts[i] = "'" + p + "'"
		}
		return "CONCAT(" + strings.Join(parts, ", CHAR(92), ") + ")"
	}
	return "'" + s + "'"
}

// TableExists reports whether table exists in the current database. The
// migrator uses it to tell a missing migrations table from a failing query.
// It needs no privilege beyond one on the table itself: information_schema
// shows a user the tables it may use.
func (d *mysqlDialect) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return sqlkit.Exists(ctx, q, "mysql: table exists", "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table)
}

// IndexExists reports whether table, in the current database, has an index
// named index. The migrator (dialect.IndexProber) uses it to skip the
// statements of an index that a migration which failed half way already
// created, since MySQL 8 has no CREATE INDEX IF NOT EXISTS.
func (d *mysqlDialect) IndexExists(ctx context.Context, q dialect.Querier, table, index string) (bool, error) {
	return sqlkit.Exists(ctx, q, "mysql: index exists", "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = ?", table, index)
}

// ColumnExists reports whether table, in the current database, has a
// column named column. The migrator (dialect.ColumnProber) uses it to
// skip an ADD COLUMN already done, or a DROP COLUMN, by a migration that
// failed half way.
func (d *mysqlDialect) ColumnExists(ctx context.Context, q dialect.Querier, table, column string) (bool, error) {
	return sqlkit.Exists(ctx, q, "mysql: column exists", "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?", table, column)
}

// MigrationNotes says what golang-migrate needs to run the generated files
// (dialect.Noter): it sends each file to the server whole, which
// go-sql-driver/mysql allows only with multiStatements=true in the DSN.
// (goose splits the statements itself; Plenum's own migrator runs them one
// by one.) Keep that setting to the migration tool's DSN: a store needs
// none.
func (d *mysqlDialect) MigrationNotes(format string) []string {
	if format != "golang-migrate" {
		return nil
	}
	return []string{"golang-migrate sends each file whole: its DSN needs multiStatements=true (mysql://user:password@tcp(host:3306)/db?multiStatements=true)."}
}
