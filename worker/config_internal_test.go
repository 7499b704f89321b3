package worker

import (
	"log/slog"
	"testing"
	"time"
)

// TestConfig_ZeroFieldsTakeTheExportedDefaults checks that withDefaults
// sets every zero field to the default its constant names, and leaves
// the fields set alone.
func TestConfig_ZeroFieldsTakeTheExportedDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.withDefaults()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"PollInterval", c.PollInterval, DefaultPollInterval},
		{"HeartbeatInterval", c.HeartbeatInterval, DefaultHeartbeatInterval},
		{"StaleAfter", c.StaleAfter, DefaultStaleAfter},
		{"ReapInterval", c.ReapInterval, DefaultReapInterval},
		{"RetainFor", c.RetainFor, DefaultRetainFor},
		{"PeriodicInterval", c.PeriodicInterval, DefaultPeriodicInterval},
		{"MaxCrashes", c.MaxCrashes, DefaultMaxCrashes},
		{"DeadlineMargin", c.DeadlineMargin, DefaultDeadlineMargin},
		{"CompleteBatch", c.CompleteBatch, DefaultCompleteBatch},
		{"DefaultKind.Timeout", c.DefaultKind.Timeout, DefaultTimeout},
		{"kind's Timeout", c.kindConfig(KindConfig{}).Timeout, DefaultTimeout},
	} {
		if f.got != f.want {
			t.Errorf("zero %s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if c.Host == "" || c.Logger == nil {
		t.Errorf("zero Host %q, Logger %v: want the host name and a logger", c.Host, c.Logger)
	}
	logger := slog.Default()
	set := Config{
		PollInterval: 1, HeartbeatInterval: 2, StaleAfter: 3, ReapInterval: -1, RetainFor: -1,
		PeriodicInterval: 4, MaxCrashes: 5, DeadlineMargin: 6, CompleteBatch: 7,
		DefaultKind: KindConfig{Timeout: 8, MaxAttempts: 9}, Host: "h", Logger: logger,
	}
	got := set.withDefaults()
	if got.PollInterval != 1 || got.HeartbeatInterval != 2 || got.StaleAfter != 3 || got.ReapInterval != -1 || got.RetainFor != -1 ||
		got.PeriodicInterval != 4 || got.MaxCrashes != 5 || got.DeadlineMargin != 6 || got.CompleteBatch != 7 ||
		got.DefaultKind.Timeout != 8 || got.DefaultKind.MaxAttempts != 9 || got.Host != "h" || got.Logger != logger {
		t.Errorf("withDefaults changed fields that were set: %+v", got)
	}
	if k := got.kindConfig(KindConfig{Timeout: time.Minute}); k.Timeout != time.Minute || k.MaxAttempts != 9 {
		t.Errorf("kindConfig = %+v, want its own Timeout and DefaultKind's MaxAttempts", k)
	}
}
