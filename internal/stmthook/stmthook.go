// Package stmthook lets Plenum's own tests fail a migration at a chosen
// statement, on a real database, to prove that a migration which stopped
// half way is completed by the next run. It is internal: users cannot
// reach it.
package stmthook

import "context"

type key struct{}

// With returns ctx carrying f, which the migrator calls before each
// statement it runs; an error from f fails the migration there, as the
// database failing that statement would.
func With(ctx context.Context, f func(stmt string) error) context.Context {
	return context.WithValue(ctx, key{}, f)
}

// Before calls the function ctx carries, if any, with stmt.
func Before(ctx context.Context, stmt string) error {
	if f, ok := ctx.Value(key{}).(func(string) error); ok && f != nil {
		return f(stmt)
	}
	return nil
}
