package core

// A run's context (schema version 10). See statements.go for how
// templates are written and catalogued.
const (
	runContextColumns = "ctx_key, value, written_by, updated_at"
	qRunContextGet    = "SELECT " + runContextColumns + " FROM {runcontext} WHERE run_id = ? ORDER BY ctx_key"
	qRunContextSet    = "UPDATE {runcontext} SET value = {json?}, written_by = ?, updated_at = {now} WHERE run_id = ? AND ctx_key = ?"
	// runContextOpen is a key's first row, for InsertIgnore on (run_id,
	// ctx_key).
	runContextOpen = "?, ?, {json?}, ?, {now}"
)

// runContextOpenColumns are the columns a key's first row is written with.
var runContextOpenColumns = []string{"run_id", "ctx_key", "value", "written_by", "updated_at"}

// runContextConflict is the primary key of the run context's table.
var runContextConflict = []string{"run_id", "ctx_key"}

func (s *Store) runContextOpenSQL() string {
	return s.d.InsertIgnore(s.names.RunContext, runContextOpenColumns, s.expand.Replace(runContextOpen), 1, runContextConflict)
}
