package core_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// inListSpy is SQLite's dialect with a small MaxInList (Oracle's is
// 1,000), recording the largest IN list, insert batch and claim it sees.
type inListSpy struct {
	dialect.Dialect
	max                       int
	mu                        sync.Mutex
	inList, inserted, claimed int
}

func (s *inListSpy) Capabilities() dialect.Capabilities {
	c := s.Dialect.Capabilities()
	c.MaxInList = s.max
	return c
}

func (s *inListSpy) Rebind(q string) string {
	s.mu.Lock()
	for _, part := range strings.Split(q, " IN (")[1:] {
		if end := strings.IndexByte(part, ')'); end >= 0 {
			s.inList = max(s.inList, strings.Count(part[:end], "?"))
		}
	}
	s.mu.Unlock()
	return s.Dialect.Rebind(q)
}

func (s *inListSpy) InsertIgnore(table string, columns []string, row string, n int, conflict []string) string {
	s.mu.Lock()
	s.inserted = max(s.inserted, n)
	s.mu.Unlock()
	return s.Dialect.InsertIgnore(table, columns, row, n, conflict)
}

func (s *inListSpy) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	s.mu.Lock()
	s.claimed = max(s.claimed, spec.Limit)
	s.mu.Unlock()
	return s.Dialect.Claim(ctx, q, spec)
}

// A dialect's MaxInList (Oracle's 1,000) bounds the core's insert batches
// (whose duplicates are looked up by an IN list), its claims (read back by
// an IN list on Oracle and MySQL) and the IN lists it writes on the way,
// however many items one call names.
func TestMaxInList_SplitsBatchesAndClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy := &inListSpy{Dialect: sqlite.Dialect(), max: 3}
	o := openStore(t, spy, core.Options{})
	s, owner := o.store, o.owner
	var specs []core.ItemSpec
	for i := range 10 {
		specs = append(specs, core.ItemSpec{Queue: "q", Key: fmt.Sprint("k", i%8)})
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	claims, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 3 {
		t.Fatalf("claimed %d, want the 3 MaxInList allows", len(claims))
	}
	more, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var done []core.Completion
	for _, c := range append(claims, more...) {
		done = append(done, core.Completion{Claim: c})
	}
	if lost, err := s.CompleteMany(ctx, done); err != nil || len(lost) != 0 {
		t.Fatalf("CompleteMany: lost %v, %v", lost, err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if spy.inList > 3 || spy.inserted > 3 || spy.claimed > 3 {
		t.Fatalf("largest IN list %d, insert batch %d, claim %d: over MaxInList 3", spy.inList, spy.inserted, spy.claimed)
	}
	if spy.inList == 0 || spy.inserted == 0 {
		t.Fatal("the spy saw no IN list or insert")
	}
}
