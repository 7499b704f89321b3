package core

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Subscription receives the store's wake-ups for one queue: a value on C
// each time items may have become available there. Wake-ups that arrive
// while one is already pending coalesce into it, so C never holds more
// than one and the sender never waits. A wake-up is a hint, never a
// promise: the receiver still polls, because wake-ups from other
// processes can be lost (see Store.Subscribe).
type Subscription struct {
	// C receives the wake-ups. It is never closed.
	C <-chan struct{}

	ch    chan struct{}
	queue string
	h     *wakeHub
	once  sync.Once
}

// Close ends the subscription: C receives nothing more. The store's
// listener, if it runs, stops with the last subscription. Close may be
// called more than once.
func (sub *Subscription) Close() {
	sub.once.Do(func() { sub.h.remove(sub) })
}

// Subscribe returns a subscription to queue's wake-ups. C receives one
// when, in this process, through this store:
//
//   - Enqueue commits an item in queue that is available at once (a
//     delayed item wakes nobody: it is found by polling once it is due);
//   - a Fence whose handle enqueued such items (Fenced.Enqueue), or added
//     children to a barrier (Fenced.AddChildren, Expand), commits;
//   - a transaction that fired a barrier commits, for its join's queue;
//   - Release with no delay commits;
//   - Wake is called with queue.
//
// EnqueueTx cannot know when the caller's transaction commits: it wakes
// nobody in this process by itself (call Wake after the commit, or let the
// workers poll), except through the dialect's notifier below, whose
// notification is sent at the caller's commit.
//
// When the dialect is a dialect.Notifier (PostgreSQL) and
// Options.DisableNotify is not set, every transaction above also sends a
// notification that commits with it, and while any subscription is open
// the store listens on a dedicated connection of its *sql.DB (one
// connection out of the pool, for as long as anyone subscribes). Items
// enqueued by other processes, and EnqueueTx's items, then wake this
// process's subscribers too. The listener reconnects with a backoff when
// its connection is lost, and wakes every subscriber once it listens again,
// since notifications sent meanwhile were lost.
//
// A subscription costs nothing to the enqueuers while nobody subscribes,
// and a wake-up is one non-blocking send per subscriber. Close it when
// done.
func (s *Store) Subscribe(queue string) (*Subscription, error) {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, true); err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	sub := &Subscription{C: ch, ch: ch, queue: queue, h: &s.hub}
	s.hub.add(s, sub)
	return sub, nil
}

// Notifies reports whether the store sends its wake-ups to other processes
// and listens for theirs (the dialect is a dialect.Notifier and
// Options.DisableNotify is not set): while anyone subscribes, its listener
// then holds one connection of the *sql.DB's pool.
func (s *Store) Notifies() bool { return s.notifier != nil }

// Wake sends a wake-up to this process's subscribers of each queue, as an
// enqueue would: after the commit of an EnqueueTx, say. It never blocks,
// and sends nothing to other processes.
func (s *Store) Wake(queues ...string) { s.hub.wake(queues) }

// Listen's pace after a lost session: from listenBackoffMin, doubling up to
// listenBackoffMax, with jitter; back to the minimum once it listens again.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 10 * time.Second
)

// wakeHub routes wake-ups to subscriptions, and runs the listener while
// there are any.
type wakeHub struct {
	mu     sync.RWMutex
	subs   map[string]map[*Subscription]struct{}
	n      int
	cancel context.CancelFunc // the running listener's, or nil
}

func (h *wakeHub) add(s *Store, sub *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[string]map[*Subscription]struct{}{}
	}
	if h.subs[sub.queue] == nil {
		h.subs[sub.queue] = map[*Subscription]struct{}{}
	}
	h.subs[sub.queue][sub] = struct{}{}
	h.n++
	if h.n == 1 && s.notifier != nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.cancel = cancel
		go s.listen(ctx)
	}
}

func (h *wakeHub) remove(sub *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[sub.queue], sub)
	if len(h.subs[sub.queue]) == 0 {
		delete(h.subs, sub.queue)
	}
	h.n--
	if h.n == 0 && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

// wake sends one non-blocking wake-up to every subscriber of each queue.
func (h *wakeHub) wake(queues []string) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.n == 0 {
		return
	}
	for _, q := range queues {
		for sub := range h.subs[q] {
			poke(sub.ch)
		}
	}
}

// wakeAll wakes every subscriber of every queue.
func (h *wakeHub) wakeAll() {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, subs := range h.subs {
		for sub := range subs {
			poke(sub.ch)
		}
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// listen runs the dialect's Listen until ctx ends, again after a backoff
// each time the session is lost.
func (s *Store) listen(ctx context.Context) {
	delay := listenBackoffMin
	for {
		err := s.notifier.Listen(ctx, s.db, s.channel, func() {
			delay = listenBackoffMin
			s.listens.Add(1)
			// Whatever was notified while nobody listened is lost.
			s.hub.wakeAll()
		}, func(queue string) { s.hub.wake([]string{queue}) })
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the listener returned")
		}
		if isClosed(err) {
			s.log.Warn("plenum: listening for wake-ups: the database is closed; polling only", "err", err)
			return
		}
		s.log.Warn("plenum: listening for wake-ups: reconnecting", "in", delay, "err", err)
		t := time.NewTimer(delay/2 + time.Duration(rand.Int64N(int64(delay))))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, listenBackoffMax)
	}
}

// storeTx is a transaction of the store's own (inTx): it gathers what
// others hear of once it commits, and only then: the queues its statements
// made items available in (to wake), those it already notified, and the
// barriers it fired (for a trace on the context).
type storeTx struct {
	dialect.Tx
	queues   []string
	notified map[string]bool
	fired    []FiredBarrier
}

// itemsReady records, in the transaction q, that items may now be available
// in queues: the dialect's notification (sent at commit) and, in a
// transaction of the store's own, the wake-up of this process's
// subscribers once it commits.
func (s *Store) itemsReady(ctx context.Context, q dialect.Querier, queues ...string) error {
	w, _ := q.(*storeTx)
	for _, queue := range queues {
		if w != nil {
			if w.notified[queue] {
				continue
			}
			if w.notified == nil {
				w.notified = map[string]bool{}
			}
			w.notified[queue] = true
			w.queues = append(w.queues, queue)
		}
		if s.notifier != nil {
			if err := s.notifier.Notify(ctx, q, s.channel, queue); err != nil {
				return err
			}
		}
	}
	return nil
}

// readyQueues returns the distinct queues of the specs that are available
// at once, in the order met.
func readyQueues(specs []ItemSpec) []string {
	var out []string
	var seen map[string]bool
	for i := range specs {
		q := specs[i].Queue
		if specs[i].Delay > 0 || (len(out) > 0 && out[len(out)-1] == q) || seen[q] {
			continue
		}
		if seen == nil && len(out) > 0 {
			seen = map[string]bool{out[0]: true}
		}
		if seen != nil {
			seen[q] = true
		}
		out = append(out, q)
	}
	return out
}
