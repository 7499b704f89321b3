package dialect_test

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// wrapped wraps a dialect and passes its optional interfaces on.
type wrapped struct{ dialect.Dialect }

func (w wrapped) Unwrap() dialect.Dialect { return w.Dialect }

// looped unwraps to itself.
type looped struct{ dialect.Dialect }

func (l looped) Unwrap() dialect.Dialect { return l }

// hiding wraps a dialect and hides its optional interfaces.
type hiding struct{ dialect.Dialect }

func TestAs_FindsThroughWrappers(t *testing.T) {
	d := sqlite.Dialect()
	if _, ok := d.(dialect.UUIDLister); !ok {
		t.Fatal("sqlite's dialect is no UUIDLister")
	}
	if _, ok := dialect.As[dialect.UUIDLister](wrapped{wrapped{d}}); !ok {
		t.Error("As did not find the UUIDLister of a dialect wrapped twice")
	}
	if _, ok := dialect.As[dialect.UUIDLister](hiding{d}); ok {
		t.Error("As found the UUIDLister of a dialect whose wrapper hides it")
	}
	if _, ok := dialect.As[dialect.KeyLister](wrapped{d}); ok {
		t.Error("As found a KeyLister that neither the wrapper nor sqlite's dialect has")
	}
	if _, ok := dialect.As[dialect.KeyLister](looped{d}); ok {
		t.Error("As found a KeyLister through a wrapper that unwraps to itself")
	}
	if _, ok := dialect.As[dialect.UUIDLister](nil); ok {
		t.Error("As found a UUIDLister in no dialect")
	}
}
