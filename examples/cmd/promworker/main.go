// Command promworker is a worker on SQLite whose events are Prometheus
// metrics, served on /metrics. It makes its own work: every second a few
// emails (one in ten fails its first attempt) and a report that fans out
// into pages and a join, so that every metric of package promhooks moves.
//
//	go run ./cmd/promworker -addr 127.0.0.1:2112
//	curl -s 127.0.0.1:2112/metrics | grep plenum_
//
// Interrupt it to stop it gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/examples/promhooks"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:2112", "address to serve /metrics on")
	path := flag.String("db", "", "SQLite database file (default: one in a temporary directory)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *addr, *path, func(a string) { log.Printf("serving http://%s/metrics", a) })
	if err != nil {
		log.Fatal(err)
	}
}

// run serves the metrics of a worker on the SQLite database at path until
// ctx ends, then stops both. ready, if set, gets the address served once
// everything runs.
func run(ctx context.Context, addr, path string, ready func(addr string)) error {
	if path == "" {
		dir, err := os.MkdirTemp("", "promworker")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "jobs.db")
	}
	db, err := sqlite.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hooks, err := promhooks.New(reg, promhooks.Options{})
	if err != nil {
		return err
	}
	w, err := worker.New(store, worker.Config{
		Queues:       map[string]worker.QueueConfig{"email": {MaxWorkers: 8}, "reports": {MaxWorkers: 4}},
		PollInterval: 100 * time.Millisecond,
		ReapInterval: 2 * time.Second, // queue depths are read with each pass
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Hooks:        hooks,
	})
	if err != nil {
		return err
	}
	register(w, store)
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.Stop(sctx); err != nil {
			log.Printf("stop: %v", err)
		}
	}()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := produce(ctx, store); err != nil && ctx.Err() == nil {
			log.Printf("enqueue: %v", err)
		}
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		case err := <-served:
			return err
		case <-tick.C:
		}
	}
}

type email struct {
	To string `json:"to"`
}

// register sets up the handlers: emails, and reports that fan out into
// pages whose join assembles them.
func register(w *worker.Worker, store *core.Store) {
	worker.Handle(w, "email.send", func(ctx context.Context, job *worker.Job[email]) error {
		time.Sleep(time.Duration(5+rand.IntN(25)) * time.Millisecond)
		if job.Attempt() == 1 && rand.IntN(10) == 0 {
			return fmt.Errorf("mail server said no to %s", job.Args.To)
		}
		return nil
	}, worker.KindConfig{Backoff: func(int) time.Duration { return 200 * time.Millisecond }})
	worker.Handle(w, "report.build", func(ctx context.Context, job *worker.Job[int]) error {
		pages := make([]core.ChildSpec, job.Args)
		for i := range pages {
			pages[i] = core.ChildSpec{Key: fmt.Sprint(i), Kind: "report.page"}
		}
		_, err := store.Expand(ctx, job.Claim(), core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "pages", Join: core.JoinSpec{Queue: "reports", Kind: "report.done"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Children: pages, Done: true}, nil
			},
			CompleteParent: true,
		})
		return err
	})
	worker.Handle(w, "report.page", func(ctx context.Context, job *worker.Job[struct{}]) error {
		time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
		return nil
	})
	worker.Handle(w, "report.done", func(ctx context.Context, job *worker.Job[struct{}]) error { return nil })
}

// produce enqueues one second's work.
func produce(ctx context.Context, store *core.Store) error {
	specs := []core.ItemSpec{{Queue: "reports", Kind: "report.build", Payload: []byte(`5`)}}
	for range 5 {
		specs = append(specs, core.ItemSpec{Queue: "email", Kind: "email.send", Payload: fmt.Appendf(nil, `{"to":"user%d@example.com"}`, rand.IntN(1000))})
	}
	_, err := store.Enqueue(ctx, specs...)
	return err
}
