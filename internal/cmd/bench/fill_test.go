package bench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// The fill makes ids as the store does, UUIDv7 of a day ago, each once:
// random ids would spread the old rows over the whole key space, in
// front of and among the new ones.
func TestFill_IDsAreTimeOrderedAndADayOld(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "fill.db")
			if name != "sqlite" {
				if dsn = (conformance.Harness{Name: name}).DSN(t); dsn == "" {
					return // Harness.DSN skips, or fails under PLENUM_REQUIRE
				}
			}
			db, d, err := cmdline.OpenDialect(name, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() }) // after the tables' drop
			b := bareOn(t, db, d)
			const n = 3000
			if err := fillers[name](t.Context(), b, b.names.Items, "q", n); err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(t.Context(), "SELECT id FROM "+b.names.Items+" ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			dayAgo := time.Now().Add(-24 * time.Hour)
			seen := 0
			var last time.Time
			for rows.Next() {
				var raw any
				if err := rows.Scan(&raw); err != nil {
					t.Fatal(err)
				}
				var id uuid.UUID
				switch v := raw.(type) {
				case []byte:
					if len(v) == 16 {
						copy(id[:], v)
					} else {
						id, err = uuid.ParseBytes(v)
					}
				case string:
					id, err = uuid.Parse(v)
				}
				if err != nil {
					t.Fatalf("id %v: %v", raw, err)
				}
				if id.Version() != 7 || id.Variant() != uuid.RFC4122 {
					t.Fatalf("id %s is version %d, variant %v: want a UUIDv7", id, id.Version(), id.Variant())
				}
				at := time.Unix(id.Time().UnixTime())
				if at.Before(dayAgo.Add(-time.Minute)) || at.After(dayAgo.Add(time.Minute)) || at.Before(last) {
					t.Fatalf("id %s is of %v, want a day ago (%v), after the one before (%v)", id, at, dayAgo, last)
				}
				last = at
				seen++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if seen != n {
				t.Errorf("%d rows filled, want %d", seen, n)
			}
		})
	}
}
