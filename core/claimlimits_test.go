package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// limitsOf maps n kinds to limit.
func limitsOf(n, limit int) map[string]int {
	out := make(map[string]int, n)
	for i := range n {
		out[fmt.Sprint("kind", i)] = limit
	}
	return out
}

// TestClaim_RefusesBadKindLimits checks that a claim's attempt limits are
// refused, naming the field, past MaxClaimKinds kinds, outside [1,
// MaxAttemptsCeiling], or for a kind no item could have; MaxClaimKinds
// kinds are taken.
func TestClaim_RefusesBadKindLimits(t *testing.T) {
	t.Parallel()
	o := openStore(t, sqlite.Dialect(), core.Options{})
	claim := func(limits map[string]int) error {
		_, err := o.store.Claim(t.Context(), core.ClaimParams{Queue: "q", Owner: o.owner, Limit: 1, Lease: time.Minute, MaxAttempts: limits})
		return err
	}
	cases := []struct {
		name   string
		limits map[string]int
		field  string
	}{
		{"too many kinds", limitsOf(core.MaxClaimKinds+1, 3), "MaxAttempts"},
		{"limit 0", map[string]int{"a": 0}, `MaxAttempts["a"]`},
		{"negative limit", map[string]int{"a": -1}, `MaxAttempts["a"]`},
		{"limit above the ceiling", map[string]int{"a": core.MaxAttemptsCeiling + 1}, `MaxAttempts["a"]`},
		{"empty kind", map[string]int{"": 3}, `MaxAttempts[""]`},
		{"kind too long", map[string]int{strings.Repeat("k", migrations.MaxKindLen+1): 3}, `MaxAttempts["` + strings.Repeat("k", migrations.MaxKindLen+1) + `"]`},
		{"kind not UTF-8", map[string]int{"k\xff": 3}, `MaxAttempts["k\xff"]`},
	}
	for _, c := range cases {
		var in *core.InputError
		if err := claim(c.limits); !errors.As(err, &in) || in.Field != c.field {
			t.Errorf("%s: %v, want an *InputError of field %s", c.name, err, c.field)
		}
	}
	if _, err := o.store.Enqueue(t.Context(), core.ItemSpec{Queue: "q", Kind: "kind63"}); err != nil {
		t.Fatal(err)
	}
	cs, err := o.store.Claim(t.Context(), core.ClaimParams{Queue: "q", Owner: o.owner, Limit: 1, Lease: time.Minute, MaxAttempts: limitsOf(core.MaxClaimKinds, 3)})
	if err != nil || len(cs) != 1 || cs[0].MaxAttempts != 3 {
		t.Fatalf("claim with %d kinds' limits: %v, %v; want one claim of MaxAttempts 3", core.MaxClaimKinds, cs, err)
	}
}
