package main

import (
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

func TestChaos_BadFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"chaos", "--workers", "0"}, "--workers"},
		{[]string{"chaos", "--slots", "0"}, "--slots"},
		{[]string{"chaos", "--duration", "0s"}, "--duration"},
		{[]string{"chaos", "--drain", "-1s"}, "--drain"},
		{[]string{"chaos", "--items", "-5"}, "--items"},
		{[]string{"chaos", "--stale-after", "1s"}, "--stale-after"},
		{[]string{"chaos", "--dialect", "nope"}, "--dialect"},
		{[]string{"chaos", "--dialect", "postgres"}, "--dsn"},
		{[]string{"chaos", "--prefix", "Bad-Prefix"}, "--prefix"},
		{[]string{"chaos", "extra"}, "unexpected argument"},
		// The faults of the network and the server: a private server only.
		{[]string{"chaos", "--dialect", "postgres", "--dsn", "postgres://u@h/db", "--restart-every", "30s"}, "--private"},
		{[]string{"chaos", "--partition-every", "30s"}, "--private"},
		{[]string{"chaos", "--dialect", "postgres", "--dsn", "postgres://u@h/db", "--failover", "sync"}, "--private"},
		{[]string{"chaos", "--private", "--dialect", "postgres", "--dsn", "postgres://u@h/db"}, "--dsn"},
		{[]string{"chaos", "--private"}, "--dialect"},
		{[]string{"chaos", "--private", "--dialect", "postgres", "--failover", "maybe"}, "--failover"},
		{[]string{"chaos", "--private", "--dialect", "mysql", "--failover", "sync"}, "--failover"},
	} {
		code, _, errOut := cli(t, tc.args...)
		if code != cmdline.ExitUsage {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", tc.args, code, cmdline.ExitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.says) {
			t.Errorf("%q: stderr does not name %s:\n%s", tc.args, tc.says, errOut)
		}
	}
}
