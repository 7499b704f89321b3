package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary one of the only-writer
// test's processes.
const (
	onlyWriterRoleEnv  = "PLENUM_ONLYWRITER_ROLE" // "first" or "next"
	onlyWriterFileEnv  = "PLENUM_ONLYWRITER_FILE"
	onlyWriterPointEnv = "PLENUM_ONLYWRITER_POINT"
)

const (
	owPrefix = "ow_"
	owAudit  = owPrefix + "audit"
	owItems  = 40 // half fenced ("audited"), half completed by the worker's batches ("plain")
	owBefore = 8  // transactions at the point that commit before the one killed in it
)

// TestCrash_OnlyWriterKilledMidTransaction_NextProcessResumes kills the
// only process that has a SQLite file open (a worker draining items, half
// of them writing an audit row in the fence that completes them) while it
// is inside a write transaction: in a fence before its commit, and in a
// completion between the items' update and the barriers' count. The file
// and its write-ahead log survive; the next process to open the file (no
// other opened it meanwhile) finds no audit row without its completion
// and no completion without its audit row, its reaper releases the dead
// process's claims as crashes, and it finishes the work: every item
// completed, one audit row each.
func TestCrash_OnlyWriterKilledMidTransaction_NextProcessResumes(t *testing.T) {
	if role := os.Getenv(onlyWriterRoleEnv); role != "" {
		if err := onlyWriter(role, os.Getenv(onlyWriterFileEnv), fault.Point(os.Getenv(onlyWriterPointEnv))); err != nil {
			fmt.Fprintln(os.Stderr, "only writer:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	for _, point := range []fault.Point{fault.FenceBeforeCommit, fault.CompleteBeforeArrival} {
		t.Run(string(point), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "only.db")
			env := []string{onlyWriterFileEnv + "=" + file, onlyWriterPointEnv + "=" + string(point)}
			first := crashtest.Start(t, "TestCrash_OnlyWriterKilledMidTransaction_NextProcessResumes", append(env, onlyWriterRoleEnv+"=first")...)
			first.Await(t, 2*time.Minute, "blocking inside a transaction", func(line string) bool { return strings.HasPrefix(line, "blocked ") })
			first.Kill(t)
			_, walErr := os.Stat(file + "-wal")
			t.Logf("killed the only writer (pid %d) inside a transaction at %s; its write-ahead log left behind: %v", first.Pid(), point, walErr == nil)

			next := crashtest.Start(t, "TestCrash_OnlyWriterKilledMidTransaction_NextProcessResumes", append(env, onlyWriterRoleEnv+"=next")...)
			line := next.Await(t, 2*time.Minute, "what it found", func(line string) bool { return strings.HasPrefix(line, "found ") })
			var found owFound
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "found ")), &found); err != nil {
				t.Fatal(err)
			}
			t.Logf("the next process found %+v", found)
			if found.Unmatched != 0 {
				t.Errorf("the next process found %d audit rows without their item's completion or fenced completions without their audit row", found.Unmatched)
			}
			if found.Claimed == 0 || found.Completed < owBefore || found.Completed == owItems {
				t.Errorf("the next process found %d items claimed, %d completed; want the killed process's claims held and the run half done", found.Claimed, found.Completed)
			}
			next.Await(t, 2*time.Minute, "the work finished", func(line string) bool { return strings.HasPrefix(line, "finished") })
			next.Kill(t) // it has closed the file: wait for its end

			db, err := sqlite.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var completed, crashed, audit, distinct int
			if err := db.QueryRow("SELECT COUNT(*) FROM " + owPrefix + "items WHERE state = 'completed'").Scan(&completed); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT COUNT(*) FROM " + owPrefix + "items WHERE crash_count = 1").Scan(&crashed); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT id) FROM "+owAudit).Scan(&audit, &distinct); err != nil {
				t.Fatal(err)
			}
			if completed != owItems || audit != owItems/2 || distinct != owItems/2 {
				t.Errorf("in the end: %d of %d items completed, %d audit rows (%d distinct) for %d fenced items; want all completed, one row each", completed, owItems, audit, distinct, owItems/2)
			}
			if crashed != found.Claimed {
				t.Errorf("%d items carry one crash, want the %d the killed process held", crashed, found.Claimed)
			}
		})
	}
}

