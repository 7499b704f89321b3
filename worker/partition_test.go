package worker_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/privatedb"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

// The partitioned worker's settings, shared by the test and the worker
// process.
const (
	partitionEnv    = "PLENUM_PARTITION_WORKER" // the DSN, in the worker process
	partitionPrefix = "PLENUM_PARTITION_PREFIX"
	partitionHeld   = 4  // the claims the partitioned worker holds
	partitionItems  = 12 // items enqueued before the cut
	partitionAfter  = 3  // items the worker runs after the heal
	partitionStale  = 6 * time.Second
	// partitionBound is how long any call of the partitioned worker may
	// wait on its database: the dialect's bound on a half-open connection
	// (about 20 s, see postgres.Open), with room for a loaded machine.
	partitionBound = 35 * time.Second
)

func partitionConfig(queue string) worker.Config {
	cfg := fast(map[string]int{queue: partitionHeld})
	cfg.HeartbeatInterval, cfg.StaleAfter = 500*time.Millisecond, partitionStale
	cfg.DefaultKind.Timeout = time.Minute
	cfg.DefaultKind.Backoff = func(int) time.Duration { return 0 }
	return cfg
}

// auditFence is a handler that writes its item's id to audit and
// completes the item, in one fence.
func auditFence(audit string) func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
	return func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id) VALUES ('%s')", audit, job.ID()))
			return err
		})
	}
}

// partitionServer is a server the partition test runs on.
type partitionServer struct {
	start func(privatedb.TB, privatedb.Options) *privatedb.Server
	d     dialect.Dialect
	open  func(string) (*sql.DB, error)
}

var partitionServers = map[string]partitionServer{
	"postgres": {privatedb.Postgres, postgres.Dialect(), postgres.Open},
	"mysql":    {privatedb.MariaDB, mysql.Dialect(), mysql.Open},
}

// TestWorker_SilentPartition_Postgres and _MySQL cut a worker process
// off from its server, dropping every packet without a reset, for longer
// than the stale threshold, then heal the partition. While cut off, each
// of its calls on the database returns within the dialect's bound, it
// cancels its handlers and Stop returns, and a worker of another process
// reaps its claims and finishes its items. After the heal none of its
// late writes lands, every item was completed once with one effect, and
// a worker it starts anew runs items again.
func TestWorker_SilentPartition_Postgres(t *testing.T) { silentPartition(t, "postgres") }

func TestWorker_SilentPartition_MySQL(t *testing.T) { silentPartition(t, "mysql") }

