// Package pgbounds parses a DSN of PostgreSQL's protocol for the dialects
// that speak it (postgres, cockroach) and bounds how long a call may wait
// on a connection whose server stopped answering (sqlkit.TCPBounds): pgx
// alone leaves the kernel's keepalive and retransmission defaults, under
// which a statement sent into a silent partition waits about 15 minutes,
// and a wait for a reply with nothing left to send waits for ever.
package pgbounds

import (
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Config parses dsn with pgx and sets sqlkit.DefaultTCPBounds where the
// DSN sets none of libpq's names for them: connect_timeout (seconds),
// keepalives_idle, keepalives_interval (seconds), keepalives_count,
// tcp_user_timeout (milliseconds). The keepalives_* names are the
// client's alone and are not sent to the server; tcp_user_timeout goes
// on to the server too where serverUserTimeout says the server knows it
// (PostgreSQL's setting of the same name and meaning), and is the
// client's alone otherwise. A DSN that does not parse returns pgx's
// error as it is (a *pgconn.ParseConfigError), for the caller's words; a
// bad value of one of the names an error that starts with prefix.
func Config(dsn, prefix string, serverUserTimeout bool) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	b := sqlkit.DefaultTCPBounds
	if cfg.ConnectTimeout > 0 {
		b.Connect = cfg.ConnectTimeout
	} else {
		cfg.ConnectTimeout = b.Connect
	}
	params := []struct {
		name   string
		unit   time.Duration
		set    func(time.Duration)
		client bool // the client's setting, no server parameter
	}{
		{"keepalives_idle", time.Second, func(d time.Duration) { b.KeepAliveIdle = d }, true},
		{"keepalives_interval", time.Second, func(d time.Duration) { b.KeepAliveInterval = d }, true},
		{"keepalives_count", 1, func(d time.Duration) { b.KeepAliveCount = int(d) }, true},
		{"tcp_user_timeout", time.Millisecond, func(d time.Duration) { b.UserTimeout = d }, !serverUserTimeout},
	}
	for _, p := range params {
		v, ok := cfg.RuntimeParams[p.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %s=%q in the DSN: want a whole number of at least 0", prefix, p.name, v)
		}
		p.set(time.Duration(n) * p.unit)
		if p.client {
			delete(cfg.RuntimeParams, p.name)
		}
	}
	cfg.DialFunc = b.Dialer().DialContext
	return cfg, nil
}
