package dialect

// Noter is an optional capability of a Dialect: what a migration tool
// needs to run the dialect's generated files in a format, a DSN setting,
// say (MySQL's multiStatements=true for golang-migrate). The generator
// (package migrations) finds it by type assertion, writes the notes into
// each file's header, and plenum migrations gen prints them too.
type Noter interface {
	// MigrationNotes returns the notes for files in format, each one line.
	MigrationNotes(format string) []string
}
