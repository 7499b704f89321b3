package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
)

// flightRecorder stands in for the store's CompleteMany: each call
// announces its batch on entered and waits for a release, so that a test
// decides when each flight lands.
type flightRecorder struct {
	entered chan []core.Completion
	release chan error // the call's error, nil to complete
	lost    map[uuid.UUID]bool
	// auto, once closed (landAll), lands every flight at once, those
	// already waiting for a release included. (It was a flag read after
	// entered: a flight that had entered but not yet read it skipped
	// its release, and the test's send of that release blocked for
	// good.)
	auto     chan struct{}
	autoOnce sync.Once

	mu               sync.Mutex
	inFlight, maxIn  int
	calls, completed int
}

func newFlightRecorder() *flightRecorder {
	return &flightRecorder{entered: make(chan []core.Completion), release: make(chan error), lost: map[uuid.UUID]bool{}, auto: make(chan struct{})}
}

// landAll lands every flight, in the air or to come, without a release.
func (f *flightRecorder) landAll() { f.autoOnce.Do(func() { close(f.auto) }) }

// land releases one flight that entered, with err.
func (f *flightRecorder) land(t *testing.T, err error) {
	t.Helper()
	select {
	case f.release <- err:
	case <-time.After(testWait):
		stoptest.Stuck(t, "no flight waited to land within %v", testWait)
	}
}

func (f *flightRecorder) completeMany(ctx context.Context, cs []core.Completion) ([]uuid.UUID, error) {
	f.mu.Lock()
	f.inFlight++
	f.calls++
	f.completed += len(cs)
	f.maxIn = max(f.maxIn, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	f.entered <- cs
	select {
	case err := <-f.release:
		if err != nil {
			return nil, err
		}
	case <-f.auto:
	}
	var lost []uuid.UUID
	for _, c := range cs {
		if f.lost[c.Claim.ID] {
			lost = append(lost, c.Claim.ID)
		}
	}
	return lost, nil
}

// completerWorker is a worker with only what the completer uses, its
// completer running on f.
func completerWorker(t *testing.T, batch int, f *flightRecorder) *Worker {
	t.Helper()
	return lingeringCompleter(t, batch, completeLinger, f)
}

// lingeringCompleter is completerWorker with linger in place of
// completeLinger.
func lingeringCompleter(t *testing.T, batch int, linger time.Duration, f *flightRecorder) *Worker {
	t.Helper()
	w := &Worker{
		cfg:          Config{CompleteBatch: batch},
		base:         context.Background(),
		completions:  make(chan *completion),
		completed:    make(chan struct{}),
		completeMany: f.completeMany,
		linger:       linger,
	}
	go w.completer()
	t.Cleanup(func() {
		// Whatever a failed test left in the air lands now.
		f.landAll()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-f.entered:
				case <-stop:
					return
				}
			}
		}()
		select {
		case <-w.completed:
		default:
			close(w.completions)
			receive(t, w.completed, "end of the completer")
		}
	})
	return w
}

// completeAsync completes a new item through w and returns its id and
// where complete's answer arrives.
func completeAsync(w *Worker) (uuid.UUID, <-chan error) {
	id := uuid.New()
	out := make(chan error, 1)
	go func() {
		r := &run{claim: &core.Claim{Item: core.Item{ID: id}, Token: uuid.New()}}
		out <- w.complete(context.Background(), r)
	}()
	return id, out
}

// handOver gives the completer a new item's completion and returns once
// the completer has taken it, with where its answer arrives.
func handOver(t *testing.T, w *Worker) <-chan error {
	t.Helper()
	c := &completion{}
	c.handing(&run{claim: &core.Claim{Item: core.Item{ID: uuid.New()}, Token: uuid.New()}})
	select {
	case w.completions <- c:
	case <-time.After(testWait):
		stoptest.Stuck(t, "the completer took no completion within %v", testWait)
	}
	done := make(chan error, 1)
	go func() { done <- c.wait() }()
	return done
}

const testWait = time.Minute // generous: the machine may be loaded

func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(testWait):
		stoptest.Stuck(t, "no %s within %v", what, testWait)
		panic("unreachable")
	}
}

