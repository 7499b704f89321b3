package browsertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/plenumdb/plenum/dashboard"
)

// userHeader is what the tests' Authorize hook asks of every request; the
// browser sends it (network.SetExtraHTTPHeaders) once signed in.
const userHeader = "X-Dashboard-User"

// serve serves the workload's dashboard, given its pipelines, under prefix ("" for the root):
// with Options.Prefix when viaOption, else behind http.StripPrefix, as a
// user's own server would mount it. With actions, Authorize admits only
// requests carrying userHeader.
func serve(t *testing.T, wl *workload, prefix string, viaOption, actions bool) string {
	t.Helper()
	opts := dashboard.Options{Actions: actions, Pipelines: wl.graphs}
	if actions {
		opts.Authorize = func(r *http.Request) error {
			if r.Header.Get(userHeader) != "ops" {
				return errors.New("not signed in")
			}
			return nil
		}
	}
	if viaOption {
		opts.Prefix = prefix
	}
	h, err := dashboard.New(wl.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	switch {
	case prefix == "":
		mux.Handle("/", h)
	case viaOption:
		mux.Handle(prefix+"/", h)
		mux.Handle(prefix, h)
	default:
		mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	}
	// The user's own page beside the dashboard, for the links to leave
	// alone.
	mux.HandleFunc("/app", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the app")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + prefix
}

// signIn makes the browser send the header the Authorize hook wants.
func (b *browser) signIn(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{userHeader: "ops"}})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
}

// page is a loaded page: its status, text and the rows of its tables.
type page struct {
	Status int
	URL    string
	Text   string
}

// open navigates to url and returns the page, failing t on a network
// error; the status is the caller's to check.
func (b *browser) open(t *testing.T, url string) page {
	t.Helper()
	resp := value(t, b, "open "+url, chromedp.NavigateResponse(url))
	return b.current(t, int(resp.Status))
}

// click clicks the first element sel matches and waits for the page it
// leads to.
func (b *browser) click(t *testing.T, sel string) page {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	return b.current(t, int(resp.Status))
}

func (b *browser) current(t *testing.T, status int) page {
	t.Helper()
	return page{
		Status: status,
		URL:    value(t, b, "location", chromedp.Location()),
		Text:   value(t, b, "text", chromedp.Evaluate[string](`document.body.innerText`)),
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	return value(t, b, expr, chromedp.Evaluate[T](expr))
}

// ids are the data-id attributes of the rows sel matches.
func (b *browser) ids(t *testing.T, sel string) []string {
	t.Helper()
	return eval[[]string](t, b, `Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.dataset.id)`)
}

// count is how many elements sel matches.
func (b *browser) count(t *testing.T, sel string) int {
	t.Helper()
	return eval[int](t, b, `document.querySelectorAll(`+jsString(sel)+`).length`)
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// checkClean fails t when the page ran script it should not have, or
// logged errors (a blocked asset, a CSP refusal, an exception).
func (b *browser) checkClean(t *testing.T, where string) {
	t.Helper()
	if got := eval[string](t, b, `typeof window.__xss`); got != "undefined" {
		t.Errorf("%s: a payload ran as script: window.__xss is %s", where, got)
	}
	// Console messages come on their own goroutine: give the last ones a
	// moment to arrive (no assertion is timed: an error that comes later
	// is still reported by the next page's check).
	time.Sleep(50 * time.Millisecond)
	for _, e := range b.takeErrors() {
		// The browser asks the origin's root for /favicon.ico by itself;
		// under a prefix that root is the user's server, not the
		// dashboard.
		if strings.HasSuffix(e, "/favicon.ico") {
			continue
		}
		t.Errorf("%s: %s", where, e)
	}
}

// screenshotDir is PLENUM_SCREENSHOTS, or a directory of t's.
func screenshotDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PLENUM_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// screenshot saves a full-page PNG of the current page as dir/name.png.
func (b *browser) screenshot(t *testing.T, dir, name string) string {
	t.Helper()
	png := value(t, b, "screenshot "+name, chromedp.FullScreenshot(100))
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: not a PNG (%d bytes)", name, len(png))
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustContain fails t for each of want missing from p's text.
func (p page) mustContain(t *testing.T, where string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.Text, w) {
			t.Errorf("%s (%s): no %q in the page:\n%s", where, p.URL, w, clip(p.Text))
		}
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// sameSet reports whether a and b hold the same strings, ignoring order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
