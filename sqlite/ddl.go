package sqlite

import (
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// columnType maps an abstract type to SQLite's storage class. Sizes are not
// enforced by SQLite; the core validates lengths before they get here.
func columnType(t dialect.ColumnType) string {
	switch t {
	case dialect.UUID:
		return "BLOB"
	case dialect.Int, dialect.BigInt, dialect.Bool, dialect.Time:
		return "INTEGER"
	}
	return "TEXT" // String, Text, JSON
}

// CreateTable renders CREATE TABLE IF NOT EXISTS with a table-level primary
// key.
func (d *sqliteDialect) CreateTable(t dialect.Table) []string {
	return []string{sqlkit.TableDDL(t, func(c dialect.Column) string { return columnType(c.Type) }, false, "")}
}

// CreateIndex renders CREATE [UNIQUE] INDEX IF NOT EXISTS, partial when
// ix.Where is set: SQLite has partial indexes.
func (d *sqliteDialect) CreateIndex(table string, ix dialect.Index) []string {
	return []string{sqlkit.IndexDDL(table, ix)}
}

// DropTable renders DROP TABLE IF EXISTS; the table's indexes go with it.
func (d *sqliteDialect) DropTable(table string) []string {
	return []string{"DROP TABLE IF EXISTS " + table}
}

// DropIndex renders DROP INDEX IF EXISTS.
func (d *sqliteDialect) DropIndex(table string, ix dialect.Index) []string {
	return []string{sqlkit.DropIndexDDL(ix.Name)}
}

// AddColumn renders ALTER TABLE ... ADD COLUMN. SQLite has no IF NOT
// EXISTS there, and needs none: its DDL is transactional, so a migration
// never stops half way.
func (d *sqliteDialect) AddColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.AddColumnDDL(table, c, func(c dialect.Column) string { return columnType(c.Type) }, false, false)}
}

// DropColumn renders ALTER TABLE ... DROP COLUMN, which needs SQLite 3.35
// (MinVersion) and a column in no index or constraint.
func (d *sqliteDialect) DropColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.DropColumnDDL(table, c.Name, false)}
}
