package cmdline

import (
	"bytes"
	"errors"
	"testing"
)

// Text that prints as itself is left alone; anything else is quoted with
// its unprintable characters escaped, so that nothing read from the
// database reaches the terminal raw.
func TestPrintable_EscapesWhatDoesNotPrint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"mail", "mail"},
		{"página ✓ a b", "página ✓ a b"},
		{`back\slash`, `back\slash`},
		{"esc\x1b]0;pwned\x07\x1b[31mRED", `"esc\x1b]0;pwned\a\x1b[31mRED"`},
		{"nl\nq\tx", `"nl\nq\tx"`},
		{"c1\u0085", `"c1\u0085"`},
		{"rlo\u202etxt", `"rlo\u202etxt"`},
		{"iso\u2066x\u2069", `"iso\u2066x\u2069"`},
		{"bad\xff", `"bad\xff"`},
		{"nbsp\u00a0", `"nbsp\u00a0"`},
		{`"quoted"`, `"\"quoted\""`},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%+q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// An error printed by the command line keeps its lines, with each line's
// unprintable characters escaped.
func TestExitCode_PrintsErrorsEscaped(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	if code := ExitCode(&w, errors.New("read items: queue esc\x1b[2J\nsecond line")); code != ExitFailure {
		t.Errorf("exit code %d, want %d", code, ExitFailure)
	}
	if want := "plenum: \"read items: queue esc\\x1b[2J\"\nsecond line\n"; w.String() != want {
		t.Errorf("printed %q, want %q", w.String(), want)
	}
}
