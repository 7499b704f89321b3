package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// Worker runs handlers on the items it claims from its queues. Create it
// with New, register handlers with Handle or HandleFunc, then Start it;
// Stop it to shut down gracefully. It is safe for concurrent use.
type Worker struct {
	store *core.Store
	cfg   Config
	log   *slog.Logger
	// middleware is Config.Middleware chained around the handler, nil
	// without any; itemMetadata reads the claimed items' metadata for
	// it, nil unless some middleware asked for it.
	middleware   HandlerFunc
	itemMetadata func(ctx context.Context, ids ...uuid.UUID) (map[uuid.UUID]core.Metadata, error)

	mu       sync.Mutex
	handlers map[string]*handler
	regErrs  []error
	started  bool
	owner    uuid.UUID
	lease    time.Duration
	// limits are the attempt limits of the kinds that set one, passed
	// with every claim (core.ClaimParams.MaxAttempts); set at Start.
	limits  map[string]int
	running map[uuid.UUID]*run
	// killed, once set, is the cause every running and new handler
	// context is cancelled with.
	killed error
	err    error

	base     context.Context // the worker's own calls; cancelled last
	cancel   context.CancelFunc
	bg       context.Context // heartbeat, watcher, maintenance
	bgCancel context.CancelFunc
	// claims is the claim loops' calls to Claim: cancelled when Stop's
	// context ends with a claim still in flight, so that a claim stuck in
	// the database does not hold Stop past its deadline.
	claims       context.Context
	cancelClaims context.CancelFunc

	claimStop     chan struct{}
	claimStopOnce sync.Once
	stopOnce      sync.Once
	done          chan struct{}

	loops       sync.WaitGroup // claim loops
	handlersRun sync.WaitGroup // handler goroutines
	background  sync.WaitGroup // heartbeat, watcher, maintenance
	completions chan *completion
	completed   chan struct{} // closed when the completer has flushed
	// flow counts the runs on their way to an outcome, for the completer.
	flow flow
	// linger is completeLinger (longer in the completer's own tests).
	linger time.Duration
	// landWait is landWait (longer in the claim loop's own tests).
	landWait time.Duration
	// completeMany is the store's CompleteMany (a test's stand-in in the
	// completer's own tests). It must not keep cs once it returns: flush
	// clears the slice and reuses it (completionBufs).
	completeMany func(ctx context.Context, cs []core.Completion) ([]uuid.UUID, error)
	// lost is the store's Lost (a test's stand-in in the watcher's).
	lost func(ctx context.Context, cs []core.Claim) ([]uuid.UUID, error)
	// claim is the store's Claim (wrapped by the claim loop's own tests,
	// which count claims).
	claim func(ctx context.Context, p core.ClaimParams) ([]core.Claim, error)
	// clock reads the database clock, for the waits of queues with flow
	// keys.
	clock dbClock
}

