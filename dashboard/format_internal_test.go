package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/seal"
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

// TestFormat_SealedValuesShowTheirKeyID checks that a sealed value shows
// as its key id, alone or inside a document, and that other documents
// show as before.
func TestFormat_SealedValuesShowTheirKeyID(t *testing.T) {
	t.Parallel()
	ring, err := seal.NewKeyring("k1", map[string][]byte{"k1": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	env, err := ring.Seal(nil, []byte(`"secret"`))
	if err != nil {
		t.Fatal(err)
	}
	if got := pretty(env); got != "sealed (key id k1)" {
		t.Errorf("pretty(sealed) = %q", got)
	}
	nested := []byte(`{"run":"r","in":` + string(env) + `,"idx":12345678901234567890}`)
	want := "{\n  \"idx\": 12345678901234567890,\n  \"in\": \"sealed (key id k1)\",\n  \"run\": \"r\"\n}"
	if got := pretty(nested); got != want {
		t.Errorf("pretty(nested) = %q, want %q", got, want)
	}
	for _, plain := range []string{`{"a":1}`, `{"plenum.sealed":"no"}`, `[1,{"plenum.sealed":1}]`, `not json "plenum.sealed"`} {
		if got := pretty([]byte(plain)); strings.Contains(got, "sealed (") {
			t.Errorf("pretty(%s) = %q, shown as sealed", plain, got)
		}
	}
}
