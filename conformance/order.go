package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 4: the items of one enqueue, of one priority and available at
// once, are claimed in the order they were given, also when the enqueue
// takes several statements (more rows than one statement holds, or
// payloads past the database's packet bound) and the keys sort otherwise:
// descending keys, random keys, keyed and keyless rows mixed.
func testEnqueueOrderAcrossStatements(e *env) {
	const n = 1200 // more than the 500 rows of one insert statement
	wide := strings.Repeat("w", 60<<10)
	for _, tc := range []struct {
		name string
		key  func(i int) string
		// payload, when set, makes rows big enough to split statements by
		// size where the database bounds it.
		payload func(i int) string
		n       int
	}{
		{"DescendingKeys", func(i int) string { return fmt.Sprintf("k%05d", n-i) }, nil, n},
		{"RandomKeys", func(int) string { return fmt.Sprintf("k%016x", rand.Uint64()) }, nil, n},
		{"SomeKeyless", func(i int) string {
			if i%3 == 0 {
				return ""
			}
			return fmt.Sprintf("k%05d", n-i)
		}, nil, n},
		{"BigPayloads", func(i int) string { return fmt.Sprintf("k%05d", 200-i) },
			func(i int) string { return fmt.Sprintf(`{"i":%d,"w":"%s"}`, i, wide) }, 120},
	} {
		e.run(tc.name, func(e *env) {
			const queue = "fifo"
			specs := make([]core.ItemSpec, tc.n)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: queue, Key: tc.key(i)}
				if tc.payload != nil {
					specs[i].Payload = []byte(tc.payload(i))
				}
			}
			var given []uuid.UUID
			for _, x := range e.enqueue(e.s, specs...) {
				given = append(given, x.ID)
			}
			owner := e.owner(e.s)
			var taken []uuid.UUID
			for len(taken) < len(given) {
				cs := e.claim(e.s, owner, queue, 100)
				if len(cs) == 0 {
					e.t.Fatalf("claimed %d of %d items, then nothing", len(taken), len(given))
				}
				taken = append(taken, ids(cs)...)
			}
			if !slices.Equal(taken, given) {
				wrong, first := 0, -1
				for i := range taken {
					if taken[i] != given[i] {
						wrong++
						if first < 0 {
							first = i
						}
					}
				}
				e.t.Fatalf("%d of %d items of one enqueue were claimed out of the order given (first at claim #%d)", wrong, len(given), first+1)
			}
		})
	}
}
