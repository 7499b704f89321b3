package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// inspect shows counts per queue and state, barriers, and owners with
// their heartbeat age, on SQLite and on each server database the
// environment names.
func TestInspect_ShowsQueuesBarriersOwners(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, checkInspect)
}

// onEachDatabase runs check on a new SQLite file and on each server
// database the environment names (under a random prefix, dropped at the
// end), with the inspect options that name the database and the words
// inspect's header uses for it.
func onEachDatabase(t *testing.T, check func(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, o inspectOptions, where string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "app.db")
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, db, sqlite.Dialect(), "plenum_", inspectOptions{Database: cmdline.Database{DB: path}}, "in "+path+":")
	})
	for _, name := range []string{postgres.Name, mysql.Name} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := conformance.Harness{Name: name}.DSN(t)
			r, err := dialect.Registered(name)
			if err != nil {
				t.Fatal(err)
			}
			db, err := r.Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() }) // after the drop below
			d, err := dialect.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			prefix := fmt.Sprintf("pi%08x_", rand.Uint32())
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(ctx, db, d, prefix); err != nil {
					t.Errorf("drop %s tables: %v", prefix, err)
				}
			})
			check(t, db, d, prefix, inspectOptions{Database: cmdline.Database{Dialect: name, DSN: dsn}}, "in the "+name+" database:")
		})
	}
}

// checkInspect fills the tables under prefix in db and checks what inspect,
// with o naming db, prints.
func checkInspect(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, o inspectOptions, where string) {
	t.Helper()
	ctx := context.Background()
	owner := fillInspected(t, db, d, prefix)

	var out bytes.Buffer
	o.Prefix, o.Limit = prefix, 20
	if err := runInspect(ctx, &out, o); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		regexp.QuoteMeta(where) + ` schema version ` + fmt.Sprint(migrations.LatestVersion),
		`Items \(2 queues\)`,
		`mail +2 +1 +0 +0 +0 +3\n`,
		`parent +2 +1 +0 +0 +0 +3\n`, // the parent and its two children
		`Barriers \(1, newest first\)`,
		`fan +2 +0 +0 +yes +no +-`,
		`Unfired barriers \(1, oldest first`,
		`fan +[\d.]+m?s ago +2 +0 +0 +yes\n`,
		`Owners \(1,`,
		owner.String() + ` +inspect-worker +inspect-host +\d+ +[\d.]+m?s ago +[\d.]+m?s ago`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("output does not match %q:\n%s", want, s)
		}
	}
}

func TestInspect_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	db, err := sqlite.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, c := range []struct {
		o    inspectOptions
		want string
	}{
		{inspectOptions{Database: cmdline.Database{DB: filepath.Join(dir, "missing.db"), Prefix: "plenum_"}, Limit: 5}, "no database file at"},
		{inspectOptions{Database: cmdline.Database{DB: dir, Prefix: "plenum_"}, Limit: 5}, "is a directory"},
		{inspectOptions{Database: cmdline.Database{DB: empty, Prefix: "plenum_"}, Limit: 5}, "no Plenum tables under prefix plenum_"},
		{inspectOptions{Database: cmdline.Database{DB: empty, Prefix: "-"}, Limit: 5}, "--prefix"},
		{inspectOptions{Database: cmdline.Database{Prefix: "plenum_"}, Limit: 5}, "--db FILE for an SQLite file, or --dialect NAME --dsn DSN"},
		{inspectOptions{Database: cmdline.Database{DSN: "x", Prefix: "plenum_"}, Limit: 5}, "give --dialect"},
		{inspectOptions{Database: cmdline.Database{Dialect: "postgres", DB: empty, Prefix: "plenum_"}, Limit: 5}, "--db names a database file; for postgres give --dsn"},
		{inspectOptions{Database: cmdline.Database{Dialect: "mysql", Prefix: "plenum_"}, Limit: 5}, "missing --dsn"},
		{inspectOptions{Database: cmdline.Database{Dialect: "oracle", DSN: "x", Prefix: "plenum_"}, Limit: 5}, "oracle: invalid DSN"},
	} {
		err := runInspect(context.Background(), &bytes.Buffer{}, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("inspect created the database file it was asked to read")
	}
}

// fillInspected makes, under prefix in db, two queues ("mail" with one of
// its three items claimed, and "parent" with a parent expanded into two
// children), the barrier "fan", and the owner "inspect-worker" on host
// "inspect-host", whose id it returns.
func fillInspected(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "inspect-host", Name: "inspect-worker"})
	if err != nil {
		t.Fatal(err)
	}
	specs := []core.ItemSpec{{Queue: "mail"}, {Queue: "mail"}, {Queue: "mail"}, {Queue: "parent"}}
	if _, err := st.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, core.ClaimParams{Queue: "mail", Owner: owner, Limit: 1, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ps, err := st.Claim(ctx, core.ClaimParams{Queue: "parent", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(ps) != 1 {
		t.Fatal(len(ps), err)
	}
	_, err = st.Expand(ctx, ps[0], core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "joins"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "a"}, {Key: "b"}}, Done: true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// The library's errors start with "plenum: " as the command's own
// messages do: the command prints the prefix once.
func TestInspect_OutdatedSchemaSaysPlenumOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	for _, args := range [][]string{
		{"migrate", "up", "--dialect", "sqlite", "--dsn", path},
		{"migrate", "down", "--dialect", "sqlite", "--dsn", path, "--to", "1"},
	} {
		if code, _, errOut := cli(t, args...); code != cmdline.ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
	}
	code, _, errOut := cli(t, "inspect", "--db", path)
	if code != cmdline.ExitFailure || !strings.HasPrefix(errOut, "plenum: schema is not up to date") || strings.Contains(errOut, "plenum: plenum:") {
		t.Errorf("inspect of an outdated schema: exit %d, stderr %q; want %d and one \"plenum: \" before the schema's message", code, errOut, cmdline.ExitFailure)
	}
}