func silentPartition(t *testing.T, name string) {
	srvKind := partitionServers[name]
	if dsn := os.Getenv(partitionEnv); dsn != "" {
		if err := partitioned(srvKind, dsn, os.Getenv(partitionPrefix)); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := privatedb.NewNamespace(t)
	srv := srvKind.start(t, privatedb.Options{Addr: ns.HostAddr})
	db, err := srvKind.open(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, srvKind.d, "id")
	enqueue(t, store, "q", "held", partitionItems)

	p := startPartitioned(t, ns, srv.DSN(), prefix)
	for range partitionHeld {
		p.await(t, "claimed")
	}
	if err := ns.Cut(); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	t.Cleanup(func() { _ = ns.Heal() })
	p.send("cut")

	// Another process's worker, reaping: it takes the items left, and
	// those of the partitioned worker once its heartbeat is stale.
	other, err := worker.New(store, partitionConfig("q"))
	if err != nil {
		t.Fatal(err)
	}
	other.HandleFunc("held", auditFence(audit))
	if err := other.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer other.Stop(ctx)
	completed := func() int { return countState(ctx, db, prefix, "completed") }
	if !awaitCount(t, ctx, completed, partitionItems) {
		t.Fatalf("%d of %d items completed after the cut", completed(), partitionItems)
	}
	t.Logf("the other worker completed every item %v after the cut", time.Since(cut).Round(time.Millisecond))

	// While cut off, the partitioned worker reports its bounds.
	lost := p.await(t, "lost")
	stopped := p.await(t, "stopped")
	t.Logf("partitioned worker: %s; %s", lost, stopped)
	if d := p.duration(t, lost); d > partitionStale {
		t.Errorf("the partitioned worker cancelled its handlers %v after the cut, want within StaleAfter (%v)", d, partitionStale)
	}
	// A lost worker tries to give back what it held and to deregister
	// for two heartbeat intervals at most: a reaper does both after that.
	if d := p.duration(t, stopped); d > 5*time.Second {
		t.Errorf("Stop returned after %v, past its deadline of 5 s", d)
	}
	for range 3 {
		probe := p.await(t, "probe")
		t.Logf("partitioned worker: %s", probe)
		if d := p.duration(t, probe); d > partitionBound {
			t.Errorf("%s: returned after %v, want within %v", probe, d, partitionBound)
		}
	}

	if err := ns.Heal(); err != nil {
		t.Fatal(err)
	}
	p.send("healed")
	for range partitionHeld {
		late := p.await(t, "late")
		if !strings.Contains(late, "held=false") {
			t.Errorf("a late fence of the partitioned worker: %s, want held=false", late)
		}
	}
	p.await(t, "restarted")
	enqueue(t, store, "after", "after", partitionAfter)
	if !awaitCount(t, ctx, completed, partitionItems+partitionAfter) {
		t.Fatalf("the restarted worker did not run the items enqueued after the heal")
	}
	p.send("exit")
	p.wait(t)

	var rows, distinct int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+audit).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if want := partitionItems + partitionAfter; rows != want || distinct != want {
		t.Errorf("%d audit rows (%d distinct) for %d items, want one each", rows, distinct, want)
	}
}

func enqueue(t *testing.T, store *core.Store, queue, kind string, n int) {
	t.Helper()
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, Kind: kind, MaxAttempts: 100}
	}
	if _, err := store.Enqueue(context.Background(), specs...); err != nil {
		t.Fatal(err)
	}
}

// countState counts the items of prefix in state; -1 when the database
// does not answer.
func countState(ctx context.Context, db *sql.DB, prefix, state string) int {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+"items WHERE state = '"+state+"'").Scan(&n); err != nil {
		return -1
	}
	return n
}

// partitionedProcess is the test binary run again, inside the namespace,
// as the worker that is cut off. It takes commands on stdin ("cut",
// "healed", "exit") and reports on stdout, a line an event: its name,
// then a duration in milliseconds, then what happened.
type partitionedProcess struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	seen  []string // lines read that no await has taken yet
}

func startPartitioned(t *testing.T, ns *privatedb.Namespace, dsn, prefix string) *partitionedProcess {
	t.Helper()
	cmd := ns.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), partitionEnv+"="+dsn, partitionPrefix+"="+prefix)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &partitionedProcess{cmd: cmd, in: in, lines: make(chan string, 100)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

// await returns the first line not taken yet that reports event, failing t if the
// process reports an error, ends, or says nothing of it within
// partitionBound plus the stale threshold.
func (p *partitionedProcess) await(t *testing.T, event string) string {
	t.Helper()
	for i, line := range p.seen {
		if strings.HasPrefix(line, event+" ") {
			p.seen = append(p.seen[:i], p.seen[i+1:]...)
			return line
		}
	}
	timeout := time.After(partitionBound + partitionStale)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the partitioned worker ended before it reported %q", event)
			}
			if strings.HasPrefix(line, "error ") {
				t.Fatalf("the partitioned worker: %s", line)
			}
			if strings.HasPrefix(line, event+" ") {
				return line
			}
			p.seen = append(p.seen, line)
		case <-timeout:
			t.Fatalf("the partitioned worker did not report %q within %v", event, partitionBound+partitionStale)
		}
	}
}

// duration is the duration a line reports.
func (p *partitionedProcess) duration(t *testing.T, line string) time.Duration {
	t.Helper()
	var event string
	var ms int64
	if _, err := fmt.Sscan(line, &event, &ms); err != nil {
		t.Fatalf("no duration in %q: %v", line, err)
	}
	return time.Duration(ms) * time.Millisecond
}

