package cockroach

import (
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// CreateTable renders PostgreSQL's CREATE TABLE, with the primary key
// hash-sharded (PRIMARY KEY (id) USING HASH) when it is one UUID column.
// Plenum's ids are UUIDv7: they grow with time, so every insert would land
// at the end of one range, on one node; the hash shards spread them over
// the cluster (the default bucket count, 16).
func (d *crdbDialect) CreateTable(t dialect.Table) []string {
	stmts := d.Dialect.CreateTable(t)
	if !d.hashSharded || len(t.PrimaryKey) != 1 || len(stmts) != 1 {
		return stmts
	}
	if c, ok := t.Column(t.PrimaryKey[0]); !ok || c.Type != dialect.UUID {
		return stmts
	}
	pk := "PRIMARY KEY (" + t.PrimaryKey[0] + ")"
	if strings.Count(stmts[0], pk) != 1 {
		return stmts
	}
	return []string{strings.Replace(stmts[0], pk, pk+" USING HASH", 1)}
}

// CreateIndex renders PostgreSQL's CREATE INDEX (partial ones stay
// partial), hash-sharded when the index is Sequential: its leading column
// grows with time, as the ids do, and would concentrate its writes on one
// range the same way.
func (d *crdbDialect) CreateIndex(table string, ix dialect.Index) []string {
	stmts := d.Dialect.CreateIndex(table, ix)
	if !d.hashSharded || !ix.Sequential || len(ix.Columns) == 0 || len(stmts) != 1 {
		return stmts
	}
	cols := " ON " + table + " (" + strings.Join(ix.Columns, ", ") + ")"
	if strings.Count(stmts[0], cols) != 1 {
		return stmts
	}
	return []string{strings.Replace(stmts[0], cols, cols+" USING HASH", 1)}
}

// DropIndex renders DROP INDEX IF EXISTS table@name: CockroachDB scopes
// index names to their table (an index made by CREATE UNIQUE INDEX needs
// no CASCADE). In the PostgreSQL-compatible mode it is PostgreSQL's.
// AddColumn and DropColumn are PostgreSQL's (IF [NOT] EXISTS), which
// CockroachDB accepts.
func (d *crdbDialect) DropIndex(table string, ix dialect.Index) []string {
	if !d.hashSharded {
		return d.Dialect.DropIndex(table, ix)
	}
	return []string{"DROP INDEX IF EXISTS " + table + "@" + ix.Name}
}
