package core

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/migrations"
)

// TestPeriodKey_AlignedToTheEpochInUTC checks the documented form: the
// key, "@", and the period's start in UTC, for times before the epoch too.
func TestPeriodKey_AlignedToTheEpochInUTC(t *testing.T) {
	at := time.Date(2026, 12, 6, 6, 59, 59, 999999000, time.FixedZone("x", 3*3600))
	for _, c := range []struct {
		period time.Duration
		t      time.Time
		want   string
	}{
		{time.Hour, at, "k@2026-12-06T03:00:00.000000Z"},
		{24 * time.Hour, at, "k@2026-12-06T00:00:00.000000Z"},
		{90 * time.Second, time.Unix(100, 0), "k@1970-01-01T00:01:30.000000Z"},
		{time.Hour, time.Unix(-1, 0), "k@1969-12-31T23:00:00.000000Z"},
	} {
		if got := PeriodKey("k", c.period, c.t); got != c.want {
			t.Errorf("PeriodKey(k, %v, %s) = %q, want %q", c.period, c.t, got, c.want)
		}
	}
}

// TestReleasedKey_FitsAndSortsAfterTheKey checks that the longest key a
// caller may give, with its period, fits the column once released, and
// that a released key sorts right after its key, byte for byte.
func TestReleasedKey_FitsAndSortsAfterTheKey(t *testing.T) {
	key := PeriodKey(strings.Repeat("é", migrations.MaxKeyLen), time.Hour, time.Now())
	id := uuid.Must(uuid.NewV7())
	r := ReleasedKey(id, key)
	if n := utf8.RuneCountInString(r); n > migrations.MaxStoredKeyLen || n != utf8.RuneCountInString(key)+releasedKeySuffixLen {
		t.Errorf("released key of %d characters (limit %d, suffix %d)", n, migrations.MaxStoredKeyLen, releasedKeySuffixLen)
	}
	if !(key < r && r < key+" ") {
		t.Errorf("released key %q does not sort between %q and the key's longer look-alikes", r, key)
	}
	if err := validName("Key", r, migrations.MaxStoredKeyLen, false); err == nil {
		t.Errorf("a released key is accepted as a caller's key")
	}
}
