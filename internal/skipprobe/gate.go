package skipprobe

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
	"weak"
)

// gates holds one turn per pool (weak.Pointer[sql.DB] -> chan struct{}),
// dropped when the pool is collected.
var gates sync.Map

// turn waits, as long as ctx allows, until no other probe of this process
// runs on db, and returns the function that ends the turn. Each probe
// holds one connection while it asks for a second: probes started
// together on a pool of n connections (n workers starting at once) could
// otherwise each hold one and all wait for a second that never comes.
func turn(ctx context.Context, db *sql.DB) (func(), error) {
	key := weak.Make(db)
	g, loaded := gates.LoadOrStore(key, make(chan struct{}, 1))
	if !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { gates.Delete(k) }, key)
	}
	gate := g.(chan struct{})
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
