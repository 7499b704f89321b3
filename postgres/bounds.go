package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/internal/pgbounds"
)

// boundedConfig parses dsn for Open and bounds how long a call may wait on
// a connection whose server stopped answering (sqlkit.TCPBounds): pgx
// alone leaves the kernel's keepalive and retransmission defaults, under
// which a claim sent into a silent partition waits about 15 minutes, and
// a wait for a reply with nothing left to send waits for ever.
//
// The DSN overrides each default with libpq's names: connect_timeout
// (seconds), keepalives_idle, keepalives_interval (seconds),
// keepalives_count, tcp_user_timeout (milliseconds). tcp_user_timeout is
// also a server setting of the same name and meaning, so it goes on to
// the server too, which then bounds its own side of the connection; the
// keepalives_* names are the client's alone and do not.
func boundedConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgbounds.Config(dsn, "postgres: open", true)
	var parse *pgconn.ParseConfigError
	if errors.As(err, &parse) {
		return nil, ConnectError("postgres: open", err)
	}
	return cfg, err
}
