package core

// An item's progress (schema version 13). See statements.go for how
// templates are written and catalogued.
const (
	qProgressGet = "SELECT done, total, output, attempt, updated_at FROM {progress} WHERE item_id = ?"
	qProgressSet = "UPDATE {progress} SET done = ?, total = ?, output = {json?}, attempt = ?, updated_at = {now} WHERE item_id = ?"
	// progressOpen is an item's first progress row, for InsertIgnore on
	// item_id.
	progressOpen = "?, ?, ?, {json?}, ?, {now}"
)

// progressOpenColumns are the columns an item's first progress row is
// written with.
var progressOpenColumns = []string{"item_id", "done", "total", "output", "attempt", "updated_at"}

// progressConflict is the primary key of the progress table.
var progressConflict = []string{"item_id"}

func (s *Store) progressOpenSQL() string {
	return s.d.InsertIgnore(s.names.Progress, progressOpenColumns, s.expand.Replace(progressOpen), 1, progressConflict)
}

// qProgressOrphaned deletes the progress of those of n items that no
// longer exist: those the same transaction purged, not one revived since
// the purge read it.
func (s *Store) qProgressOrphaned(n int) string {
	return "DELETE FROM {progress} WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = {progress}.item_id) AND " + s.columnIn("item_id", n)
}
