package dialect

// Wrapper is a Dialect that wraps another, to count or time its
// statements say, and passes on the optional interfaces of the one it
// wraps that shape statements (UUIDLister, KeyLister, RowLocker, Purger):
// the core finds them with As, through Unwrap, where the wrapper itself
// lacks them, so that a store over the wrapper sends the statements a
// store over the wrapped dialect sends. A wrapper that hides one of them
// on purpose does not implement Wrapper.
type Wrapper interface {
	// Unwrap returns the dialect wrapped.
	Unwrap() Dialect
}

// maxWraps bounds the dialects As looks through, so that a wrapper that
// unwraps to itself, or to a ring of wrappers, ends the search.
const maxWraps = 16

// As returns d as a T, or the first dialect d wraps (Wrapper) that is
// one, looking through at most 16 wrappers, and whether it found one.
func As[T any](d Dialect) (T, bool) {
	for range maxWraps + 1 {
		if d == nil {
			break
		}
		if t, ok := d.(T); ok {
			return t, true
		}
		w, ok := d.(Wrapper)
		if !ok {
			break
		}
		d = w.Unwrap()
	}
	var none T
	return none, false
}
