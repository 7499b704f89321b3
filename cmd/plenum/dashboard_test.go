package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

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

// newDashboardDB makes an SQLite file holding the store's tables and an
// item of queue cli-queue, and returns its path.
func newDashboardDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(t.Context(), core.ItemSpec{Queue: "cli-queue"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDashboard_ServesAndStopsOnCancel starts the command on an SQLite
// file, loads a page through the address it prints, and stops it the way
// SIGINT does (the command's context ends).
func TestDashboard_ServesAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	path := newDashboardDB(t)

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
	if code := <-done; code != cmdline.ExitOK {
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
		if code != cmdline.ExitUsage || !strings.Contains(errOut, "--actions") {
			t.Errorf("--listen %s --actions: exit %d, want %d; stderr: %s", listen, code, cmdline.ExitUsage, errOut)
		}
	}
	for _, args := range [][]string{
		{"dashboard"},
		{"dashboard", "--db", file, "--listen", "nonsense"},
		{"dashboard", "--db", file, "--prefix", "Bad-Prefix"},
		{"dashboard", "--db", file, "extra"},
	} {
		if code, _, errOut := cli(t, args...); code != cmdline.ExitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, cmdline.ExitUsage, errOut)
		}
	}
	assertEmptyDir(t, dir)
	for _, h := range []string{"127.0.0.1", "::1", "localhost", "127.1.2.3"} {
		if !loopback(h) {
			t.Errorf("loopback(%q) = false", h)
		}
	}
}

// startDashboard runs the dashboard command until it prints the address
// it serves at, or exits. It returns that address ("" when it exited), the
// exit code (-1 while it runs) and a stop that ends it and returns what it
// printed.
func startDashboard(t *testing.T, args ...string) (url string, code int, stop func() (stdout, stderr string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"dashboard"}, args...), &out, &errOut) }()
	stopped := false
	stop = func() (string, string) {
		cancel()
		if !stopped {
			stopped = true
			code = <-done
		}
		return out.String(), errOut.String()
	}
	t.Cleanup(func() { stop() })
	urlRE := regexp.MustCompile(`at (http://\S+/)`)
	for {
		select {
		case code = <-done:
			stopped = true
			return "", code, stop
		case <-time.After(20 * time.Millisecond):
		}
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			return m[1], -1, stop
		}
	}
}

// TestDashboard_RefusesNetworkWithoutExposeFlag: the command has no login,
// so an address reachable from other machines is a usage error unless
// --expose-without-auth says so, before any database is opened.
func TestDashboard_RefusesNetworkWithoutExposeFlag(t *testing.T) {
	t.Parallel()
	existing := newDashboardDB(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		url, code, stop := startDashboard(t, "--db", existing, "--listen", listen)
		_, errOut := stop()
		if url != "" || code != cmdline.ExitUsage || !strings.Contains(errOut, "--expose-without-auth") {
			t.Errorf("--listen %s: served at %q, exit %d, want %d; stderr: %s", listen, url, code, cmdline.ExitUsage, errOut)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "x.db")
	// Actions stay loopback only, exposed or not.
	code, _, errOut := cli(t, "dashboard", "--db", file, "--listen", "0.0.0.0:0", "--expose-without-auth", "--actions")
	if code != cmdline.ExitUsage || !strings.Contains(errOut, "--actions") {
		t.Errorf("--expose-without-auth --actions: exit %d, want %d; stderr: %s", code, cmdline.ExitUsage, errOut)
	}
	for _, args := range [][]string{
		{"--allow-host", "http://x.example"},
		{"--allow-host", "x.example:80"},
	} {
		if code, _, errOut := cli(t, append([]string{"dashboard", "--db", file}, args...)...); code != cmdline.ExitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, cmdline.ExitUsage, errOut)
		}
	}
	assertEmptyDir(t, dir)
}

// TestDashboard_ExposedSaysWhatAndOnlyIPv4: with --expose-without-auth,
// 0.0.0.0 is served on IPv4 alone, the command warns what it exposes, and
// the Host check admits the names given with --allow-host.
func TestDashboard_ExposedSaysWhatAndOnlyIPv4(t *testing.T) {
	t.Parallel()
	url, code, stop := startDashboard(t, "--db", newDashboardDB(t), "--listen", "0.0.0.0:0", "--expose-without-auth", "--allow-host", "plenum.test")
	if url == "" {
		out, errOut := stop()
		t.Fatalf("exit %d before serving: %s%s", code, out, errOut)
	}
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	get := func(host string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("plenum.test:" + port); c != http.StatusOK {
		t.Errorf("Host plenum.test: %d, want 200", c)
	}
	if c := get("rebind.attacker.example:" + port); c != http.StatusMisdirectedRequest {
		t.Errorf("Host rebind.attacker.example: %d, want 421", c)
	}
	if conn, err := net.Dial("tcp6", "[::1]:"+port); err == nil {
		conn.Close()
		t.Errorf("--listen 0.0.0.0 also listens on IPv6 (::1:%s answered)", port)
	}
	out, errOut := stop()
	for _, want := range []string{"WARNING", "no authentication", "payloads", "0.0.0.0:" + port, "IPv4"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("the warning lacks %q:\n%s%s", want, out, errOut)
		}
	}
}
