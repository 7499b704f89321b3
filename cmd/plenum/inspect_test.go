package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// inspect shows counts per queue and state, barriers, and owners with
// their heartbeat age.
func TestInspect_ShowsQueuesBarriersOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.RegisterOwner(ctx, core.OwnerParams{Host: "inspect-host"})
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

	var out bytes.Buffer
	if err := runInspect(ctx, &out, inspectOptions{DB: path, Prefix: "plenum_", Limit: 20}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		`schema version 1`,
		`Items \(2 queues\)`,
		`mail +2 +1 +0 +0 +0 +3\n`,
		`parent +2 +1 +0 +0 +0 +3\n`, // the parent and its two children
		`Barriers \(1, newest first\)`,
		`fan +2 +0 +0 +yes +no +-`,
		`Owners \(1,`,
		owner.String() + ` +inspect-host +\d+ +\d+ms ago +\d+ms ago`,
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
		{inspectOptions{DB: filepath.Join(dir, "missing.db"), Prefix: "plenum_", Limit: 5}, "no database file at"},
		{inspectOptions{DB: dir, Prefix: "plenum_", Limit: 5}, "is a directory"},
		{inspectOptions{DB: empty, Prefix: "plenum_", Limit: 5}, "no Plenum tables under prefix plenum_"},
		{inspectOptions{DB: empty, Prefix: "-", Limit: 5}, "--prefix"},
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
