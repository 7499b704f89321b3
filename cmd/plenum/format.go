package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// syncWriter serializes writes from the goroutines of a run, so that lines
// never interleave.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p whole, while no other goroutine writes.
func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// rate formats n events over d as a number per second.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "n/a"
	}
	return cmdline.Commas(int64(float64(n) / d.Seconds()))
}

// seconds formats d as seconds with two decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// shellQuote quotes path for a shell when it needs it.
func shellQuote(path string) string {
	if strings.ContainsAny(path, " \t\n'\"\\$`!*?&;|<>(){}[]#~") {
		return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return path
}
