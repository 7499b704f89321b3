package cmdline

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns text read from the database (a name, an error, a
// payload excerpt) as it may reach a terminal: s itself when every
// character in it prints as itself, else s quoted in Go's syntax
// (strconv.Quote), where control characters, bidirectional overrides,
// invalid UTF-8 and other characters that do not print are escaped
// ("\x1b", "\n", "\u202e"). Raw, such text could rewrite the terminal
// (escape sequences set its title or clear it), break the row it sits in,
// or reorder what is shown so that one name reads as another. Text that
// begins with a double quote is quoted too, so that a shown name that
// begins with one is always a quoted one. Every command prints untrusted
// text through it.
func Printable(s string) string {
	if s == "" || s[0] != '"' && printsAsItself(s) {
		return s
	}
	return strconv.Quote(s)
}

// PrintableLines is Printable for text of several lines, such as an
// error: each line is made printable on its own, so that the lines stay
// lines.
func PrintableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

// printsAsItself reports whether s is valid UTF-8 of printable
// characters only (strconv.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space).
func printsAsItself(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
