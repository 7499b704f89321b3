package migrations

import "github.com/plenumdb/plenum/dialect"

// keyed6 is version 6: the unique index of idempotency keys holds only the
// items that have a key. Most items have none (their unique_key is NULL,
// which never collides), yet version 1's items_key took an entry for every
// item, and on PostgreSQL for every version of it: a claim and a
// completion change the state, so neither is a HOT update, and each wrote
// one more entry into the index for a key that was not there. items_keyed
// is the same uniqueness over the rows that can collide; the enqueue's
// insert-or-ignore (no conflict target on PostgreSQL, SQLite and
// CockroachDB) and the lookups by key (unique_key = ?, which implies it
// is not NULL) use it as they used items_key.
//
// A database without partial indexes renders it as before: on MySQL and
// MariaDB a unique index never compares rows with a NULL column, and
// InnoDB indexes every row anyway; on Oracle the index is already built
// on expressions that are NULL where the key is.
//
// The old index is dropped before the new one is created, both ways: on
// Oracle the two are the same expressions, and an index on a column list
// that another index has already is refused (ORA-01408). Where DDL is
// transactional (PostgreSQL, SQLite) no one sees the moment between;
// elsewhere a migration stopped there leaves the keys unguarded until it
// is run again, but it has not recorded version 6, so no store of this
// version opens on it (core.ErrSchemaOutdated) until it has.
func keyed6(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change) Migration {
	drop := func(c Change) Change { c.DropIndex, c.Index = c.Index, nil; return c }
	return Migration{
		Version: 6,
		Name:    "keyed",
		Changes: []Change{
			drop(idx(n.Items, "items_key", true, []string{"queue", "unique_key"})),
			idx(n.Items, "items_keyed", true, []string{"queue", "unique_key"}, dialect.Cond{Column: "unique_key", NotNull: true}),
		},
	}
}
