package pgbounds_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/internal/pgbounds"
)

// TestConfig_BoundsEveryConnection checks the bounds Config sets: a
// connect timeout and a bounded dialer where the DSN sets none, libpq's
// names from the DSN over the defaults, the keepalive names kept from the
// server always, tcp_user_timeout passed on only to a server that knows
// it (PostgreSQL, not CockroachDB), and a bad value or DSN refused.
func TestConfig_BoundsEveryConnection(t *testing.T) {
	for _, server := range []bool{true, false} {
		cfg, err := pgbounds.Config("postgresql://root@db:26257/app", "x: open", server)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ConnectTimeout != 10*time.Second || cfg.DialFunc == nil {
			t.Errorf("defaults: connect timeout %v, dial func set %v; want 10s and a bounded dialer", cfg.ConnectTimeout, cfg.DialFunc != nil)
		}
		cfg, err = pgbounds.Config("postgresql://root@db:26257/app?connect_timeout=3&keepalives_idle=7&keepalives_count=4&tcp_user_timeout=60000", "x: open", server)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ConnectTimeout != 3*time.Second {
			t.Errorf("connect_timeout=3: %v", cfg.ConnectTimeout)
		}
		for _, name := range []string{"keepalives_idle", "keepalives_count"} {
			if _, ok := cfg.RuntimeParams[name]; ok {
				t.Errorf("%s goes to the server", name)
			}
		}
		if _, sent := cfg.RuntimeParams["tcp_user_timeout"]; sent != server {
			t.Errorf("tcp_user_timeout sent to the server: %v, want %v", sent, server)
		}
	}
	if _, err := pgbounds.Config("postgresql://root@db/app?keepalives_interval=soon", "x: open", false); err == nil || !strings.HasPrefix(err.Error(), "x: open: keepalives_interval=") {
		t.Errorf("keepalives_interval=soon: %v", err)
	}
	var parse *pgconn.ParseConfigError
	if _, err := pgbounds.Config("postgresql://root@db:port/app", "x: open", false); !errors.As(err, &parse) {
		t.Errorf("a DSN that does not parse: %v, want pgx's ParseConfigError", err)
	}
}
