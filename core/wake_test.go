package core_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// woken reports whether sub has a wake-up pending, taking it. Wake-ups of
// the store's own transactions are sent before the call that committed
// returns, so a check right after it is exact: no waiting, no timing.
func woken(sub *core.Subscription) bool {
	select {
	case <-sub.C:
		return true
	default:
		return false
	}
}

func subscribe(t *testing.T, s *core.Store, queue string) *core.Subscription {
	t.Helper()
	sub, err := s.Subscribe(queue)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// TestSubscribe_WokenByTheStoresCommits checks which of this store's
// writes wake a queue's subscribers, and that each wake-up comes only
// once the transaction committed: an enqueue of an available item (not a
// delayed one, not another queue's), a fence's enqueue after the fence
// commits (never one that rolled back), EnqueueTx only through Wake, a
// fan-out's children and a fired barrier's join.
func TestSubscribe_WokenByTheStoresCommits(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	ctx := context.Background()
	s := b.store
	q, other, kids, join := subscribe(t, s, "q"), subscribe(t, s, "other"), subscribe(t, s, "kids"), subscribe(t, s, "join")
	again := subscribe(t, s, "q") // a second subscriber of the same queue

	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if !woken(q) || !woken(again) {
		t.Fatal("Enqueue returned without waking both subscribers of its queue")
	}
	if woken(other) {
		t.Fatal("an enqueue in q woke a subscriber of another queue")
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k", Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if woken(q) {
		t.Fatal("a delayed item woke its queue: nothing could be claimed")
	}
	// Wake-ups coalesce: many enqueues, nobody reading, no enqueuer waits.
	for range 5 {
		if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	if !woken(q) || woken(q) {
		t.Fatal("five enqueues left other than one pending wake-up")
	}
	woken(again)

	// A fence wakes once it commits, not while fn runs, and not at all
	// when fn's error rolls it back.
	c := claimOne(t, b, "parent")
	held, err := s.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
			return err
		}
		if woken(q) {
			return errors.New("woken before the fence committed")
		}
		return nil
	})
	if err != nil || !held {
		t.Fatalf("fence: held %v, %v", held, err)
	}
	if !woken(q) {
		t.Fatal("a fence that enqueued committed without waking the queue")
	}
	boom := errors.New("roll back")
	if _, err := s.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("fence: %v, want %v", err, boom)
	}
	if woken(q) {
		t.Fatal("a fence that rolled back woke the queue")
	}

	// EnqueueTx: the store cannot see the caller's commit; Wake is the
	// caller's way to say it happened.
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if woken(q) {
		t.Fatal("EnqueueTx woke the queue before the caller could commit")
	}
	s.Wake("q")
	if !woken(q) {
		t.Fatal("Wake did not wake the queue")
	}

	// A fan-out wakes its children's queue; their completion fires the
	// barrier, which wakes the join's queue.
	parent := claimOne(t, b, "fan")
	if _, err := s.Expand(ctx, parent, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "join", Kind: "j"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "1", Queue: "kids"}, {Key: "2", Queue: "kids"}}, Done: true}, nil
		},
		CompleteParent: true,
	}); err != nil {
		t.Fatal(err)
	}
	if !woken(kids) {
		t.Fatal("Expand committed children without waking their queue")
	}
	if woken(join) {
		t.Fatal("the join's queue was woken before the barrier fired")
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "kids", Owner: b.owner, Limit: 10, Lease: time.Minute})
	if err != nil || len(cs) != 2 {
		t.Fatalf("claimed %d children, %v", len(cs), err)
	}
	if _, err := s.CompleteMany(ctx, []core.Completion{{Claim: cs[0]}, {Claim: cs[1]}}); err != nil {
		t.Fatal(err)
	}
	if !woken(join) {
		t.Fatal("the barrier fired without waking its join's queue")
	}

	// Release gives an item back: at once wakes, later does not.
	back := claimOne(t, b, "q")
	woken(q)
	woken(again)
	if err := s.Release(ctx, back, time.Hour); err != nil {
		t.Fatal(err)
	}
	if woken(q) {
		t.Fatal("a release for later woke the queue")
	}
	back = claimOne(t, b, "q")
	woken(q)
	woken(again)
	if err := s.Release(ctx, back, 0); err != nil {
		t.Fatal(err)
	}
	if !woken(q) {
		t.Fatal("a release for now did not wake the queue")
	}
	woken(again)

	// A closed subscription receives nothing more.
	q.Close()
	q.Close()
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if woken(q) || !woken(again) {
		t.Fatal("after Close: the closed subscription was woken, or the other one was not")
	}
	if _, err := s.Subscribe(""); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("Subscribe(\"\"): %v, want ErrInvalidInput", err)
	}
}

