package core

// Items' tags and metadata (schema version 12). See statements.go for how
// templates are written and catalogued.

// metaColumns are the columns of an item_meta row, as written and read.
var metaColumns = []string{"item_id", "kind", "name", "value"}

// metaConflict is the primary key of the item_meta table.
var metaConflict = []string{"item_id", "kind", "name"}

const (
	// metaRow is one row of tags or metadata: item, kind, name, value.
	metaRowSQL = "?, ?, ?, ?"
	// argsPerMeta is the binds of one metaRowSQL.
	argsPerMeta = 4
)

// metaInsertSQL inserts n rows of tags and metadata. The items are new,
// so no row can exist: insert-or-ignore is only the dialects' one
// multi-row INSERT.
func (s *Store) metaInsertSQL(n int) string {
	return s.d.InsertIgnore(s.names.ItemMeta, metaColumns, metaRowSQL, n, metaConflict)
}

// qMetaRead reads the tags and metadata of n items, by the primary key.
func (s *Store) qMetaRead(n int) string {
	return "SELECT item_id, kind, name, value FROM {itemmeta} WHERE " + s.columnIn("item_id", n)
}

// qMetaOrphaned deletes the tags and metadata of those of n items that no
// longer exist: those the same transaction purged, not one revived since
// the purge read it.
func (s *Store) qMetaOrphaned(n int) string {
	return "DELETE FROM {itemmeta} WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = {itemmeta}.item_id) AND " + s.columnIn("item_id", n)
}
