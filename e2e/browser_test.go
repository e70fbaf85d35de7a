package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium (Debian's chromium, from
// scripts/browser.sh) with a fresh profile, and what its pages said on
// the console.
type browser struct {
	ctx     context.Context
	mu      sync.Mutex
	console []string
}

// newBrowser starts Chromium for t. It never skips: without OML_CHROMIUM
// the test fails and says how to run it.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := os.Getenv("OML_CHROMIUM")
	if bin == "" {
		t.Fatal("OML_CHROMIUM is not set: run the tests with `make test`, which provides Chromium (scripts/browser.sh)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	b.ctx = ctx
	t.Cleanup(func() { cancelC(); cancelA() })
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, log.Enable, cdp.Empty{})
			return err
		}),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, runtime.Enable, cdp.Empty{})
			return err
		}),
	)
	if err != nil {
		t.Fatalf("start chromium (%s): %v", bin, err)
	}
	return b
}

// listen keeps what the pages write to the console: errors, warnings,
// uncaught exceptions, and the browser's own log (a CSP violation, a
// failed load).
func (b *browser) listen(ev any) {
	var line string
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		line = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			line += " " + e.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value))
			}
			line = string(e.Type) + ": " + strings.Join(args, " ")
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
			line = string(e.Entry.Level) + ": " + e.Entry.Text + " " + e.Entry.URL
		}
	}
	if line != "" {
		b.mu.Lock()
		b.console = append(b.console, line)
		b.mu.Unlock()
	}
}

// do runs actions, bounded.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v (console: %v)", err, b.consoleLines())
	}
}

// get runs one action with a value, bounded.
func get[T any](t *testing.T, b *browser, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v (console: %v)", err, b.consoleLines())
	}
	return v
}

// refused takes from the console the browser's note that the page just
// loaded answered status (a refusal page the test asked for); any other
// line stays for checkPage to report.
func (b *browser) refused(status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := b.console[:0]
	for _, l := range b.console {
		if !strings.Contains(l, fmt.Sprintf("the server responded with a status of %d", status)) {
			keep = append(keep, l)
		}
	}
	b.console = keep
}

func (b *browser) consoleLines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// open navigates to url and waits for the page's main element.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.do(t, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main")))
}

// text returns the visible text of the first element sel (CSS) names.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	return get(t, b, chromedp.Text(chromedp.CSS(sel)))
}

// eval evaluates a JavaScript expression on the page (awaiting a promise).
func evalJS[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	return get(t, b, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// path is the page's URL path.
func (b *browser) path(t *testing.T) string {
	t.Helper()
	return evalJS[string](t, b, `location.pathname`)
}

// press types one key on the page (not into a field).
func (b *browser) press(t *testing.T, k string) {
	t.Helper()
	b.do(t, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(), undefined`), chromedp.KeyEvent(k))
}

// navigate runs actions that lead to another page and waits until that
// page has loaded (the old document is gone).
func (b *browser) navigate(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	b.do(t, chromedp.Evaluate[chromedp.Void](`window.__omlOld = true, undefined`))
	b.do(t, actions...)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		fresh, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__omlOld === undefined && document.readyState === "complete"`))
		cancel()
		if err == nil && fresh {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("browser: no new page after the action (console: %v)", b.consoleLines())
}

// pressTo presses a key that leads to another page and waits for it.
func (b *browser) pressTo(t *testing.T, k string) {
	t.Helper()
	b.navigate(t, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(), undefined`), chromedp.KeyEvent(k))
}

// axeSource is axe-core's script (npm axe-core, installed with the
// interop clients by scripts/node.sh).
var axeSource = sync.OnceValues(func() (string, error) {
	dir := os.Getenv("OML_INTEROP_DIR")
	if dir == "" {
		return "", fmt.Errorf("OML_INTEROP_DIR is not set: run the tests with `make test` (scripts/node.sh installs axe-core)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// checkPage asserts the page at hand passes axe-core with no serious or
// critical violation and that no page so far wrote an error or warning
// to the console; with OML_SCREENSHOTS set it also saves a screenshot.
func (b *browser) checkPage(t *testing.T, name string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatal(err)
	}
	if !evalJS[bool](t, b, `typeof axe !== "undefined"`) {
		b.do(t, chromedp.Evaluate[chromedp.Void](src+"\n;undefined"))
	}
	raw := evalJS[string](t, b, `axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.html).slice(0, 3)}))))`)
	var violations []struct {
		ID     string   `json:"id"`
		Impact string   `json:"impact"`
		Help   string   `json:"help"`
		Nodes  []string `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(raw), &violations); err != nil {
		t.Fatalf("%s: axe result %q: %v", name, raw, err)
	}
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: axe %s (%s): %s %v", name, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}
	if lines := b.consoleLines(); len(lines) > 0 {
		t.Fatalf("%s: the console has errors or warnings: %v", name, lines)
	}
	if dir := os.Getenv("OML_SCREENSHOTS"); dir != "" {
		png := get(t, b, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
