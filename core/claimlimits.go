package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/plenumdb/plenum/migrations"
)

// MaxClaimKinds bounds how many kinds one claim's ClaimParams.MaxAttempts
// may list: each binds three values into the claim statement.
const MaxClaimKinds = 64

// validClaimLimits checks a claim's attempt limits: at most MaxClaimKinds
// kinds, each a name the store could hold, each limit within [1,
// MaxAttemptsCeiling].
func validClaimLimits(limits map[string]int) error {
	if len(limits) > MaxClaimKinds {
		return invalid("MaxAttempts", "%d kinds, at most %d", len(limits), MaxClaimKinds)
	}
	for _, kind := range slices.Sorted(maps.Keys(limits)) {
		// The field is named only for a refusal: a worker claims with the
		// same valid limits on every poll.
		field := func() string { return fmt.Sprintf("MaxAttempts[%q]", kind) }
		if lookupName("kind", kind, migrations.MaxKindLen, true) != nil {
			return lookupName(field(), kind, migrations.MaxKindLen, true)
		}
		if n := limits[kind]; n < 1 || n > MaxAttemptsCeiling {
			return invalid(field(), "%d is outside [1, %d]", n, MaxAttemptsCeiling)
		}
	}
	return nil
}

// claimLimitsSet is the assignment a claim with limits of k kinds adds to
// its Set: each claimed row of one of the kinds whose stored max_attempts
// is above that kind's limit takes the limit, and every other row keeps
// its own. A CASE rather than LEAST or MIN, which the dialects spell
// differently; each branch binds the kind and the limit twice.
func claimLimitsSet(k int) string {
	var b strings.Builder
	b.WriteString(", max_attempts = CASE")
	for range k {
		b.WriteString(" WHEN kind = ? AND max_attempts > ? THEN ?")
	}
	b.WriteString(" ELSE max_attempts END")
	return b.String()
}

// claimLimitsArgs are claimLimitsSet's arguments, the kinds in sorted
// order, so that one set of limits always sends one statement text.
func claimLimitsArgs(limits map[string]int) []any {
	out := make([]any, 0, 3*len(limits))
	for _, kind := range slices.Sorted(maps.Keys(limits)) {
		n := limits[kind]
		out = append(out, kind, n, n)
	}
	return out
}
