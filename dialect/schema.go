package dialect

import "slices"

// ColumnType is an abstract column type; each dialect maps it to its own
// (UUID to uuid, BINARY(16), BLOB or RAW(16); Time to timestamptz,
// DATETIME(6), integer microseconds or TIMESTAMP(6); and so on).
type ColumnType int

// The column types of Plenum's schema.
const (
	// UUID holds a 16-byte identifier.
	UUID ColumnType = iota + 1
	// String holds short text with a maximum length in characters
	// (Column.Size); it can be indexed on every database.
	String
	// Text holds unbounded text.
	Text
	// JSON holds a JSON document.
	JSON
	// Int holds a 32-bit signed integer.
	Int
	// BigInt holds a 64-bit signed integer.
	BigInt
	// Bool holds true or false.
	Bool
	// Time holds an instant with at least the dialect's clock resolution.
	Time
)

// String names the type, for messages.
func (t ColumnType) String() string {
	switch t {
	case UUID:
		return "uuid"
	case String:
		return "string"
	case Text:
		return "text"
	case JSON:
		return "json"
	case Int:
		return "int"
	case BigInt:
		return "bigint"
	case Bool:
		return "bool"
	case Time:
		return "time"
	}
	return "unknown"
}

// Column is one column of a table.
type Column struct {
	Name string
	Type ColumnType
	// Size is the maximum length of a String column, in characters.
	Size int
	// Nullable columns may hold NULL; all others are NOT NULL.
	Nullable bool
	// Empty says that a String column that is not Nullable may still hold
	// the empty string. A database that stores '' as NULL (Oracle) must
	// then let the column be NULL; the core reads such a column's NULL as
	// "".
	Empty bool
}

// Table is one table of the schema. Names here are final: the table prefix
// has already been applied.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []string
}

// Column returns the column named name, and whether it exists.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Index is one index of a table.
type Index struct {
	// Name is final: the table prefix has already been applied.
	Name    string
	Columns []string
	Unique  bool
	// Where, when not empty, makes the index partial: only rows meeting
	// every condition are indexed. A dialect without partial indexes
	// chooses its substitute (typically a composite index led by the
	// condition's columns); it must never make a unique index stricter than
	// the partial one would be.
	Where []Cond
	// Sequential says that the index's leading column grows with time (a
	// time taken from the clock as rows are written), so that new entries
	// all land at one end of it. A distributed database may spread such an
	// index over its nodes (CockroachDB: a hash-sharded index); others
	// ignore it.
	Sequential bool
	// Claim marks the index that serves the claim (ClaimSpec.Seek is this
	// index): a dialect without partial indexes may render it as an
	// expression index that only a statement written against it uses, as
	// the dialect's own claim is.
	Claim bool
	// Nullable lists the index's columns that may be NULL (Nullable or
	// Empty in the table's definition), filled in by the migrations
	// package. A database whose unique indexes compare keys that are only
	// partly NULL (Oracle) needs it to keep such rows apart.
	Nullable []string
}

// ExcludesOnlyNullKeys reports whether ix is partial only in leaving out
// rows where one of its own columns is NULL (every condition is
// Column IS NOT NULL, of a column it indexes). For a unique index those
// are rows that no unique index compares where NULLs are distinct (MySQL,
// MariaDB), so a database that must index every row anyway may render it
// as the index over the same columns without conditions.
func (ix Index) ExcludesOnlyNullKeys() bool {
	if len(ix.Where) == 0 {
		return false
	}
	for _, c := range ix.Where {
		if !c.NotNull || !slices.Contains(ix.Columns, c.Column) {
			return false
		}
	}
	return true
}

// Cond is one condition of a partial index: Column IS NOT NULL when NotNull
// is set, Column IS NULL when Null is set, and Column = Value otherwise.
type Cond struct {
	Column  string
	Value   string
	NotNull bool
	Null    bool
}
