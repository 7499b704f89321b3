package cockroach

import (
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dialect"
)

// lister is PostgreSQL's uuid[] binding, which CockroachDB reads the same
// way.
var lister = theDialect.Dialect.(dialect.UUIDLister)

// InUUIDs tests column against a uuid[] parameter, as on PostgreSQL.
func (d *crdbDialect) InUUIDs(column string) string { return lister.InUUIDs(column) }

// UUIDList binds ids as the text of a uuid[] literal, as on PostgreSQL.
func (d *crdbDialect) UUIDList(ids []uuid.UUID) any { return lister.UUIDList(ids) }
