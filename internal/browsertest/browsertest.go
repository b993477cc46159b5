// Package browsertest starts a headless Chromium (Debian's `chromium`
// package) for tests of the hosted pages, driven with chromedp.
//
// Without a browser a test is skipped with a message saying how to install
// one, except in CI (environment CI=true, as .ci/run sets it), where a missing
// browser fails the test: CI installs it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// candidates are the executable names tried, in order (CHROMIUM_PATH first
// when set).
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Path returns the browser executable, or "" when none is installed.
func Path() string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New returns a browser tab's context (chromedp.Do/Run on it) that lives
// until the test ends, or skips/fails the test when no browser is installed.
// extra options are added to the defaults (a window size, say).
func New(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("browsertest: no Chromium found, and CI=true requires it (.ci/run installs Debian's chromium)")
		}
		t.Skip("browsertest: no Chromium found; install it (apt-get install -y chromium) or set CHROMIUM_PATH to run the hosted-page browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests may run as root in containers
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser (no timeout: it would bound the browser's life)
		cancelTab()
		cancelAlloc()
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	return ctx
}
