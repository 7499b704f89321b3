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

// KeyLister is an optional capability of a Dialect: the first rows of
// each of several keys, as many of each as bound with it, read in one
// query whose text is the same for any number of keys. The core finds it
// by type assertion (As) and reads or claims the items of several lanes
// with it (each lane a key, what it asks of the lane its count); without
// it, that read is one subquery per key joined by UNION ALL, which the
// server plans and starts once per key at each claim.
//
// PostgreSQL implements it with two arrays, of the keys and of their
// counts, and a LATERAL subquery run once per key along an index.
type KeyLister interface {
	// FirstPerKey returns a query of columns (a comma-separated list of
	// table's columns, unqualified) of table's rows that satisfy filter:
	// for each key bound with KeyList, the first rows in orderBy whose
	// column key holds it, at most as many as the count bound with it.
	// Its '?' are the keys', the counts', then filter's.
	FirstPerKey(table, columns, key, filter, orderBy string) string
	// KeyList returns the values to bind for FirstPerKey's keys and
	// counts. keys and counts have the same length, at least 1; a count
	// is at least 1.
	KeyList(keys []string, counts []int) (keyList, countList any)
}

// KeyLockLister is an optional capability of a KeyLister: FirstPerKey
// whose rows are locked as each key's read meets them, rows another
// transaction holds passed over (FOR UPDATE SKIP LOCKED in the read of
// each key), so that claims of the same keys at once take each key's
// next rows rather than meet on its first and come back short. The core
// claims the items of keys without limits with it (the claim of keys,
// which takes no lane lock to keep claims apart); without it, such a
// claim takes fewer items where another holds its keys' first.
type KeyLockLister interface {
	// FirstPerKeyLocked is FirstPerKey, each key's rows locked and
	// those held by another transaction passed over. Its '?' are
	// FirstPerKey's.
	FirstPerKeyLocked(table, columns, key, filter, orderBy string) string
}
