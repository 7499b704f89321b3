package postgres

import (
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plenumdb/plenum/dialect/sqlkit"
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
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, ConnectError("postgres: open", err)
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
		client bool // libpq's client setting, no server parameter
	}{
		{"keepalives_idle", time.Second, func(d time.Duration) { b.KeepAliveIdle = d }, true},
		{"keepalives_interval", time.Second, func(d time.Duration) { b.KeepAliveInterval = d }, true},
		{"keepalives_count", 1, func(d time.Duration) { b.KeepAliveCount = int(d) }, true},
		{"tcp_user_timeout", time.Millisecond, func(d time.Duration) { b.UserTimeout = d }, false},
	}
	for _, p := range params {
		v, ok := cfg.RuntimeParams[p.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("postgres: open: %s=%q in the DSN: want a whole number of at least 0", p.name, v)
		}
		p.set(time.Duration(n) * p.unit)
		if p.client {
			delete(cfg.RuntimeParams, p.name)
		}
	}
	cfg.DialFunc = b.Dialer().DialContext
	return cfg, nil
}
