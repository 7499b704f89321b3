package dialect

// TextBinder is an optional capability of a Dialect: the value to bind for
// text of any length written to a Text column where the statement uses the
// bind as an expression (a SELECT list, as in INSERT ... SELECT), not as a
// plain VALUES or SET value. The core finds it by type assertion; without
// it, the string itself is bound. Oracle implements it: a string over
// 4,000 bytes travels as LONG, which Oracle refuses in an expression, so it
// binds long text as a temporary CLOB instead. A dialect that implements it
// should also make Param(Text) give the bind the type it needs.
type TextBinder interface {
	// Text returns the value to bind for s.
	Text(s string) any
}

// TextArg returns the value to bind for s in a Text column's expression:
// d.Text(s) where d is a TextBinder, and s itself otherwise.
func TextArg(d Dialect, s string) any {
	if b, ok := d.(TextBinder); ok {
		return b.Text(s)
	}
	return s
}
