package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium; PLENUM_CHROMIUM names another.
func chromiumPath() string {
	if p := os.Getenv("PLENUM_CHROMIUM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return "/usr/bin/chromium"
}

// required reports whether PLENUM_REQUIRE names chromium: then a missing
// browser fails the test instead of skipping it.
func required() bool {
	for _, s := range strings.Split(os.Getenv("PLENUM_REQUIRE"), ",") {
		if strings.TrimSpace(s) == "chromium" {
			return true
		}
	}
	return false
}

// browser is one headless Chromium with a fresh profile, and the
// console errors and uncaught exceptions its pages reported.
type browser struct {
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

// newBrowser starts headless Chromium for t, or skips t when there is
// none (fails, when PLENUM_REQUIRE names chromium). The flags keep it from
// reaching for the network, which on a closed network makes it hang on
// start; the profile is new for every test.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath()
	if _, err := os.Stat(path); err != nil {
		if required() {
			t.Fatalf("PLENUM_REQUIRE names chromium, but there is none at %s: %v", path, err)
		}
		t.Skipf("no Chromium at %s (install Debian's chromium, or set PLENUM_CHROMIUM): %v", path, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first Do starts the browser and binds it to ctx, which has no
	// deadline; each later step gets its own (run).
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start Chromium %s: %v", path, err)
		}
	case <-time.After(2 * time.Minute):
		// A browser that has not answered in two minutes is broken, not slow.
		t.Fatalf("Chromium %s did not start in two minutes", path)
	}
	b := &browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.addError(m.String() + " at " + m.URL)
			}
		}
	}()
	return b
}

func (b *browser) addError(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

// takeErrors returns the errors reported since the last call.
func (b *browser) takeErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.errors
	b.errors = nil
	return e
}

// do runs steps with a bound, failing t on error.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action with a bound and returns its value, failing t on
// error.
func value[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}
