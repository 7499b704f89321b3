package dialect

// Purger is an optional capability of a Dialect: one statement that deletes
// a batch of retention's rows and the rows that depend on them. The core
// finds it by type assertion (d.(Purger)). Without it a retention batch is
// a read of ids and, in a transaction, a delete of those still old enough
// and a delete of their dependents: three statements and a transaction of
// their own, where a round trip costs more than the deletes do.
//
// PostgreSQL implements it with data-modifying CTEs.
type Purger interface {
	// PurgeSQL returns one statement, and its arguments, that deletes up
	// to spec.Limit rows of spec.Table meeting spec.Cond, lowest
	// spec.OrderBy first, passing over rows another transaction has
	// locked (so that purgers running at once share the work), and in
	// the same statement the rows of each of spec.Dependents whose key
	// column names a row it deleted. The statement returns one
	// row of one column: how many rows of spec.Table it deleted. It runs
	// outside any transaction: it is atomic on its own, and running it
	// again after an unknown outcome deletes only what is still there.
	PurgeSQL(spec PurgeSpec) (query string, args []any)
}

// PurgeSpec describes one retention batch for Purger.
type PurgeSpec struct {
	// Table is the table rows are deleted from, Key its primary key.
	Table, Key string
	// Cond is the condition a row to delete meets, with '?' placeholders
	// bound to CondArgs; it may be checked more than once.
	Cond     string
	CondArgs []any
	// OrderBy is the column whose lowest values go first (an index's).
	OrderBy string
	// Limit is the most rows to delete; at least 1.
	Limit int
	// Dependents are the tables whose rows go with the deleted ones.
	Dependents []PurgeDependent
}

// PurgeDependent is a table whose rows go with a retention batch's: those
// whose Key column holds a deleted row's key.
type PurgeDependent struct {
	Table, Key string
}
