package dashboard

import (
	"testing"
	"time"
)

func TestFormat_CountsAndDurations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n      int64
		capped bool
		want   string
	}{{0, false, "0"}, {999, false, "999"}, {1000, false, "1,000"}, {10000, true, "10,000+"}, {1234567, false, "1,234,567"}, {-1234, false, "-1,234"}} {
		if got := count(tc.n, tc.capped); got != tc.want {
			t.Errorf("count(%d, %v) = %q, want %q", tc.n, tc.capped, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{
		250 * time.Millisecond: "250ms", 42 * time.Second: "42s", 5 * time.Minute: "5m",
		200 * time.Second: "3m 20s", 3*time.Hour + 5*time.Minute: "3h 5m", 72 * time.Hour: "3d",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if got := ago(now, now.Add(-90*time.Second)); got != "1m 30s ago" {
		t.Errorf("ago = %q", got)
	}
	if got := waited(now, now.Add(2*time.Hour)); got != "due in 2h" {
		t.Errorf("waited = %q", got)
	}
	if got := ago(now, time.Time{}); got != "—" {
		t.Errorf("ago(zero) = %q", got)
	}
}
