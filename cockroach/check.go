package cockroach

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5/stdlib"
)

// MinVersion is the oldest CockroachDB release Check accepts, as
// major*100+minor: 23.2. SKIP LOCKED exists since 22.2 and hash-sharded
// indexes with a virtual shard column since 22.1, but 23.2 is the oldest
// release line that refuses SKIP LOCKED where it would silently return
// wrong rows (with shared and replicated locks, cockroachdb/cockroach#116776)
// instead of returning them, and releases before it are out of support.
const MinVersion = 2302

var versionRE = regexp.MustCompile(`CockroachDB \S+ v(\d+)\.(\d+)`)

// parseVersion returns major*100+minor of a CockroachDB version() string,
// and false for anything else.
func parseVersion(v string) (int, bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || minor >= 100 {
		return 0, false
	}
	return major*100 + minor, true
}

// checkCockroach verifies, on one connection: pgx as the driver (the
// errors of others cannot be classified), a CockroachDB server of
// MinVersion or later, a search_path naming an existing schema, and a
// writable session. Each refusal names what to change.
func (d *crdbDialect) checkCockroach(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("cockroach: check: nil *sql.DB")
	}
	if _, ok := db.Driver().(*stdlib.Driver); !ok {
		return fmt.Errorf("cockroach: check: the *sql.DB uses the driver %T; open it with pgx (sql.Open(%q, dsn), cockroach.Open, or stdlib.OpenDBFromPool for a *pgxpool.Pool): other drivers' errors cannot be classified for retries", db.Driver(), DriverName)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("cockroach: check: cannot get a connection (is the *sql.DB closed?): %w", err)
	}
	defer conn.Close()

	var version string
	if err := conn.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		return fmt.Errorf("cockroach: check: SELECT version(): %w", err)
	}
	v, ok := parseVersion(version)
	if !ok {
		return fmt.Errorf("cockroach: check: the server is not CockroachDB (version() is %q); for PostgreSQL use the postgres dialect (github.com/plenumdb/plenum/postgres)", version)
	}
	if v < MinVersion {
		return fmt.Errorf("cockroach: check: the server is CockroachDB v%d.%d (%s); v%d.%d or later is required", v/100, v%100, version, MinVersion/100, MinVersion%100)
	}

	var (
		schema     sql.NullString
		searchPath string
		readOnly   string
	)
	err = conn.QueryRowContext(ctx, "SELECT current_schema(), current_setting('search_path'), current_setting('default_transaction_read_only')").
		Scan(&schema, &searchPath, &readOnly)
	if err != nil {
		return fmt.Errorf("cockroach: check: reading the session's settings: %w", err)
	}
	if !schema.Valid {
		return fmt.Errorf("cockroach: check: search_path is %q, and no schema it names exists (current_schema() is NULL): create the schema, or set search_path to an existing one (DSN parameter search_path=<schema>)", searchPath)
	}
	if readOnly == "on" {
		return errors.New("cockroach: check: default_transaction_read_only is on: Plenum writes; set default_transaction_read_only=off")
	}
	return nil
}
