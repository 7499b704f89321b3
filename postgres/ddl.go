package postgres

import (
	"strconv"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// columnType returns the PostgreSQL type of c: uuid, varchar(n), text,
// jsonb, integer, bigint, boolean or timestamptz (microseconds, stored in
// UTC).
func columnType(c dialect.Column) string {
	switch c.Type {
	case dialect.UUID:
		return "uuid"
	case dialect.String:
		if c.Size > 0 {
			return "varchar(" + strconv.Itoa(c.Size) + ")"
		}
		return "text"
	case dialect.JSON:
		return "jsonb"
	case dialect.Int:
		return "integer"
	case dialect.BigInt:
		return "bigint"
	case dialect.Bool:
		return "boolean"
	case dialect.Time:
		return "timestamptz"
	}
	return "text" // Text, and anything newer than this dialect
}

// CreateTable renders CREATE TABLE IF NOT EXISTS with a table-level primary
// key. The table goes to current_schema(): the first existing schema of
// search_path.
func (d *pgDialect) CreateTable(t dialect.Table) []string {
	return []string{sqlkit.TableDDL(t, columnType, false, "")}
}

// CreateIndex renders CREATE [UNIQUE] INDEX IF NOT EXISTS, partial when
// ix.Where is set: the claim path indexes only available items, the
// reaper's and the heartbeat's only claimed ones, so each stays as small as
// the work it finds.
func (d *pgDialect) CreateIndex(table string, ix dialect.Index) []string {
	return []string{sqlkit.IndexDDL(table, ix)}
}

// DropTable renders DROP TABLE IF EXISTS; the table's indexes go with it.
func (d *pgDialect) DropTable(table string) []string {
	return []string{"DROP TABLE IF EXISTS " + table}
}

// DropIndex renders DROP INDEX IF EXISTS; the index is found through
// search_path, as the table was.
func (d *pgDialect) DropIndex(table string, ix dialect.Index) []string {
	return []string{sqlkit.DropIndexDDL(ix.Name)}
}

// AddColumn renders ALTER TABLE ... ADD COLUMN IF NOT EXISTS. A nullable
// column without a default is added without rewriting the table.
func (d *pgDialect) AddColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.AddColumnDDL(table, c, columnType, false, true)}
}

// DropColumn renders ALTER TABLE ... DROP COLUMN IF EXISTS.
func (d *pgDialect) DropColumn(table string, c dialect.Column) []string {
	return []string{sqlkit.DropColumnDDL(table, c.Name, true)}
}
