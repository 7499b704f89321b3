package chaos

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"github.com/plenumdb/plenum/internal/testkit/privatedb"
)

// ErrNoPrivateServer is the error of a round that could not start its
// private server for want of what it needs (root, the server's programs,
// ip and nft), as opposed to one that failed to start.
var ErrNoPrivateServer = errors.New("no private server")

// private is the database servers a round started for itself
// (Config.Private): the server the workers use (after a failover, the
// promoted standby), its standby where the round fails over, and the
// network namespaces of the worker slots where it cuts them off.
type private struct {
	own *owner

	mu      sync.Mutex // held while the server restarts or fails over
	server  *privatedb.Server
	standby *privatedb.Server
	dsn     string
	ns      []*privatedb.Namespace // by worker slot; nil without partitions
}

// startPrivate starts the round's own server for cfg: a PostgreSQL
// cluster (with a standby where cfg fails over) or a MariaDB server,
// listening, where cfg cuts workers off, on an address that each worker
// slot's namespace reaches over its own pair.
func startPrivate(cfg Config, logf func(string, ...any)) (*private, error) {
	p := &private{own: &owner{logf: logf}}
	err := p.own.do(func() {
		var start func(privatedb.TB, privatedb.Options) *privatedb.Server
		switch cfg.Dialect {
		case "postgres":
			start = privatedb.Postgres
		case "mysql":
			start = privatedb.MariaDB
			if cfg.Faults.Failover != "" {
				p.own.Fatalf("a failover needs PostgreSQL's streaming replication: not on %s", cfg.Dialect)
			}
		default:
			p.own.Fatalf("no private server of the %s dialect: postgres and mysql (MariaDB) only", cfg.Dialect)
		}
		var opts privatedb.Options
		if cfg.Faults.PartitionEvery > 0 {
			for range cfg.Workers {
				p.ns = append(p.ns, privatedb.NewNamespace(p.own))
			}
			opts.Addr = p.ns[0].HostAddr
			for _, n := range p.ns[1:] {
				if err := n.Reach(opts.Addr); err != nil {
					p.own.Fatal(err)
				}
			}
		}
		p.server = start(p.own, opts)
		p.dsn = p.server.DSN()
		if cfg.Faults.Failover != "" {
			p.standby = p.server.Standby(p.own, privatedb.StandbyOptions{Synchronous: cfg.Faults.Failover == FailoverSync})
			p.dsn = privatedb.FailoverDSN(p.server, p.standby)
		}
	})
	if err != nil {
		p.close()
		return nil, fmt.Errorf("chaos: private server: %w", err)
	}
	return p, nil
}

// command runs cmd in the namespace of slot, where the round has one.
func (p *private) command(slot int, cmd *exec.Cmd) *exec.Cmd {
	if p == nil || slot >= len(p.ns) {
		return cmd
	}
	c := p.ns[slot].Command(cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir = cmd.Env, cmd.Dir
	return c
}

// close stops the servers and removes the namespaces.
func (p *private) close() {
	if p != nil {
		p.own.close()
	}
}

// owner is the owner of the round's private servers (privatedb.TB): a
// failure ends the goroutine that met it, as it ends a test's, and the
// cleanups run when the round is over.
type owner struct {
	logf func(string, ...any)

	mu       sync.Mutex
	err      error
	skipped  bool // the failure is a missing program or privilege
	cleanups []func()
}

// do runs fn on a goroutine of its own and returns the failure that
// ended it, if any.
func (o *owner) do(fn func()) error {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	<-done
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.skipped {
		return fmt.Errorf("%w: %w", ErrNoPrivateServer, o.err)
	}
	return o.err
}

func (o *owner) Helper()                      {}
func (o *owner) Fatal(args ...any)            { o.fail(fmt.Sprint(args...)) }
func (o *owner) Fatalf(f string, args ...any) { o.fail(fmt.Sprintf(f, args...)) }
func (o *owner) Skipf(f string, args ...any) {
	o.mu.Lock()
	o.skipped = true
	o.mu.Unlock()
	o.fail(fmt.Sprintf(f, args...))
}
func (o *owner) Logf(f string, args ...any) { o.logf(f, args...) }
func (o *owner) Cleanup(fn func())          { o.mu.Lock(); o.cleanups = append(o.cleanups, fn); o.mu.Unlock() }
func (o *owner) fail(msg string) {
	o.mu.Lock()
	if o.err == nil {
		o.err = errors.New(msg)
	}
	o.mu.Unlock()
	runtime.Goexit()
}

// close runs the cleanups, the last registered first.
func (o *owner) close() {
	o.mu.Lock()
	fns := o.cleanups
	o.cleanups = nil
	o.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
