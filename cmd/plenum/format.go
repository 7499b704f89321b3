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

// commas formats n with thousands separators: 10000 -> "10,000".
func commas[T ~int | ~int64 | ~uint64](n T) string { return cmdline.Commas(n) }

// rate formats n events over d as a number per second.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "n/a"
	}
	return commas(int64(float64(n) / d.Seconds()))
}

// seconds formats d as seconds with two decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// plural returns n and word, with an s unless n is 1.
func plural[T ~int | ~int64](n T, word string) string { return cmdline.Plural(n, word) }

// shellQuote quotes path for a shell when it needs it.
func shellQuote(path string) string {
	if strings.ContainsAny(path, " \t\n'\"\\$`!*?&;|<>(){}[]#~") {
		return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return path
}
