package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// Check verifies, on one connection, what the dialect depends on:
//
//   - the *sql.DB talks through pgx (sql.Open("pgx", ...), Open, or
//     stdlib.OpenDBFromPool): the errors of other drivers cannot be
//     classified, so serialization failures would not be retried;
//   - the server is PostgreSQL (CockroachDB has a dialect of its own) of
//     version 13 or later (MinServerVersion);
//   - search_path names a schema that exists (current_schema() is not
//     NULL), where the tables are created and found;
//   - the session can write: not a standby, not
//     default_transaction_read_only.
//
// Each refusal names the server or setting to change.
func (d *pgDialect) Check(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("postgres: check: nil *sql.DB")
	}
	if !isPgx(db) {
		return fmt.Errorf("postgres: check: the *sql.DB uses the driver %T; open it with pgx (sql.Open(%q, dsn), postgres.Open, or stdlib.OpenDBFromPool for a *pgxpool.Pool): other drivers' errors cannot be classified for retries", db.Driver(), DriverName)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("postgres: check: cannot get a connection (is the *sql.DB closed?): %w", err)
	}
	defer conn.Close()

	var version string
	if err := conn.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		return fmt.Errorf("postgres: check: SELECT version(): %w", err)
	}
	if strings.Contains(version, "CockroachDB") {
		return fmt.Errorf("postgres: check: the server is CockroachDB (%s); use the cockroach dialect (github.com/plenumdb/plenum/cockroach), which runs serializable transactions and CockroachDB's DDL", version)
	}

	var (
		num        int
		schema     sql.NullString
		searchPath string
		readOnly   string
		standby    bool
	)
	err = conn.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int, current_schema(), "+
		"current_setting('search_path'), current_setting('default_transaction_read_only'), pg_is_in_recovery()").
		Scan(&num, &schema, &searchPath, &readOnly, &standby)
	if err != nil {
		return fmt.Errorf("postgres: check: reading the server's settings: %w", err)
	}
	if num < MinServerVersion {
		return fmt.Errorf("postgres: check: the server is %s (server_version_num %d); PostgreSQL %d or later is required", firstWords(version, 2), num, MinServerVersion/10000)
	}
	if !schema.Valid {
		return fmt.Errorf("postgres: check: search_path is %q, and no schema it names exists (current_schema() is NULL): create the schema, or set search_path to an existing one (DSN parameter search_path=<schema>)", searchPath)
	}
	if standby {
		return errors.New("postgres: check: the server is a read-only standby (pg_is_in_recovery()); connect to the primary")
	}
	if readOnly == "on" {
		return errors.New("postgres: check: default_transaction_read_only is on: Plenum writes; connect to a writable server or set default_transaction_read_only=off")
	}
	return nil
}

// firstWords returns the first n words of s: "PostgreSQL 12.3" of a
// version() string.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// TableExists reports whether table is visible through search_path, the
// way the unqualified names of Plenum's statements are resolved.
func (d *pgDialect) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	if q == nil {
		return false, errors.New("postgres: table exists: nil querier")
	}
	var ok bool
	if err := q.QueryRowContext(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres: table exists: %w", err)
	}
	return ok, nil
}
