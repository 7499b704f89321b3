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
// partial), hash-sharded when its leading column is a time: a time column
// of new rows grows like their ids do. The dialect contract does not pass
// column types to CreateIndex, so a time column is recognised by its
// name: every Time column of Plenum's schema ends in "_at" and no other
// column does (a test in this package holds the schema to that).
func (d *crdbDialect) CreateIndex(table string, ix dialect.Index) []string {
	stmts := d.Dialect.CreateIndex(table, ix)
	if !d.hashSharded || len(ix.Columns) == 0 || !isTimeColumn(ix.Columns[0]) || len(stmts) != 1 {
		return stmts
	}
	cols := " ON " + table + " (" + strings.Join(ix.Columns, ", ") + ")"
	if strings.Count(stmts[0], cols) != 1 {
		return stmts
	}
	return []string{strings.Replace(stmts[0], cols, cols+" USING HASH", 1)}
}

// isTimeColumn reports whether a column of Plenum's schema holds a time.
func isTimeColumn(name string) bool { return strings.HasSuffix(name, "_at") }
