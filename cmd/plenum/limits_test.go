package main

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// limits sets, lists and deletes a queue's limits, on SQLite and on each
// server database the environment names; input the store refuses is a
// usage error that says why, and changes nothing.
func TestLimits_SetListDelete(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, checkLimits)
}

func checkLimits(t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, o inspectOptions, _ string) {
	ctx := context.Background()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(ctx, core.ItemSpec{Queue: "mail", FlowKey: "acme"}, core.ItemSpec{Queue: "mail", FlowKey: "acme"},
		core.ItemSpec{Queue: "mail", FlowKey: "zeta"}); err != nil {
		t.Fatal(err)
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "h", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	dbArgs := []string{"--prefix", prefix}
	if o.DB != "" {
		dbArgs = append(dbArgs, "--db", o.DB)
	} else {
		dbArgs = append(dbArgs, "--dialect", o.Dialect, "--dsn", o.DSN)
	}
	limits := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(append([]string{"limits"}, args...), dbArgs...)...)
		if code != want {
			t.Fatalf("limits %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
		}
		return out + errOut
	}
	out := limits(cmdline.ExitOK, "set", "--queue", "mail", "--concurrency", "1")
	if !strings.Contains(out, "Set the default limit of queue mail: concurrency 1") {
		t.Errorf("set default: %s", out)
	}
	out = limits(cmdline.ExitOK, "set", "--queue", "mail", "--key", "zeta", "--rate", "10", "--per", "1m", "--burst", "2", "--weight", "3", "--per-process", "4")
	if !strings.Contains(out, "Set the limit of key zeta of queue mail: per process 4, rate 10/1m0s burst 2, weight 3") {
		t.Errorf("set zeta: %s", out)
	}
	if _, err := st.Claim(ctx, core.ClaimParams{Queue: "mail", Owner: owner, Limit: 10, Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	out = limits(cmdline.ExitOK, "list", "--queue", "mail")
	for _, want := range []string{
		`Default limit: concurrency 1\n`,
		`KEY +LIMIT +FROM +SLOTS IN USE +WAITING +NEXT TURN\n`,
		`acme +concurrency 1 +default +1/1 +1 +now\n`,
		`zeta +per process 4, rate 10/1m0s burst 2, weight 3 +own +1 +0 +no work\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list does not match %q:\n%s", want, out)
		}
	}
	out = limits(cmdline.ExitOK, "list", "--queue", "mail", "--limit", "1")
	if !strings.Contains(out, `More: --after "acme"`) || strings.Contains(out, "zeta") {
		t.Errorf("a page of 1:\n%s", out)
	}
	if out = limits(cmdline.ExitOK, "list", "--queue", "mail", "--after", "acme"); !strings.Contains(out, "zeta") || strings.Contains(out, "acme ") {
		t.Errorf("the page after acme:\n%s", out)
	}
	// Refused input: a usage error naming the field; nothing changed.
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--concurrency", "-1"}, "invalid Concurrency: -1 is outside"},
		{[]string{"--rate", "5"}, "invalid Per: 0s is outside"},
		{[]string{"--weight", "1001"}, "invalid Weight"},
	} {
		out := limits(cmdline.ExitUsage, append([]string{"set", "--queue", "mail", "--key", "zeta"}, bad.args...)...)
		if !strings.Contains(out, bad.says) {
			t.Errorf("set %v: %s, want %q", bad.args, out, bad.says)
		}
	}
	limits(cmdline.ExitUsage, "set", "--key", "zeta")
	limits(cmdline.ExitOK, "delete", "--queue", "mail", "--key", "zeta")
	limits(cmdline.ExitOK, "delete", "--queue", "mail")
	ls, err := st.Limits(ctx, "mail")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 0 {
		t.Errorf("limits after the deletes: %+v", ls)
	}
	if out = limits(cmdline.ExitOK, "list", "--queue", "mail"); !regexp.MustCompile(`Default limit: none\n(.|\n)*zeta +no limit +none`).MatchString(out) {
		t.Errorf("list after the deletes:\n%s", out)
	}
}

// limits without a subcommand, or with an unknown one, is a usage error;
// each subcommand has its -h.
func TestLimits_Usage(t *testing.T) {
	t.Parallel()
	if code, _, errOut := cli(t, "limits"); code != cmdline.ExitUsage || !strings.Contains(errOut, "Usage: plenum limits") {
		t.Errorf("limits: exit %d\n%s", code, errOut)
	}
	if code, _, _ := cli(t, "limits", "frob"); code != cmdline.ExitUsage {
		t.Errorf("limits frob: exit %d", code)
	}
	for _, sub := range []string{"list", "set", "delete"} {
		code, _, errOut := cli(t, "limits", sub, "-h")
		if code != cmdline.ExitOK || !strings.Contains(errOut, "-queue") || !strings.Contains(errOut, "-dsn") {
			t.Errorf("limits %s -h: exit %d\n%s", sub, code, errOut)
		}
	}
}
