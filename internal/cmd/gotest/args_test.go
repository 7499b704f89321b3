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
		{[]string{"-race", "./..."}, "test -json -timeout 25m -race ./..."},
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
