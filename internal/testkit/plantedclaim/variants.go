package plantedclaim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Variant is one planted dialect and what a refusal of it must say.
type Variant struct {
	// Name names the variant in subtests.
	Name    string
	Dialect dialect.Dialect
	// Seen is what the refusal's Seen must contain.
	Seen string
}

// Variants returns both planted wrappings of d.
func Variants(d dialect.Dialect) []Variant {
	return []Variant{
		{Name: "NoLock", Dialect: NoLock(d), Seen: "the claim locks nothing"},
		{Name: "Waits", Dialect: Waits(d), Seen: "it waits for the held row"},
	}
}

// Refused returns nil when err is the refusal of v: a
// *dialect.SkipLockedError naming v's dialect and saying what v does;
// otherwise what err is instead.
func (v Variant) Refused(err error) error {
	var sl *dialect.SkipLockedError
	switch {
	case err == nil:
		return fmt.Errorf("%s: no error, want a *dialect.SkipLockedError saying %q", v.Name, v.Seen)
	case !errors.As(err, &sl):
		return fmt.Errorf("%s: %v (%T), want a *dialect.SkipLockedError saying %q", v.Name, err, err, v.Seen)
	case sl.Dialect != v.Dialect.Name() || !strings.Contains(sl.Seen, v.Seen):
		return fmt.Errorf("%s: refused for %s: %q, want %s saying %q", v.Name, sl.Dialect, sl.Seen, v.Dialect.Name(), v.Seen)
	}
	return nil
}

// Prefix returns a fresh random table prefix on db and drops its tables
// when t ends.
func Prefix(t testing.TB, db *sql.DB, d dialect.Dialect) string {
	t.Helper()
	p := fmt.Sprintf("sk%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, p); err != nil {
			t.Errorf("drop the tables of prefix %q: %v", p, err)
		}
	})
	return p
}