// New returns a worker on store configured by cfg. It checks cfg, and
// that the pool of store's *sql.DB may open the connections the worker
// needs (MinOpenConns), and touches no database: Start registers the
// worker.
func New(store *core.Store, cfg Config) (*Worker, error) {
	if store == nil {
		return nil, configErr("store", "nil *core.Store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(store); err != nil {
		return nil, err
	}
	if err := checkPool(store, cfg); err != nil {
		return nil, err
	}
	w := &Worker{
		store:       store,
		cfg:         cfg,
		log:         cfg.Logger,
		handlers:    map[string]*handler{},
		running:     map[uuid.UUID]*run{},
		claimStop:   make(chan struct{}),
		done:        make(chan struct{}),
		completions: make(chan *completion),
		completed:   make(chan struct{}),
		linger:      completeLinger,
		landWait:    landWait,
	}
	w.completeMany, w.lost, w.claim = store.CompleteMany, store.Lost, store.Claim
	if len(cfg.Middleware) > 0 {
		w.middleware = chain(cfg.Middleware, handlerCall)
	}
	if wantsMetadata(cfg.Middleware) {
		w.itemMetadata = store.ItemMetadata
	}
	return w, nil
}

// DefaultTimeout returns the Timeout of the kinds registered without
// one: Config.DefaultKind.Timeout, or its default.
func (w *Worker) DefaultTimeout() time.Duration { return w.cfg.DefaultKind.Timeout }

// Start proves that the store's claim skips the items another session
// holds (core.Store.ProveSkipLocked: a *dialect.SkipLockedError where it
// does not, and the worker does not start), registers the worker as an
// owner and starts claiming, heartbeating and (unless
// Config.ReapInterval is negative) reaping. It returns once the
// worker runs. ctx bounds the start only (its values, not its end, pass on
// to the worker's work): the worker runs until Stop, which is what decides
// how long running handlers get to finish, or until it stops itself after
// losing its owner (Done, Err). A worker starts once.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := errors.Join(w.regErrs...); err != nil {
		return err
	}
	if w.started {
		return fmt.Errorf("plenum/worker: started already: %w", ErrStopped)
	}
	lease := w.cfg.DefaultKind.Timeout
	for _, h := range w.handlers {
		lease = max(lease, h.cfg.Timeout)
	}
	// A claim that does not skip held rows would hand one item to two
	// workers: refuse to claim at all on such a database.
	if err := w.store.ProveSkipLocked(ctx); err != nil {
		return fmt.Errorf("plenum/worker: start: %w", err)
	}
	owner, err := w.store.RegisterOwner(ctx, core.RegisterOwnerParams{Name: w.cfg.Name, Host: w.cfg.Host})
	if err != nil {
		return fmt.Errorf("plenum/worker: start: %w", err)
	}
	w.started, w.owner, w.lease, w.limits = true, owner, lease, w.claimLimits()
	w.base, w.cancel = context.WithCancel(w.traced(context.WithoutCancel(ctx)))
	w.bg, w.bgCancel = context.WithCancel(w.base)
	w.claims, w.cancelClaims = context.WithCancel(w.base)
	w.log.InfoContext(ctx, "plenum/worker: started", "owner", owner, "queues", len(w.cfg.Queues), "kinds", len(w.handlers))

	go w.completer()
	for _, h := range w.handlers {
		if h.batch != nil {
			go w.gather(h)
		}
	}
	w.background.Add(2)
	go w.heartbeat(time.Now())
	go w.watch()
	if w.cfg.ReapInterval > 0 {
		w.background.Add(1)
		go w.maintain()
	}
	if (len(w.cfg.Periodic) > 0 || w.cfg.StoredSchedules) && w.cfg.PeriodicInterval > 0 {
		w.background.Add(1)
		go w.periodic()
	}
	for name, q := range w.cfg.Queues {
		w.loops.Add(1)
		go w.claimLoop(name, q)
	}
	return nil
}

// Stop shuts the worker down: it stops claiming, lets running handlers
// and a claim in flight finish until ctx ends, then cancels them (the
// handlers' contexts with cause ErrStopped), gives back each item whose
// handler was cancelled once that handler has returned (no attempt used,
// no crash counted), records the other outcomes, and deregisters, so that
// nothing it held waits for a reaper.
// It returns when all of that is done, with Err's error if the worker had
// lost its owner; such a worker tries to give back and to deregister for
// two heartbeat intervals at most each (a reaper does both after that), so
// that a database it cannot reach does not hold Stop past its deadline.
// Stop on a worker that was never started does nothing; calling it again
// waits for the first call.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	started := w.started
	w.mu.Unlock()
	if !started {
		return nil
	}
	w.stopOnce.Do(func() { go w.shutdown(ctx) })
	<-w.done
	return w.Err()
}

// Done is closed once the worker has stopped: by Stop, by the end of
// Start's context, or by itself after losing its owner (see Err).
func (w *Worker) Done() <-chan struct{} { return w.done }

