package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/dsnparams"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// server is one test's access to the PostgreSQL server.
type server struct {
	t   *testing.T
	dsn string
	db  *sql.DB
	ctx context.Context
}

func (s *server) open(params map[string]string) *sql.DB {
	s.t.Helper()
	return conformance.Opener(postgres.DriverName, dsnparams.Postgres(s.t, s.dsn, params))(s.t)
}

func (s *server) exec(q dialect.Querier, stmts ...string) {
	s.t.Helper()
	for _, stmt := range stmts {
		if _, err := q.ExecContext(s.ctx, stmt); err != nil {
			s.t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// table creates a table of the test's own, dropped at cleanup.
func (s *server) table(columns string) string {
	s.t.Helper()
	name := fmt.Sprintf("pt%08x", rand.Uint32())
	s.exec(s.db, "CREATE TABLE "+name+" ("+columns+")")
	s.t.Cleanup(func() { _, _ = s.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+name) })
	return name
}

func (s *server) begin(db *sql.DB, iso sql.IsolationLevel) *sql.Tx {
	s.t.Helper()
	tx, err := db.BeginTx(s.ctx, &sql.TxOptions{Isolation: iso})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func wantClass(t *testing.T, what string, err error, want dialect.ErrorClass) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one classified %v", what, want)
	}
	if got := d.Classify(err); got != want {
		t.Fatalf("%s: Classify(%v) = %v, want %v", what, err, got, want)
	}
	t.Logf("%s: %v -> %v", what, err, want)
}

// TestServer checks the dialect's pieces against a real server: errors it
// provokes for real, the clock, Check, TableExists, Lock and Begin.
func TestServer(t *testing.T) {
	dsn := harness.DSN(t)
	run := func(name string, fn func(s *server)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := &server{t: t, dsn: dsn, ctx: t.Context()}
			s.db = s.open(nil)
			fn(s)
		})
	}

	run("Classify_UniqueViolation", func(s *server) {
		tbl := s.table("id int PRIMARY KEY")
		s.exec(s.db, "INSERT INTO "+tbl+" VALUES (1)")
		_, err := s.db.ExecContext(s.ctx, "INSERT INTO "+tbl+" VALUES (1)")
		wantClass(s.t, "duplicate key", err, dialect.UniqueViolation)
	})

	run("Classify_SerializationFailure", func(s *server) {
		tbl := s.table("id int PRIMARY KEY, n int")
		s.exec(s.db, "INSERT INTO "+tbl+" VALUES (1, 0)")
		a := s.begin(s.db, sql.LevelSerializable)
		var n int
		if err := a.QueryRowContext(s.ctx, "SELECT n FROM "+tbl+" WHERE id = 1").Scan(&n); err != nil {
			s.t.Fatal(err)
		}
		s.exec(s.db, "UPDATE "+tbl+" SET n = n + 1 WHERE id = 1") // commits after a's snapshot
		_, err := a.ExecContext(s.ctx, "UPDATE "+tbl+" SET n = n + 1 WHERE id = 1")
		wantClass(s.t, "concurrent update under SERIALIZABLE", err, dialect.Retryable)
	})

	run("Classify_LockNotAvailable", func(s *server) {
		tbl := s.table("id int PRIMARY KEY")
		s.exec(s.db, "INSERT INTO "+tbl+" VALUES (1)")
		holder := s.begin(s.db, sql.LevelReadCommitted)
		s.exec(holder, "SELECT id FROM "+tbl+" WHERE id = 1 FOR UPDATE")

		waiter := s.begin(s.db, sql.LevelReadCommitted)
		_, err := waiter.ExecContext(s.ctx, "SELECT id FROM "+tbl+" WHERE id = 1 FOR UPDATE NOWAIT")
		wantClass(s.t, "FOR UPDATE NOWAIT on a locked row", err, dialect.Retryable)

		timed := s.begin(s.open(map[string]string{"lock_timeout": "50ms"}), sql.LevelReadCommitted)
		_, err = timed.ExecContext(s.ctx, "UPDATE "+tbl+" SET id = 1 WHERE id = 1")
		wantClass(s.t, "lock_timeout", err, dialect.Retryable)
	})

	run("Classify_Deadlock", func(s *server) {
		tbl := s.table("id int PRIMARY KEY")
		s.exec(s.db, "INSERT INTO "+tbl+" VALUES (1), (2)")
		a, b := s.begin(s.db, sql.LevelReadCommitted), s.begin(s.db, sql.LevelReadCommitted)
		s.exec(a, "UPDATE "+tbl+" SET id = 1 WHERE id = 1")
		s.exec(b, "UPDATE "+tbl+" SET id = 2 WHERE id = 2")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tx := range []*sql.Tx{a, b} {
			wg.Go(func() {
				_, errs[i] = tx.ExecContext(s.ctx, fmt.Sprintf("UPDATE %s SET id = %d WHERE id = %d", tbl, 2-i, 2-i))
				if errs[i] != nil {
					_ = tx.Rollback() // let the other one through
				}
			})
		}
		wg.Wait()
		err := errors.Join(errs...)
		wantClass(s.t, "deadlock", err, dialect.Retryable)
	})

	run("Classify_ConnectionLost", func(s *server) {
		tx := s.begin(s.db, sql.LevelReadCommitted)
		var pid int
		if err := tx.QueryRowContext(s.ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			s.t.Fatal(err)
		}
		terminate(s.ctx, s.t, s.db, pid)
		_, err := tx.ExecContext(s.ctx, "SELECT 1")
		wantClass(s.t, "statement on a terminated backend", err, dialect.ConnectionLost)
	})

	// A connection lost while the fence commits: the store reports
	// ErrCommitUnknown, and does not run the fence again.
	run("Fence_CommitOnLostConnectionIsUnknown", func(s *server) {
		st, err := core.Open(s.ctx, s.db, d, core.Options{Prefix: fmt.Sprintf("pf%08x_", rand.Uint32()), Migrate: true})
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(func() { dropAll(s.t, s.db, st.Prefix()) })
		if _, err := st.Enqueue(s.ctx, core.ItemSpec{Queue: "q"}); err != nil {
			s.t.Fatal(err)
		}
		owner, err := st.RegisterOwner(s.ctx, core.RegisterOwnerParams{})
		if err != nil {
			s.t.Fatal(err)
		}
		cs, err := st.Claim(s.ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			s.t.Fatalf("Claim: %d, %v", len(cs), err)
		}
		killer := s.open(nil)
		runs := 0
		held, err := st.Fence(s.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
			runs++
			var pid int
			if err := f.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				return err
			}
			if err := f.Complete(ctx, nil); err != nil {
				return err
			}
			terminate(ctx, s.t, killer, pid)
			return nil
		})
		if !errors.Is(err, core.ErrCommitUnknown) || runs != 1 {
			s.t.Fatalf("Fence whose connection died before COMMIT = held %v, %v, fn ran %d times; want ErrCommitUnknown after one run", held, err, runs)
		}
		s.t.Logf("fence with its connection terminated before commit: %v", err)
		it, err := st.Get(s.ctx, cs[0].ID)
		if err != nil || it.State != core.StateClaimed {
			s.t.Fatalf("after the lost commit: %s, %v; want still claimed (the server never saw COMMIT)", it.State, err)
		}
	})

	run("Clock_MovesWithinTransaction", func(s *server) {
		tx, err := d.Begin(s.ctx, s.db, dialect.TxOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		defer tx.Rollback()
		read := func() time.Time {
			var v any
			if err := tx.QueryRowContext(s.ctx, "SELECT "+d.Now(0)).Scan(&v); err != nil {
				s.t.Fatal(err)
			}
			tm, err := d.ScanTime(v)
			if err != nil {
				s.t.Fatal(err)
			}
			return tm
		}
		a := read()
		time.Sleep(5 * time.Millisecond)
		b := read()
		if b.Sub(a) < 5*time.Millisecond {
			s.t.Fatalf("the clock read %v then %v in one transaction: it must move", a, b)
		}
		var shifted, plain time.Time
		if err := tx.QueryRowContext(s.ctx, "SELECT "+d.Now(time.Hour)+", "+d.Now(0)).Scan(&shifted, &plain); err != nil {
			s.t.Fatal(err)
		}
		if got := shifted.Sub(plain); got < time.Hour-time.Second || got > time.Hour+time.Second {
			s.t.Fatalf("Now(1h) - Now(0) = %v", got)
		}
		var added time.Time
		if err := tx.QueryRowContext(s.ctx, d.Rebind("SELECT "+d.AddMicros("CAST(? AS timestamptz)")), plain, int64(1500)).Scan(&added); err != nil {
			s.t.Fatal(err)
		}
		if got := added.Sub(plain); got != 1500*time.Microsecond {
			s.t.Fatalf("AddMicros(1500) moved the time by %v", got)
		}
	})

	run("Begin_ReadCommittedWhateverTheSessionDefault", func(s *server) {
		db := s.open(map[string]string{"default_transaction_isolation": "serializable"})
		for _, ro := range []bool{false, true} {
			tx, err := d.Begin(s.ctx, db, dialect.TxOptions{ReadOnly: ro})
			if err != nil {
				s.t.Fatal(err)
			}
			var iso, readOnly string
			if err := tx.QueryRowContext(s.ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')").Scan(&iso, &readOnly); err != nil {
				s.t.Fatal(err)
			}
			tx.Rollback()
			if iso != "read committed" || (readOnly == "on") != ro {
				s.t.Errorf("Begin(ReadOnly %v) on a serializable session: %s, read only %s", ro, iso, readOnly)
			}
		}
	})

	run("InsertIgnore_CountsOnlyInsertedRows", func(s *server) {
		tbl := s.table("id int PRIMARY KEY, k text UNIQUE")
		s.exec(s.db, "INSERT INTO "+tbl+" VALUES (1, 'a')")
		res, err := s.db.ExecContext(s.ctx, d.InsertIgnore(tbl, []string{"id", "k"}, "?, ?", 3, []string{"k"}), 2, "a", 3, "b", 1, "c")
		if err != nil {
			s.t.Fatal(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			s.t.Fatalf("rows affected %d, %v; want 1 (a duplicate key, a new row, a duplicate id)", n, err)
		}
	})

	run("Check_AcceptsTheServer", func(s *server) {
		if err := d.Check(s.ctx, s.db); err != nil {
			s.t.Fatal(err)
		}
	})

	run("Check_RefusesWhatItNeedsNot", func(s *server) {
		for _, c := range []struct {
			params map[string]string
			want   string
		}{
			{map[string]string{"search_path": "plenum_nowhere, plenum_neither"}, "search_path"},
			{map[string]string{"default_transaction_read_only": "on"}, "default_transaction_read_only"},
		} {
			err := d.Check(s.ctx, s.open(c.params))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				s.t.Errorf("Check with %v = %v, want a refusal naming %s", c.params, err, c.want)
			}
		}
	})

	run("TableExists_FollowsSearchPath", func(s *server) {
		schema := fmt.Sprintf("plenum_t%08x", rand.Uint32())
		s.exec(s.db, "CREATE SCHEMA "+schema, "CREATE TABLE "+schema+".tbl_here (id int)")
		s.t.Cleanup(func() { _, _ = s.db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
		p := d.(interface {
			TableExists(context.Context, dialect.Querier, string) (bool, error)
		})
		inSchema := s.open(map[string]string{"search_path": schema})
		for _, c := range []struct {
			db   *sql.DB
			want bool
		}{{inSchema, true}, {s.db, false}} {
			got, err := p.TableExists(s.ctx, c.db, "tbl_here")
			if err != nil || got != c.want {
				s.t.Errorf("TableExists = %v, %v; want %v", got, err, c.want)
			}
		}
	})

	run("Lock_ExcludesUntilUnlocked", func(s *server) {
		name := fmt.Sprintf("lock%08x", rand.Uint32())
		c1, c2 := conn(s), conn(s)
		unlock, err := d.Lock(s.ctx, c1, name)
		if err != nil {
			s.t.Fatal(err)
		}
		// Another name is free.
		other, err := d.Lock(s.ctx, c2, name+"-other")
		if err != nil {
			s.t.Fatal(err)
		}
		if err := other(s.ctx); err != nil {
			s.t.Fatal(err)
		}
		got := make(chan error, 1)
		var unlock2 func(context.Context) error
		go func() {
			var err error
			unlock2, err = d.Lock(s.ctx, c2, name)
			got <- err
		}()
		select {
		case err := <-got:
			s.t.Fatalf("a second Lock of %s returned (%v) while the first holds it", name, err)
		case <-time.After(200 * time.Millisecond):
		}
		if err := unlock(s.ctx); err != nil {
			s.t.Fatal(err)
		}
		if err := <-got; err != nil {
			s.t.Fatalf("the waiting Lock after unlock: %v", err)
		}
		if err := unlock2(s.ctx); err != nil {
			s.t.Fatal(err)
		}
		if err := unlock2(s.ctx); err == nil {
			s.t.Error("unlocking a lock no longer held succeeded")
		}
	})

	run("Lock_GivesUpWhenContextEnds", func(s *server) {
		name := fmt.Sprintf("lock%08x", rand.Uint32())
		unlock, err := d.Lock(s.ctx, conn(s), name)
		if err != nil {
			s.t.Fatal(err)
		}
		defer unlock(s.ctx)
		ctx, cancel := context.WithTimeout(s.ctx, 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := d.Lock(ctx, conn(s), name); !errors.Is(err, context.DeadlineExceeded) {
			s.t.Fatalf("Lock while held, with a deadline = %v, want context.DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			s.t.Fatalf("Lock gave up after %v", waited)
		}
	})

	run("Lock_OutlastsTheSessionsLockTimeout", func(s *server) {
		name := fmt.Sprintf("lock%08x", rand.Uint32())
		unlock, err := d.Lock(s.ctx, conn(s), name)
		if err != nil {
			s.t.Fatal(err)
		}
		short := s.open(map[string]string{"lock_timeout": "20ms"})
		c, err := short.Conn(s.ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		defer c.Close()
		time.AfterFunc(300*time.Millisecond, func() { _ = unlock(context.Background()) })
		unlock2, err := d.Lock(s.ctx, c, name)
		if err != nil {
			s.t.Fatalf("Lock on a session with lock_timeout 20ms, held for 300ms: %v", err)
		}
		if err := unlock2(s.ctx); err != nil {
			s.t.Fatal(err)
		}
	})
}

// terminate ends the backend pid and waits until it is gone, so that the
// next statement of its session meets a closed connection.
func terminate(ctx context.Context, t *testing.T, db *sql.DB, pid int) {
	t.Helper()
	if _, err := db.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	for range 500 {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("backend %d still there after pg_terminate_backend", pid)
}

func dropAll(t *testing.T, db *sql.DB, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := migrations.Drop(ctx, db, d, prefix); err != nil {
		t.Errorf("drop tables of %s: %v", prefix, err)
	}
}

func conn(s *server) *sql.Conn {
	s.t.Helper()
	c, err := s.db.Conn(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}