func (p *partitionedProcess) send(command string) {
	_, _ = io.WriteString(p.in, command+"\n")
}

// wait waits for the process's end and fails t unless it exited cleanly.
func (p *partitionedProcess) wait(t *testing.T) {
	t.Helper()
	for line := range p.lines {
		if strings.HasPrefix(line, "error ") {
			t.Errorf("the partitioned worker: %s", line)
		}
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the partitioned worker: %v", err)
	}
}

// partitioned is the worker process: it holds partitionHeld claims until
// cut off, probes how long its calls wait while cut off, stops, writes
// late through its old claims once healed, and runs anew.
func partitioned(srv partitionServer, dsn, prefix string) error {
	ctx := context.Background()
	db, err := srv.open(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := core.Open(ctx, db, srv.d, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	audit := prefix + "audit"
	var mu sync.Mutex
	var held []core.Claim
	cancelled := make(chan struct{})
	var once sync.Once
	w, err := worker.New(store, partitionConfig("q"))
	if err != nil {
		return err
	}
	w.HandleFunc("held", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		mu.Lock()
		held = append(held, job.Claim())
		mu.Unlock()
		fmt.Println("claimed", job.ID())
		<-ctx.Done()
		once.Do(func() { close(cancelled) })
		return ctx.Err()
	})
	if err := w.Start(ctx); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	if err := expect(in, "cut"); err != nil {
		return err
	}
	cut := time.Now()
	mu.Lock()
	claims := append([]core.Claim(nil), held...)
	mu.Unlock()
	probes := probe(map[string]func() error{
		"claim": func() error {
			_, err := store.Claim(ctx, core.ClaimParams{Queue: "probe", Owner: w.Owner(), Limit: 1, Lease: time.Minute})
			return err
		},
		"heartbeat": func() error { return store.Heartbeat(ctx, w.Owner()) },
		"fence": func() error {
			_, err := store.Fence(ctx, claims[0], func(context.Context, *core.Fenced) error { return nil })
			return err
		},
	})
	<-cancelled
	fmt.Printf("lost %d handlers cancelled\n", time.Since(cut).Milliseconds())
	stop, cancel := context.WithTimeout(ctx, 5*time.Second)
	at := time.Now()
	err = w.Stop(stop)
	cancel()
	fmt.Printf("stopped %d %v\n", time.Since(at).Milliseconds(), err)
	probes.Wait()
	if err := expect(in, "healed"); err != nil {
		return err
	}
	for _, c := range claims {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		ok, err := store.Fence(lctx, c, func(ctx context.Context, f *core.Fenced) error {
			if _, err := f.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id) VALUES ('late-%s')", audit, c.ID)); err != nil {
				return err
			}
			return f.Complete(ctx, nil)
		})
		cancel()
		fmt.Printf("late 0 %s held=%v err=%v\n", c.ID, ok, err)
	}
	again, err := worker.New(store, partitionConfig("after"))
	if err != nil {
		return err
	}
	again.HandleFunc("after", auditFence(audit))
	if err := again.Start(ctx); err != nil {
		return err
	}
	fmt.Println("restarted 0")
	if err := expect(in, "exit"); err != nil {
		return err
	}
	stop, cancel = context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return again.Stop(stop)
}

// probe runs each call at once, in parallel, and reports how long each
// took: "probe MS name: error".
func probe(calls map[string]func() error) *sync.WaitGroup {
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := time.Now()
			err := call()
			fmt.Printf("probe %d %s: %v\n", time.Since(at).Milliseconds(), name, err)
		}()
	}
	return &wg
}

// expect reads the next command from the test, which must be want.
func expect(in *bufio.Scanner, want string) error {
	if !in.Scan() {
		return fmt.Errorf("stdin ended before %q: %v", want, in.Err())
	}
	if got := in.Text(); got != want {
		return fmt.Errorf("command %q, want %q", got, want)
	}
	return nil
}
