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

// TestBoundedConfig_MultiHostDSN checks that Open reads a DSN naming a
// primary and its standbys, libpq's way: every host is tried in order,
// each bounded by the same dialer and connect timeout, and
// target_session_attrs=read-write refuses a host that does not accept
// writes (a standby not promoted yet), so that a worker's new connections
// follow a failover.
func TestBoundedConfig_MultiHostDSN(t *testing.T) {
	cfg, err := boundedConfig("postgres://u@db1:5432,db2:5433/jobs?sslmode=disable&target_session_attrs=read-write&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "db1" || cfg.Port != 5432 || len(cfg.Fallbacks) != 1 || cfg.Fallbacks[0].Host != "db2" || cfg.Fallbacks[0].Port != 5433 {
		t.Fatalf("hosts: %s:%d then %d fallbacks; want db1:5432 then db2:5433", cfg.Host, cfg.Port, len(cfg.Fallbacks))
	}
	if cfg.ValidateConnect == nil {
		t.Error("target_session_attrs=read-write sets no check of the host")
	}
	if cfg.ConnectTimeout != 2*time.Second || cfg.DialFunc == nil {
		t.Errorf("connect timeout %v, dial func set %v; want 2s and the bounded dialer, for every host", cfg.ConnectTimeout, cfg.DialFunc != nil)
	}
	if _, ok := cfg.RuntimeParams["target_session_attrs"]; ok {
		t.Error("target_session_attrs goes to the server, which knows no such parameter")
	}
}
