// Package fault holds the fault injection points of the core and the
// runtime: named places, compiled in, where a test or the chaos harness can
// make the code panic, return an error, kill its own process or stall.
//
// An injection point is a call to Hit at one of the Points. With no rule
// installed anywhere in the process, Hit is one atomic load of a nil pointer
// and returns nil: production code pays nothing else.
//
// Rules come in two scopes. Set installs a rule for the whole process: for
// a worker process the chaos harness starts (Parse reads the harness's
// spec; the core never reads the environment). With installs a rule for
// the contexts derived from one context: for tests that run in parallel in
// one process, each of which must see only its own faults. A rule With
// installed takes precedence over one Set installed for the same point.
//
// Several points sit inside a transaction: an error or a panic there rolls
// the whole transaction back, a kill leaves the database to roll it back
// when the connection drops. Either way both halves of what the point
// separates are undone together.
package fault
