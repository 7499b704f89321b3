package postgres

import (
	"testing"
	"time"
)

// TestBoundedConfig_DefaultsAndDSNOverrides checks that Open bounds a new
// connection's dial where the DSN does not, takes libpq's names from the
// DSN over its defaults, keeps the client's own keepalive settings from
// the server (which would refuse them as unknown parameters), passes
// tcp_user_timeout on to it, and refuses a value that is no number.
func TestBoundedConfig_DefaultsAndDSNOverrides(t *testing.T) {
	cfg, err := boundedConfig("postgres://u@localhost/db")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 10*time.Second || cfg.DialFunc == nil {
		t.Errorf("defaults: connect timeout %v, dial func set %v; want 10s and a bounded dialer", cfg.ConnectTimeout, cfg.DialFunc != nil)
	}
	cfg, err = boundedConfig("postgres://u@localhost/db?connect_timeout=3&keepalives_idle=7&keepalives_interval=2&keepalives_count=4&tcp_user_timeout=60000")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 3*time.Second {
		t.Errorf("connect_timeout=3: %v", cfg.ConnectTimeout)
	}
	for _, name := range []string{"keepalives_idle", "keepalives_interval", "keepalives_count"} {
		if _, ok := cfg.RuntimeParams[name]; ok {
			t.Errorf("%s goes to the server, which knows no such parameter", name)
		}
	}
	if cfg.RuntimeParams["tcp_user_timeout"] != "60000" {
		t.Errorf("tcp_user_timeout does not go on to the server: %v", cfg.RuntimeParams)
	}
	if _, err := boundedConfig("postgres://u@localhost/db?keepalives_idle=soon"); err == nil {
		t.Error("keepalives_idle=soon was accepted")
	}
}
