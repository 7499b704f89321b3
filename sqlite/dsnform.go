package sqlite

import (
	"path/filepath"
	"strings"
)

// fileExtensions are the extensions SQLite database files are commonly
// given.
var fileExtensions = []string{".db", ".sqlite", ".sqlite3", ".db3"}

// isFileDSN reports whether dsn names a SQLite database file: a file:
// URI, or a path with one of the usual extensions (a path without one is
// opened when the dialect is named): for dialect.ForDSN, which tells the
// dialect from a DSN alone.
func isFileDSN(dsn string) bool {
	if strings.HasPrefix(dsn, "file:") {
		return true
	}
	path, _, _ := strings.Cut(dsn, "?")
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range fileExtensions {
		if ext == e {
			return true
		}
	}
	return false
}