// Err returns nil while the worker runs and after a clean stop, and an
// error wrapping ErrLost (and core.ErrOwnerLost where the store said so)
// once the worker stopped itself because it could not prove it was alive.
func (w *Worker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Owner returns the id the worker registered as (uuid.Nil before Start).
func (w *Worker) Owner() uuid.UUID {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.owner
}

// PauseQueue pauses queue for every process that claims from it, this
// worker's loops included, until ResumeQueue: Store.PauseQueue. Handlers
// already running finish; a paused queue's claim loop keeps polling at
// PollInterval, each poll one claim that takes nothing.
func (w *Worker) PauseQueue(ctx context.Context, queue string) error {
	return w.store.PauseQueue(ctx, queue)
}

// ResumeQueue lets every process claim from queue again:
// Store.ResumeQueue. This worker's loop takes the queue's items at its
// next poll.
func (w *Worker) ResumeQueue(ctx context.Context, queue string) error {
	return w.store.ResumeQueue(ctx, queue)
}

// stopClaiming makes every claim loop exit.
func (w *Worker) stopClaiming() { w.claimStopOnce.Do(func() { close(w.claimStop) }) }

// kill cancels every running handler, and every one started from now on,
// with cause.
func (w *Worker) kill(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killed == nil {
		w.killed = cause
	}
	for _, r := range w.running {
		r.cancel(w.killed)
	}
}

// lose stops a worker that can no longer prove it is alive: no more claims,
// every handler cancelled, then the same shutdown as Stop's.
func (w *Worker) lose(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = fmt.Errorf("%w: %w", ErrLost, err)
	}
	w.mu.Unlock()
	w.log.Error("plenum/worker: stopping: the worker could not prove it is alive", "owner", w.owner, "err", err)
	w.stopClaiming()
	w.kill(ErrLost)
	w.stopOnce.Do(func() {
		expired, cancel := context.WithCancel(context.Background())
		cancel()
		go w.shutdown(expired)
	})
}

// shutdown is Stop's work; it runs once.
func (w *Worker) shutdown(ctx context.Context) {
	defer close(w.done)
	w.stopClaiming()
	// A loop ends once its claim in flight returns; a claim the database
	// does not answer is cancelled when ctx ends. What it may have
	// claimed before the cancel goes back with Deregister, below.
	waitOr(ctx, &w.loops, w.cancelClaims)
	waitOr(ctx, &w.handlersRun, func() { w.kill(ErrStopped) })
	close(w.completions)
	<-w.completed
	w.bgCancel()
	w.background.Wait()
	// Whatever is still claimed goes back at once; a reaped owner has
	// nothing left to give back.
	dctx, cancel := context.WithTimeout(w.base, 30*time.Second)
	defer cancel()
	if w.Err() != nil {
		var cancelLost context.CancelFunc
		dctx, cancelLost = w.lostBound(dctx)
		defer cancelLost()
	}
	if err := w.store.Deregister(dctx, w.owner); err != nil {
		w.log.Error("plenum/worker: deregister", "owner", w.owner, "err", err)
	}
	w.cancel()
	w.log.Info("plenum/worker: stopped", "owner", w.owner)
}

// lostBound bounds ctx for the last statements of a worker that lost its
// owner (giving back what it held, deregistering) by two heartbeat
// intervals: the time left, at most, before a reaper counts it dead and
// does the same. A worker cut off from its database would otherwise wait
// for each of them until the connection's own bound (about 20 s on the
// server dialects), and Stop with it.
func (w *Worker) lostBound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 2*w.cfg.HeartbeatInterval)
}

// waitOr waits for wg; if ctx ends first, it calls expire and waits on.
func waitOr(ctx context.Context, wg *sync.WaitGroup, expire func()) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		expire()
		<-done
	}
}

// traced makes every store call made with ctx, or with a context derived
// from it (handlers' included), report the barriers it fires to the hooks.
func (w *Worker) traced(ctx context.Context) context.Context {
	if w.cfg.Hooks == nil {
		return ctx
	}
	return core.WithTrace(ctx, &core.Trace{BarrierFired: func(ctx context.Context, b core.FiredBarrier) {
		w.event(ctx, Event{Kind: EventBarrierFired, Queue: b.JoinQueue, Barrier: b})
	}})
}

// event sends e to the hooks, if any.
func (w *Worker) event(ctx context.Context, e Event) {
	if w.cfg.Hooks != nil {
		w.cfg.Hooks.Event(ctx, e)
	}
}