// While a flight is busy, completions keep gathering into the next
// batch, up to CompleteBatch, instead of taking a flight each: a second
// flight takes only a full batch, the batches grow with the load, and no
// more than completeFlights are ever in flight.
func TestCompleter_GathersWhileEveryFlightIsBusy(t *testing.T) {
	t.Parallel()
	f := newFlightRecorder()
	w := completerWorker(t, 10, f)

	var answers []<-chan error
	_, a := completeAsync(w)
	answers = append(answers, a)
	if got := len(receive(t, f.entered, "flight")); got != 1 {
		t.Fatalf("the first flight has %d completions, want 1", got)
	}
	// With the first flight busy, a batch short of full waits for it.
	for range 3 {
		answers = append(answers, handOver(t, w))
	}
	select {
	case cs := <-f.entered:
		t.Fatalf("a second flight took a batch of %d, short of full, while the first was busy", len(cs))
	case <-time.After(100 * time.Millisecond):
	}
	// Full, it takes the second flight.
	for range 7 {
		answers = append(answers, handOver(t, w))
	}
	if got := len(receive(t, f.entered, "flight")); got != 10 {
		t.Fatalf("the second flight has %d completions, want a full 10", got)
	}
	// Both busy: 10 more fill the next batch (taken at once), the rest
	// wait for room.
	for range 10 {
		answers = append(answers, handOver(t, w))
	}
	for range 15 {
		_, a := completeAsync(w)
		answers = append(answers, a)
	}
	// From here on the flights land at once; the two in the air are let
	// go, and the later flights' sizes recorded.
	var sizes []int
	var sizesMu sync.Mutex
	go func() {
		for cs := range f.entered {
			sizesMu.Lock()
			sizes = append(sizes, len(cs))
			sizesMu.Unlock()
		}
	}()
	f.landAll()
	for i, a := range answers {
		if err := receive(t, a, "answer"); err != nil {
			t.Errorf("completion %d: %v", i, err)
		}
	}
	sizesMu.Lock()
	defer sizesMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxIn > completeFlights {
		t.Errorf("%d flights at once, want at most %d", f.maxIn, completeFlights)
	}
	if sizes[0] != 10 {
		t.Errorf("the batch gathered while every flight was busy has %d completions, want a full 10 (sizes %v)", sizes[0], sizes)
	}
	for _, n := range sizes {
		if n > 10 {
			t.Errorf("a batch of %d, above CompleteBatch 10 (sizes %v)", n, sizes)
		}
	}
	if f.calls >= f.completed {
		t.Errorf("%d CompleteMany calls for %d completions: nothing was batched", f.calls, f.completed)
	}
}

// Each completion gets its own batch's answer: nil, a lost claim for an
// item the store did not complete, the store's error for all of a
// failed batch.
func TestCompleter_AnswersEachCompletion(t *testing.T) {
	t.Parallel()
	f := newFlightRecorder()
	w := completerWorker(t, 100, f)

	kept, keptAnswer := completeAsync(w)
	receive(t, f.entered, "flight")
	f.land(t, nil)
	if err := receive(t, keptAnswer, "answer"); err != nil {
		t.Errorf("completion of %s: %v, want nil", kept, err)
	}
	lostID := uuid.New()
	f.lost[lostID] = true // read by the next flight only, after this
	lostAnswer := make(chan error, 1)
	go func() {
		lostAnswer <- w.complete(context.Background(), &run{claim: &core.Claim{Item: core.Item{ID: lostID}, Token: uuid.New()}})
	}()
	receive(t, f.entered, "flight")
	f.land(t, nil)
	if err := receive(t, lostAnswer, "answer"); !errors.Is(err, core.ErrClaimLost) {
		t.Errorf("completion of an item the store did not complete: %v, want core.ErrClaimLost", err)
	}

	_, failedAnswer := completeAsync(w)
	receive(t, f.entered, "flight")
	boom := errors.New("connection reset")
	f.land(t, boom)
	if err := receive(t, failedAnswer, "answer"); !errors.Is(err, boom) {
		t.Errorf("completion in a failed batch: %v, want the store's error", err)
	}
}