// owFound is what the next process found on opening the file.
type owFound struct {
	Completed, Claimed int
	// Unmatched counts audit rows whose item is not completed, and
	// completed fenced items without an audit row.
	Unmatched int
}

// owConfig is the worker configuration of both processes. StaleAfter is
// what the next process waits before its reaper takes the dead one's
// claims, and what a loaded machine must not reach between two
// heartbeats of a live worker.
func owConfig() worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{"q": {MaxWorkers: 4}},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		StaleAfter:        5 * time.Second,
		ReapInterval:      200 * time.Millisecond,
		DefaultKind:       worker.KindConfig{Timeout: time.Minute, Backoff: func(int) time.Duration { return 0 }},
	}
}

// onlyWriter plays one process of the test: the first migrates a new
// file, enqueues the items and runs them until a transaction blocks at
// point, where it is killed; the next opens the file, says what it
// found, and runs the rest.
func onlyWriter(role, file string, point fault.Point) error {
	ctx := context.Background()
	db, err := sqlite.Open(file)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Prefix: owPrefix, Migrate: role == "first"})
	if err != nil {
		return err
	}
	if role == "first" {
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+owAudit+" (id TEXT NOT NULL)"); err != nil {
			return err
		}
		specs := make([]core.ItemSpec, owItems)
		for i := range specs {
			specs[i] = core.ItemSpec{Queue: "q", Kind: []string{"audited", "plain"}[i%2]}
		}
		if _, err := store.Enqueue(ctx, specs...); err != nil {
			return err
		}
		fault.Set(point, fault.Rule{Action: fault.Call, Skip: owBefore, Times: 1, Func: func(context.Context) error {
			fmt.Println("blocked", point)
			select {} // killed here, inside the transaction
		}})
	} else {
		found, err := owInspect(ctx, store)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(found)
		fmt.Println("found", string(b))
	}
	w, err := worker.New(store, owConfig())
	if err != nil {
		return err
	}
	w.HandleFunc("audited", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, "INSERT INTO "+owAudit+" (id) VALUES (?)", job.ID().String())
			return err
		})
	})
	w.HandleFunc("plain", func(ctx context.Context, job *worker.Job[json.RawMessage]) error { return nil })
	if err := w.Start(ctx); err != nil {
		return err
	}
	if role == "first" {
		<-w.Done() // killed before
		return fmt.Errorf("the worker stopped before a transaction reached %s: %v", point, w.Err())
	}
	for {
		counts, err := store.Counts(ctx, "q")
		if err != nil {
			return err
		}
		if counts[core.StateCompleted] == owItems {
			break
		}
		select {
		case <-w.Done():
			return fmt.Errorf("the worker stopped with %v: %v", counts, w.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Println("finished")
	return nil
}

// owInspect reads what the killed process left: its items' states, and
// the audit rows against the fenced items' completions.
func owInspect(ctx context.Context, store *core.Store) (owFound, error) {
	var f owFound
	db := store.DB()
	rows, err := db.QueryContext(ctx, "SELECT id, kind, state FROM "+owPrefix+"items")
	if err != nil {
		return f, err
	}
	done := map[string]bool{} // the fenced items, by whether completed
	for rows.Next() {
		var id uuid.UUID
		var kind, state string
		if err := rows.Scan(&id, &kind, &state); err != nil {
			rows.Close()
			return f, err
		}
		switch state {
		case "completed":
			f.Completed++
		case "claimed":
			f.Claimed++
		}
		if kind == "audited" {
			done[id.String()] = state == "completed"
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return f, err
	}
	rows, err = db.QueryContext(ctx, "SELECT id FROM "+owAudit)
	if err != nil {
		return f, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return f, err
		}
		if !done[id] {
			f.Unmatched++ // an effect without its completion
		}
		delete(done, id)
	}
	for _, completed := range done {
		if completed {
			f.Unmatched++ // a fenced completion without its effect
		}
	}
	return f, rows.Err()
}
