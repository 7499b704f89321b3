package sqlite

import (
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
)

// inIDs splits one BLOB, the 16-byte ids end to end, into a row per id:
// SQLite has no array parameter, and substr works on a BLOB's bytes in
// every version the dialect supports (json_each would need unhex, 3.41).
const inIDs = " IN (WITH RECURSIVE plenum_ids(rest, id) AS (SELECT ?, NULL" +
	" UNION ALL SELECT substr(rest, 17), substr(rest, 1, 16) FROM plenum_ids WHERE length(rest) > 0)" +
	" SELECT id FROM plenum_ids WHERE id IS NOT NULL)"

// InUUIDs tests column against ids bound as one BLOB (UUIDList): one
// parameter, and one statement text, whatever the number of ids, so that
// SQLite parses a short statement instead of one placeholder per id.
func (d *sqliteDialect) InUUIDs(column string) string {
	return column + inIDs
}

// UUIDList binds ids as one BLOB of their 16 bytes each, end to end, the
// form InUUIDs splits and the form the id columns store.
func (d *sqliteDialect) UUIDList(ids []uuid.UUID) any {
	b := make([]byte, 0, 16*len(ids))
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	return b
}

var _ dialect.UUIDLister = (*sqliteDialect)(nil)
