package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ConnectError says why a connection through pgx could not be made, in
// words that tell apart the causes a user fixes differently: a DSN that
// does not parse, credentials or a database the server refused, a server
// that does not speak PostgreSQL's protocol (another database's port), and
// a server that could not be reached at all. prefix starts the message
// ("postgres: open"); the cockroach dialect, which speaks the same
// protocol, shares it. The cause stays wrapped for errors.As.
func ConnectError(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var (
		parse *pgconn.ParseConfigError
		pgErr *pgconn.PgError
	)
	switch {
	case errors.As(err, &parse):
		return fmt.Errorf("%s: the DSN is not valid: %w", prefix, err)
	case errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28"):
		// Class 28, invalid authorization: a wrong password (28P01), an
		// unknown role or no pg_hba.conf entry (28000).
		return fmt.Errorf("%s: the server refused the credentials (SQLSTATE %s): check the user and password in the DSN: %w", prefix, pgErr.Code, err)
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return fmt.Errorf("%s: the server has no such database (SQLSTATE 3D000): check the database name in the DSN: %w", prefix, err)
	case errors.As(err, &pgErr):
		return fmt.Errorf("%s: the server refused the connection (SQLSTATE %s): %w", prefix, pgErr.Code, err)
	case notPostgres(err):
		// pgx reports a server that answers the startup message with
		// something else than PostgreSQL's protocol as "received
		// unexpected message: %!w(<nil>)", with no error to match.
		return fmt.Errorf("%s: the server at that address does not speak PostgreSQL's protocol (is the port another database's, MySQL's 3306 say?): %s", prefix, strings.ReplaceAll(err.Error(), ": %!w(<nil>)", ""))
	}
	return fmt.Errorf("%s: cannot reach the server: %w", prefix, err)
}

// notPostgres reports whether err is pgx's answer to a server that spoke
// another protocol during the startup handshake.
func notPostgres(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "received unexpected message") || strings.Contains(msg, "server protocol version too low")
}
