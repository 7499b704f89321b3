package core

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// validName checks a name the store is about to write: a queue, kind or
// key, a barrier's, run's, signal's or schedule's name, a halt reason, an
// owner's name or host. Besides what lookupName checks, it refuses the
// characters that make a name print as something else: C0 and C1
// controls (an escape sequence rewrites the terminal that shows it, a
// newline breaks the row it sits in), bidirectional overrides and
// isolates (they reorder the text on screen, so that one name reads as
// another), and the line and paragraph separators. Names are read by
// people (inspect, the dashboard, logs) as much as by programs, and a
// name that cannot be shown as it is cannot be told apart from others.
// Every other character is allowed, the bidirectional marks (U+200E,
// U+200F, U+061C) that right-to-left names need included.
func validName(field, v string, max int, required bool) error {
	if err := lookupName(field, v, max, required); err != nil {
		return err
	}
	if i := strings.IndexFunc(v, unshowable); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return invalid(field, "holds %U at byte %d: names may not hold control characters, bidirectional overrides or isolates, or line separators", r, i)
	}
	return nil
}

// lookupName checks a name that selects rows the store already holds (a
// claim's queue, a browse filter, a count, a pause): text that every
// database stores (valid UTF-8, no NUL byte) of at most max characters.
// It does not refuse what validName refuses beyond that, so that rows
// written before validName's rules (by an older version, or a writer
// outside the store) can still be found, drained and paused.
func lookupName(field, v string, max int, required bool) error {
	switch {
	case v == "" && required:
		return invalid(field, "must not be empty")
	case !utf8.ValidString(v):
		return invalid(field, "is not valid UTF-8")
	case utf8.RuneCountInString(v) > max:
		return invalid(field, "longer than %d characters", max)
	case strings.ContainsRune(v, 0):
		return invalid(field, "contains a NUL byte")
	}
	return nil
}

// unshowable reports whether r may not appear in a name (see validName).
func unshowable(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL and C1
		return true
	case r >= '\u202a' && r <= '\u202e': // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= '\u2066' && r <= '\u2069': // LRI, RLI, FSI, PDI
		return true
	case r == '\u2028' || r == '\u2029': // line and paragraph separators
		return true
	}
	return false
}
