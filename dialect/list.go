package dialect

import "github.com/google/uuid"

// UUIDLister is an optional capability of a Dialect: a list of UUIDs bound
// as one parameter. The core finds it by type assertion (d.(UUIDLister)).
// Where a dialect has it, the statements that name a batch of items by id
// have one text whatever the batch's size, so that the driver prepares
// each once and the server parses and plans one parameter instead of one
// per item; without it they carry an IN list of one placeholder per id.
//
// PostgreSQL (and CockroachDB) implement it with a uuid[] parameter.
type UUIDLister interface {
	// InUUIDs returns a condition with exactly one '?', true for the rows
	// whose column holds one of the UUIDs bound to that '?' with
	// UUIDList, and for no other row.
	InUUIDs(column string) string
	// UUIDList returns the value to bind for ids in InUUIDs' condition.
	// ids is never empty.
	UUIDList(ids []uuid.UUID) any
}
