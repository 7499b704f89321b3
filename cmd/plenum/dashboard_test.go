package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// syncBuffer is a buffer the server goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDashboard_ServesAndStopsOnCancel starts the command on an SQLite
// file, loads a page through the address it prints, and stops it the way
// SIGINT does (the command's context ends).
func TestDashboard_ServesAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(t.Context(), core.ItemSpec{Queue: "cli-queue"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"dashboard", "--db", path, "--listen", "127.0.0.1:0", "--base-path", "/plenum", "--actions"}, &out, &errOut)
	}()
	urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/plenum/)`)
	var url string
	for url == "" {
		select {
		case code := <-done:
			t.Fatalf("dashboard exited %d early: %s%s", code, out.String(), errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-queue="cli-queue"`) || !strings.Contains(string(body), "actions on") {
		t.Errorf("GET %s: %d\n%s", url, resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d after cancel: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "stopped") {
		t.Errorf("no stop line: %s", out.String())
	}
}

// TestDashboard_RefusesActionsOffLoopback: the command has no login, so
// actions on a reachable address are a usage error, before any database
// is opened.
func TestDashboard_RefusesActionsOffLoopback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "x.db")
	for _, listen := range []string{"0.0.0.0:8080", ":8080", "192.0.2.1:8080", "[::]:8080", "example.com:80"} {
		code, _, errOut := cli(t, "dashboard", "--db", file, "--listen", listen, "--actions")
		if code != exitUsage || !strings.Contains(errOut, "--actions") {
			t.Errorf("--listen %s --actions: exit %d, want %d; stderr: %s", listen, code, exitUsage, errOut)
		}
	}
	for _, args := range [][]string{
		{"dashboard"},
		{"dashboard", "--db", file, "--listen", "nonsense"},
		{"dashboard", "--db", file, "--prefix", "Bad-Prefix"},
		{"dashboard", "--db", file, "extra"},
	} {
		if code, _, errOut := cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, errOut)
		}
	}
	assertEmptyDir(t, dir)
	for _, h := range []string{"127.0.0.1", "::1", "localhost", "127.1.2.3"} {
		if !loopback(h) {
			t.Errorf("loopback(%q) = false", h)
		}
	}
}
