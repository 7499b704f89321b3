package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRun_ServesMetrics runs the program and scrapes /metrics over HTTP
// until the work it makes shows: emails completed, reports fanned in
// (barriers fired), handler latencies and queue depths.
func TestRun_ServesMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", filepath.Join(t.TempDir(), "jobs.db"), func(a string) { addrs <- a })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("run did not start serving")
	}
	want := []string{
		`plenum_worker_outcomes_total{kind="email.send",outcome="completed",queue="email"}`,
		`plenum_worker_outcomes_total{kind="report.page",outcome="completed",queue="reports"}`,
		`plenum_barriers_fired_total{join="available",queue="reports"}`,
		`plenum_worker_handler_duration_seconds_count{kind="email.send",outcome="completed",queue="email"}`,
		`plenum_queue_depth{queue="email",state="completed"}`,
		`go_goroutines`,
	}
	var body string
	for end := time.Now().Add(30 * time.Second); ; {
		body = scrape(t, "http://"+addr+"/metrics")
		missing := ""
		for _, w := range want {
			if !hasPositive(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after 30 s, /metrics has no positive %s:\n%s", missing, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop")
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(b)
}

// hasPositive reports whether the exposition has series with a value
// above zero.
func hasPositive(body, series string) bool {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, series+" ")
		if ok && rest != "0" {
			return true
		}
	}
	return false
}
