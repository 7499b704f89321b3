package main

import (
	"strings"
	"testing"
)

func TestTestArgs_TimeoutUnlessSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"./..."}, "test -json -timeout 25m ./..."},
		{[]string{"-timeout", "5m", "./..."}, "test -json -timeout 5m ./..."},
		{[]string{"-timeout=5m", "./..."}, "test -json -timeout=5m ./..."},
		{[]string{"--timeout=5m", "./..."}, "test -json --timeout=5m ./..."},
		{[]string{"./x", "--", "-timeout", "1s"}, "test -json -timeout 25m ./x -- -timeout 1s"},
	} {
		if got := strings.Join(testArgs(tc.args), " "); got != tc.want {
			t.Errorf("testArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestTestArgs_RaceLeavesSQLiteEngineUninstrumented(t *testing.T) {
	t.Parallel()
	const off = "-gcflags=modernc.org/sqlite/lib=-race=false -gcflags=modernc.org/libc/...=-race=false"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-race", "./..."}, "test -json -timeout 25m " + off + " -race ./..."},
		{[]string{"--race=true", "./..."}, "test -json -timeout 25m " + off + " --race=true ./..."},
		{[]string{"-race=1", "./..."}, "test -json -timeout 25m " + off + " -race=1 ./..."},
		{[]string{"-race=false", "./..."}, "test -json -timeout 25m -race=false ./..."},
		// The caller's own -gcflags decide.
		{[]string{"-race", "-gcflags=all=-N", "./..."}, "test -json -timeout 25m -race -gcflags=all=-N ./..."},
		{[]string{"-race", "-gcflags", "all=-N", "./..."}, "test -json -timeout 25m -race -gcflags all=-N ./..."},
		// Flags of the test binaries are not go test's.
		{[]string{"./x", "--", "-race"}, "test -json -timeout 25m ./x -- -race"},
	} {
		if got := strings.Join(testArgs(tc.args), " "); got != tc.want {
			t.Errorf("testArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
