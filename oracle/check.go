package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect"
)

// MinServerVersion is the oldest Oracle Database release the dialect
// supports: 19c. Nothing the dialect writes needs 23ai.
const MinServerVersion = 19

// Check verifies, on one connection, what the dialect depends on:
//
//   - the *sql.DB talks through go-ora (sql.Open("oracle", ...) or
//     Open): other drivers' errors cannot be classified, and the claim's
//     OUT bind is go-ora's;
//   - the server is Oracle Database 19c or later (MinServerVersion), read
//     from PRODUCT_COMPONENT_VERSION, which every user may read;
//   - the database character set is AL32UTF8, so that any Unicode text is
//     stored as given, and JSON above LOBThreshold bytes is told apart
//     from shorter JSON by its UTF-8 length;
//   - a transaction can begin at READ COMMITTED.
//
// Each refusal names what to change.
func (d *oraDialect) Check(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("oracle: check: nil *sql.DB")
	}
	if _, ok := db.Driver().(*goora.OracleDriver); !ok {
		return fmt.Errorf("oracle: check: the *sql.DB uses the driver %T; open it with go-ora (sql.Open(%q, dsn) or oracle.Open): other drivers' errors cannot be classified for retries", db.Driver(), DriverName)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("oracle: check: cannot get a connection (is the *sql.DB closed?): %w", err)
	}
	defer conn.Close()

	var version string
	if err := conn.QueryRowContext(ctx, versionQuery).Scan(&version); err != nil {
		return fmt.Errorf("oracle: check: reading the server's version: %w", err)
	}
	if major, err := majorVersion(version); err != nil || major < MinServerVersion {
		return fmt.Errorf("oracle: check: the server is Oracle %s; Oracle Database %dc or later is required", version, MinServerVersion)
	}
	var charset string
	if err := conn.QueryRowContext(ctx, "SELECT value FROM nls_database_parameters WHERE parameter = 'NLS_CHARACTERSET'").Scan(&charset); err != nil {
		return fmt.Errorf("oracle: check: reading NLS_CHARACTERSET: %w", err)
	}
	if charset != "AL32UTF8" {
		return fmt.Errorf("oracle: check: the database character set is %s; Plenum needs AL32UTF8, so that text is stored as given", charset)
	}
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		return fmt.Errorf("oracle: check: cannot begin a READ COMMITTED transaction: %w", err)
	}
	return tx.Rollback()
}

// majorVersion reads the release number of a version string ("19.0.0.0.0",
// "23.4.0.24.05").
func majorVersion(v string) (int, error) {
	head, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	return strconv.Atoi(head)
}
