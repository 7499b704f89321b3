package storesql

import (
	"reflect"
	"sync"

	"github.com/plenumdb/plenum/dialect"
)

// exposed holds each function exposed, by its type.
var exposed sync.Map

// Expose makes f what Exposed[F] returns. Core calls it in its init for
// StoreOf and CoreTemplates, browse for BrowseTemplates.
func Expose[F any](f F) { exposed.Store(reflect.TypeFor[F](), f) }

// Exposed returns the function of type F exposed, and whether there is
// one: there is once the package that exposes it is linked in.
func Exposed[F any]() (F, bool) {
	v, ok := exposed.Load(reflect.TypeFor[F]())
	if !ok {
		var zero F
		return zero, false
	}
	f, ok := v.(F)
	return f, ok
}

// StoreOf gives what a package beside core reads a store S through; I, R
// and B are core's Item, Run and Barrier.
type StoreOf[S, I, R, B any] func(S) *Store[I, R, B]

// CoreTemplates gives every statement template core sends on a store of
// d opened with options O (core.Options), rendered as that store renders
// them, and a stand-in store of those options, with no database behind
// it, that renders statements as that store does. claims records what a
// dialect's Claim sends for a spec.
type CoreTemplates[O, I, R, B any] func(d dialect.Dialect, opts O, claims ClaimRecorder) (*Store[I, R, B], []Template, error)

// BrowseTemplates gives every statement template the browse package sends
// on s, a stand-in store that renders statements as a store of the same
// dialect and options does.
type BrowseTemplates[I, R, B any] func(s *Store[I, R, B]) []Template

// ClaimRecorder returns the statements d's Claim sends for spec, once
// with spec.Limit rows to take and once with none.
type ClaimRecorder func(d dialect.Dialect, spec dialect.ClaimSpec) []string

// Template is one statement template a store sends, as the catalog lists
// it.
type Template struct {
	// Name names the template ("claim", "item.get", "browse.items", ...).
	Name string
	// Largest is the largest size the store sends it at: 0 for a template
	// that takes no size.
	Largest int
	// Kinds, when positive, is the second count the statements' text
	// depends on: the kinds whose attempt limits a claim carries (its
	// core.ClaimParams.MaxAttempts), or the lanes whose items a claim of
	// keyed items reads; one template for each count, from 1 to the
	// most, each sized by its first count (the rows taken, the items
	// read of each lane).
	Kinds int
	// Render gives the statements it sends at size n (0 for a template
	// that takes none), as sent.
	Render func(n int) []string
}
