package bench

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// settingQueries are, per database, the settings that decide how fast a
// commit is and what it costs (durability, isolation), read on the
// database both sides use: they share the *sql.DB, and so its session
// settings, and begin their transactions the same way.
var settingQueries = map[string][]string{
	"postgres": {"SHOW server_version", "SHOW synchronous_commit", "SHOW fsync", "SHOW wal_sync_method", "SHOW transaction_isolation", "SHOW autovacuum"},
	"mysql":    {"SELECT VERSION()", "SELECT @@innodb_flush_log_at_trx_commit", "SELECT @@sync_binlog", "SELECT @@log_bin"},
	"sqlite":   {"SELECT sqlite_version()", "PRAGMA synchronous", "PRAGMA journal_mode", "PRAGMA busy_timeout"},
}

// isolationNote states the isolation level where the database cannot be
// asked for the current transaction's: the dialect's Begin sets it per
// transaction, over the session's default.
var isolationNote = map[string]string{"mysql": " (transactions: READ COMMITTED, set by the dialect's Begin)"}

// benchSettings returns the line that states the settings of db that both
// sides run with, read inside a transaction begun by the dialect (so that
// the isolation level shown is the one its transactions get).
func benchSettings(ctx context.Context, db *sql.DB, d dialect.Dialect) string {
	qs := settingQueries[d.Name()]
	if len(qs) == 0 {
		return "settings: (none known for " + d.Name() + "); both sides share the database, its session settings and the dialect's Begin"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tx, err := d.Begin(ctx, db, dialect.TxOptions{ReadOnly: true})
	if err != nil {
		return "settings: unreadable: " + err.Error()
	}
	defer tx.Rollback()
	parts := make([]string, 0, len(qs))
	for _, q := range qs {
		var v sql.NullString
		if err := tx.QueryRowContext(ctx, q).Scan(&v); err != nil {
			v = sql.NullString{String: "? (" + err.Error() + ")", Valid: true}
		}
		name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(q, "SHOW "), "SELECT "), "PRAGMA ")
		parts = append(parts, name+"="+v.String)
	}
	return "settings (both sides: one database, one pool, the dialect's Begin): " + strings.Join(parts, " ") + isolationNote[d.Name()]
}

// placeholderRun matches a run of four or more placeholders in a list.
var placeholderRun = regexp.MustCompile(`(\$\d+|\?)(, (\$\d+|\?)){3,}`)

// shortSQL collapses the long placeholder lists of IN lists and
// multi-row inserts, so that a statement prints on a line or two.
func shortSQL(q string) string {
	return placeholderRun.ReplaceAllStringFunc(q, func(run string) string {
		marks := strings.Split(run, ", ")
		return fmt.Sprintf("%s, ... %s (%d placeholders)", marks[0], marks[len(marks)-1], len(marks))
	})
}

// printSQL prints the distinct statements each side ran for the row name,
// most run first.
func printSQL(w interface{ Write([]byte) (int, error) }, name string, plenum, bare []string) {
	fmt.Fprintf(w, "\nSQL of %s, Plenum (most run first):\n", name)
	for _, q := range plenum {
		fmt.Fprintf(w, "  %s\n", shortSQL(q))
	}
	fmt.Fprintf(w, "SQL of %s, bare SQL:\n", name)
	for _, q := range bare {
		fmt.Fprintf(w, "  %s\n", shortSQL(q))
	}
}
