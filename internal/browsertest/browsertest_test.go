package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The browser loads a page and runs its script.
func TestNew_LoadsAPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>t</title><p id="x">hello</p>`))
	}))
	defer srv.Close()
	ctx := New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#x")))
	if err != nil {
		t.Fatal(err)
	}
	if text != "hello" {
		t.Fatalf("text %q", text)
	}
}

// Without a browser a test skips, except under CI=true where it fails: the
// test binary runs itself with no browser on PATH.
func TestNew_WithoutBrowser_SkipsOrFailsInCI(t *testing.T) {
	if os.Getenv("BROWSERTEST_CHILD") != "" {
		New(t)
		t.Fatal("New returned without a browser")
	}
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNew_WithoutBrowser_SkipsOrFailsInCI$", "-test.v")
		cmd.Env = append(os.Environ(), "BROWSERTEST_CHILD=1", "PATH="+t.TempDir(), "CHROMIUM_PATH=", "CI="+ci)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP") || !strings.Contains(out, "apt-get install -y chromium") {
		t.Fatalf("outside CI: %v\n%s", err, out)
	}
	out, err = run("true")
	if err == nil || !strings.Contains(out, "--- FAIL") || !strings.Contains(out, "CI=true requires it") {
		t.Fatalf("in CI: %v\n%s", err, out)
	}
}