// bus is an in-memory stand-in for a database's notifications: what
// Notify sends reaches every Listen on the channel. kill ends every
// listening session, as a lost connection would.
type bus struct {
	mu        sync.Mutex
	listeners map[chan string]string // -> channel
	kills     []chan struct{}
	sent      []string
}

func (b *bus) Notify(_ context.Context, _ dialect.Querier, channel, payload string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, channel+"/"+payload)
	for l, ch := range b.listeners {
		if ch == channel {
			select {
			case l <- payload:
			default:
			}
		}
	}
	return nil
}

func (b *bus) Listen(ctx context.Context, _ *sql.DB, channel string, ready func(), deliver func(string)) error {
	l, kill := make(chan string, 16), make(chan struct{})
	b.mu.Lock()
	if b.listeners == nil {
		b.listeners = map[chan string]string{}
	}
	b.listeners[l] = channel
	b.kills = append(b.kills, kill)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.listeners, l)
		b.mu.Unlock()
	}()
	ready()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-kill:
			return errors.New("connection lost")
		case p := <-l:
			deliver(p)
		}
	}
}

func (b *bus) kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.kills {
		close(k)
	}
	b.kills = nil
}

func (b *bus) listening() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.listeners)
}

// notifying is SQLite with a Notifier on an in-memory bus.
type notifying struct {
	dialect.Dialect
	*bus
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after 10s: %s", what)
		}
	}
}

// TestSubscribe_ListensThroughTheDialectsNotifier checks the core's side
// of a dialect.Notifier: transactions notify on the tables' channel, one
// listener runs while anyone subscribes and none after, another store's
// enqueue wakes this one's subscribers, a lost session is listened on
// again (every subscriber woken, since notifications were lost), and
// Options.DisableNotify sends and listens for nothing.
func TestSubscribe_ListensThroughTheDialectsNotifier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "notify.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bus{}
	d := notifying{sqlite.Dialect(), b}
	open := func(opts core.Options) *core.Store {
		opts.Migrate, opts.Prefix = true, "wake_"
		s, err := core.Open(ctx, db, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	here, there, quiet := open(core.Options{}), open(core.Options{}), open(core.Options{DisableNotify: true})

	if _, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if len(b.sent) != 1 || b.sent[0] != "wake_items/q" {
		t.Fatalf("notifications sent: %q, want [wake_items/q]", b.sent)
	}
	if b.listening() != 0 {
		t.Fatal("a listener runs with no subscription open")
	}

	sub := subscribe(t, here, "q")
	eventually(t, "no listener after Subscribe", func() bool { return b.listening() == 1 && here.Stats().Listens == 1 })
	eventually(t, "listening did not wake the subscriber", func() bool { return woken(sub) })
	second := subscribe(t, here, "other")
	if b.listening() != 1 {
		t.Fatalf("%d listeners for two subscriptions of one store, want 1", b.listening())
	}
	woken(second)

	if _, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "another store's enqueue did not wake the subscriber", func() bool { return woken(sub) })

	b.kill()
	eventually(t, "the lost session was not listened on again", func() bool { return here.Stats().Listens == 2 && b.listening() == 1 })
	eventually(t, "listening again did not wake every subscriber", func() bool { return woken(sub) })
	eventually(t, "listening again did not wake every subscriber", func() bool { return woken(second) })
	if _, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "after reconnecting, another store's enqueue did not wake the subscriber", func() bool { return woken(sub) })

	sub.Close()
	second.Close()
	eventually(t, "the listener still runs after the last subscription closed", func() bool { return b.listening() == 0 })

	n := len(b.sent)
	if _, err := quiet.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	qs := subscribe(t, quiet, "q")
	time.Sleep(50 * time.Millisecond)
	if len(b.sent) != n || b.listening() != 0 || quiet.Stats().Listens != 0 {
		t.Fatalf("with DisableNotify: %d notifications sent, %d listening, %d listens; want none", len(b.sent)-n, b.listening(), quiet.Stats().Listens)
	}
	qs.Close()
}
