package conformance

import (
	"sync"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// checkT is the *testing.T of a guarantee's subtest, or of a subtest
// nested in it, that looks at the errors its failures carry (the values
// passed to Fatalf, Errorf and the like, before they become text) and
// notes the first one by which the database refused to serve: too many
// connections, access denied, unreachable. A guarantee whose subtest met
// one was not checked, whatever else failed after it: the database did
// nothing the guarantee forbids.
type checkT struct {
	*testing.T
	d       dialect.Describer
	refused *refusalNote // shared by a guarantee and its nested subtests
}

// refusalNote holds the first refusal a guarantee's subtest met.
type refusalNote struct {
	mu    sync.Mutex
	kind  dialect.Refusal
	cause error
}

// note records the first refusal among args.
func (c *checkT) note(args []any) {
	for _, a := range args {
		err, ok := a.(error)
		if !ok {
			continue
		}
		if k := dialect.RefusalOf(c.d, err); k != dialect.NotRefused {
			c.refused.mu.Lock()
			if c.refused.kind == dialect.NotRefused {
				c.refused.kind, c.refused.cause = k, err
			}
			c.refused.mu.Unlock()
			return
		}
	}
}

// first returns the first refusal met, or NotRefused and nil.
func (n *refusalNote) first() (dialect.Refusal, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kind, n.cause
}

// nested returns the checkT of a subtest t nested in c's.
func (c *checkT) nested(t *testing.T) *checkT {
	return &checkT{T: t, d: c.d, refused: c.refused}
}

// Error is testing.T's, noting a refusal among args.
func (c *checkT) Error(args ...any) {
	c.T.Helper()
	c.note(args)
	c.T.Error(args...)
}

// Errorf is testing.T's, noting a refusal among args.
func (c *checkT) Errorf(format string, args ...any) {
	c.T.Helper()
	c.note(args)
	c.T.Errorf(format, args...)
}

// Fatal is testing.T's, noting a refusal among args.
func (c *checkT) Fatal(args ...any) {
	c.T.Helper()
	c.note(args)
	c.T.Fatal(args...)
}

// Fatalf is testing.T's, noting a refusal among args.
func (c *checkT) Fatalf(format string, args ...any) {
	c.T.Helper()
	c.note(args)
	c.T.Fatalf(format, args...)
}