// Closing the completions (the shutdown) flushes what is gathered and
// waits for every flight before the completer says it is done.
func TestCompleter_FlushesEverythingBeforeItIsDone(t *testing.T) {
	t.Parallel()
	f := newFlightRecorder()
	w := completerWorker(t, 100, f)

	var answers []<-chan error
	_, a := completeAsync(w)
	answers = append(answers, a)
	receive(t, f.entered, "flight")
	for range 5 {
		answers = append(answers, handOver(t, w))
	}
	close(w.completions)
	// At shutdown the rest goes at once, in a flight of its own.
	if got := len(receive(t, f.entered, "flight")); got != 5 {
		t.Errorf("the last flight has %d completions, want 5", got)
	}
	select {
	case <-w.completed:
		t.Fatal("the completer said it was done with flights still in the air")
	default:
	}
	f.land(t, nil)
	f.land(t, nil)
	receive(t, w.completed, "completer's end")
	for i, a := range answers {
		if err := receive(t, a, "answer"); err != nil {
			t.Errorf("completion %d: %v", i, err)
		}
	}
}

// A claim's runs that are on their way to the completer, outside their
// handlers, are waited for, however late they come (up to the linger,
// a minute here): a batch of fast handlers completes in one statement
// even when their goroutines are scheduled late. Runs inside their
// handlers are not: after a pause the batch goes without them.
func TestCompleter_WaitsForRunsOnTheirWayNotForHandlers(t *testing.T) {
	t.Parallel()
	f := newFlightRecorder()
	w := lingeringCompleter(t, 100, testWait, f)

	const n = 5
	w.flow.begun.Add(n) // claimed, none in its handler yet
	var answers []<-chan error
	for i := range n {
		answers = append(answers, handOver(t, w))
		if i < n-1 {
			// Far longer than completeGap: a pause does not send the
			// batch while runs are still on their way.
			select {
			case cs := <-f.entered:
				t.Fatalf("a flight of %d left with %d runs still on their way", len(cs), n-1-i)
			case <-time.After(20 * completeGap):
			}
		}
	}
	if got := len(receive(t, f.entered, "flight")); got != n {
		t.Errorf("the claim's completions went in a flight of %d, want all %d", got, n)
	}
	f.land(t, nil)
	for _, a := range answers {
		if err := receive(t, a, "answer"); err != nil {
			t.Error(err)
		}
	}

	// Three runs begun, two of them inside slow handlers: the third's
	// completion goes after a pause, not after the linger.
	w.flow.begun.Add(3)
	w.flow.inHandler.Add(2)
	a := handOver(t, w)
	if got := len(receive(t, f.entered, "flight")); got != 1 {
		t.Errorf("a flight of %d, want the one completion not waiting for handlers", got)
	}
	f.land(t, nil)
	if err := receive(t, a, "answer"); err != nil {
		t.Error(err)
	}
}

// A landed flight frees its runs' slots before it answers them, all of
// them at once with one wake-up of the claim loop, and marks them freed
// so that the runs do not free them again.
func TestCompleter_LandedFlightFreesItsSlots(t *testing.T) {
	t.Parallel()
	f := newFlightRecorder()
	w := completerWorker(t, 100, f)

	sl := &slots{max: 3, freed: make(chan struct{}, 1)}
	sl.running.Store(3)
	w.flow.begun.Add(3)
	runs := make([]*run, 3)
	answers := make([]chan error, 3)
	for i := range runs {
		runs[i] = &run{claim: &core.Claim{Item: core.Item{ID: uuid.New()}, Token: uuid.New()}, slots: sl}
		answers[i] = make(chan error, 1)
		go func() { answers[i] <- w.complete(context.Background(), runs[i]) }()
	}
	if got := len(receive(t, f.entered, "flight")); got != 3 {
		t.Fatalf("a flight of %d, want 3", got)
	}
	f.land(t, nil)
	for i, r := range runs {
		if err := receive(t, answers[i], "answer"); err != nil {
			t.Fatal(err)
		}
		if !r.slotFreed {
			t.Errorf("run %d: its slot is not marked freed", i)
		}
	}
	if got := sl.running.Load(); got != 0 {
		t.Errorf("%d slots still taken after the flight landed, want 0", got)
	}
	receive(t, sl.freed, "wake-up of the claim loop")
}
