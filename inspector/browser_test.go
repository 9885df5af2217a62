package inspector_test

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/inspector"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the README's screenshots to testdata/screenshots")

// maxScreenshot keeps the committed screenshots small.
const maxScreenshot = 150 << 10

// chromium finds Debian's chromium (scripts/install-deps.sh installs it):
// in CI (CI=true) a missing browser fails the test; elsewhere it skips it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("MEMVAULT_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: scripts/install-deps.sh (make setup) installs Debian's chromium for this test")
	}
	t.Skip("chromium is not installed (scripts/install-deps.sh installs it); skipping the browser test")
	return ""
}

// TestBrowser drives headless Chromium through the inspector as a person
// would: 401 before logging in, the token, a thread with a decrypted value,
// a fork followed, a memory search with scores, the audit view, and a
// hostile value that stays text (no dialog, no image, no CSP violation).
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	f := newFixture(t)
	srv, token := f.server(t)

	// Flags per the machine notes: without the background-networking ones
	// Chromium tries to reach hosts this closed network refuses.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 760),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	var mu sync.Mutex
	var dialogs, violations []string
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, ev.Message)
		case *cdplog.EventEntryAdded:
			if strings.Contains(ev.Entry.Text, "Content Security Policy") || strings.Contains(ev.Entry.Text, "Refused to") {
				violations = append(violations, ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			violations = append(violations, ev.ExceptionDetails.Text)
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelTimeout()

	shots := t.TempDir()
	if *updateScreenshots {
		shots = filepath.Join("testdata", "screenshots")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// run, text and eval end the test at the first error: a step that
	// fails leaves nothing to check after it.
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	count := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return n
	}
	screenshot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if len(png) > maxScreenshot {
			t.Errorf("screenshot %s is %d bytes, over %d", name, len(png), maxScreenshot)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Before logging in: 401.
	run("open a page without the token", chromedp.Navigate(srv.URL+"/threads"))
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if body := text("body"); !strings.Contains(body, "401 unauthorized") {
		t.Errorf("before the token: %q", body)
	}

	// The token: in, and out of the address bar.
	run("log in", chromedp.Navigate(srv.URL+"/?token="+token), chromedp.WaitVisible(chromedp.CSS("#threads")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "token") || !strings.HasSuffix(loc, "/threads") {
		t.Errorf("after logging in the address is %q", loc)
	}

	// A thread: the newest checkpoint's decrypted value, the timeline.
	run("open the thread",
		chromedp.Click(chromedp.Search(`//a[@class="thread" and text()="`+thread+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#timeline")))
	if channels := text("#channels"); !strings.Contains(channels, secretPhrase) {
		t.Errorf("the thread page does not show the decrypted value: %q", channels)
	}
	if n := count(`document.querySelectorAll("#timeline circle").length`); n != 5 {
		t.Errorf("the timeline draws %d checkpoints, want 5", n)
	}

	// The fork: click its node in the timeline, then follow the branch.
	run("click the fork point", chromedp.Click(chromedp.CSS(`#timeline circle.fork`)), chromedp.WaitVisible(chromedp.CSS(`.forked`)))
	if forked := text(".forked"); !strings.Contains(forked, "2 branches") {
		t.Errorf("the fork point says %q", forked)
	}
	screenshot("thread.png")
	// Wait for what only the next page has: the page before matches
	// "#diff" too, and reading it would race the navigation.
	run("follow the fork", chromedp.Click(chromedp.CSS(`a.child[href*="`+f.branch+`"]`)),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="cp-id" and text()="`+f.branch+`"]`)))
	if cp, diff := text("#cp-id"), text("#diff"); cp != f.branch || !strings.Contains(diff, "escalated") || !strings.Contains(diff, "looking") {
		t.Errorf("following the fork: checkpoint %q (want %q), diff %q", cp, f.branch, diff)
	}

	// A memory search, ranked with scores.
	run("search memories",
		chromedp.Click(chromedp.Search(`//nav/a[text()="Memories"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#namespaces`)),
		chromedp.Click(chromedp.Search(`//ul[@id="namespaces"]//a[text()="users"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[@class="crumbs"]/a[text()="users"]`)),
		chromedp.SendKeys(chromedp.CSS(`#memory-search input[name=q]`), "allergic to nuts"),
		chromedp.Submit(chromedp.CSS(`#memory-search input[name=q]`)),
		chromedp.WaitVisible(chromedp.CSS(`#items td.score`)))
	scores := count(`[...document.querySelectorAll("#items td.score")].filter(td => /^-?[0-9.]+$/.test(td.textContent)).length`)
	if items := text("#items"); !strings.Contains(items, "vegetarian, allergic to nuts") || scores == 0 {
		t.Errorf("search: %d scores, items %q", scores, items)
	}
	screenshot("memories.png")

	// The audit view: verified, and the inspector's reads are there.
	run("open the audit view", chromedp.Click(chromedp.Search(`//nav/a[text()="Audit"]`)), chromedp.WaitVisible(chromedp.CSS(`#verify`)))
	if verify, trail := text("#verify"), text("#audit"); !strings.Contains(verify, "Trail verified") || !strings.Contains(trail, "inspector") || !strings.Contains(trail, "checkpoint.read") {
		t.Errorf("audit view: %q / %q", verify, trail)
	}

	// Hostile values and a hostile thread id stay text.
	run("open the hostile thread", chromedp.Navigate(srv.URL+"/thread?id=hostile"), chromedp.WaitVisible(chromedp.CSS(`#channels`)))
	hostileText := text("#channels")
	for _, want := range []string{hostileScript, hostileImg, hostileURL} {
		if !strings.Contains(hostileText, strings.ReplaceAll(want, `"`, `\"`)) {
			t.Errorf("hostile value not shown as text %q: %q", want, hostileText)
		}
	}
	run("open the thread with a hostile id",
		chromedp.Navigate(srv.URL+"/threads"),
		chromedp.WaitVisible(chromedp.CSS(`#threads`)),
		chromedp.Click(chromedp.Search(`//a[@class="thread" and starts-with(text(), "<script>")]`)),
		chromedp.WaitVisible(chromedp.CSS(`#thread-id`)))
	if title := text("#thread-id"); title != hostileTID {
		t.Errorf("hostile thread id shown as %q", title)
	}
	if n := count(`document.images.length + document.scripts.length`); n != 0 {
		t.Errorf("%d images or scripts on the hostile thread's page", n)
	}

	// A write action, with the browser's own Fetch Metadata and Origin: an
	// inspector with write actions on (another gate, another cookie),
	// the thread's deletion link, the confirmation typed, the thread gone
	// and the deletion in the trail.
	win, err := inspector.New(f.h, inspector.Options{AllowWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	wgate, wtoken, err := inspector.NewTokenGate(win, false)
	if err != nil {
		t.Fatal(err)
	}
	wsrv := httptest.NewServer(wgate)
	defer wsrv.Close()
	run("delete a thread",
		chromedp.Navigate(wsrv.URL+"/?token="+wtoken), chromedp.WaitVisible(chromedp.CSS("#threads")),
		chromedp.Navigate(wsrv.URL+"/thread?id=hostile"), chromedp.WaitVisible(chromedp.CSS("#delete-thread")),
		chromedp.Click(chromedp.CSS("#delete-thread")), chromedp.WaitVisible(chromedp.CSS("#confirm-input")),
		chromedp.SendKeys(chromedp.CSS("#confirm-input"), "hostile"))
	screenshot("confirm.png")
	run("confirm the deletion", chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS("#done, #error")))
	if done := text("main"); !strings.Contains(done, "hostile deleted") {
		t.Fatalf("after the confirmed deletion: %q", done)
	}
	if threadExists(t, f.h, "hostile") {
		t.Error("the thread deleted in the browser is still there")
	}
	if !recorded(t, f.h, audit.OpThreadDelete, "hostile", inspector.DefaultPrincipal) {
		t.Error("the deletion in the browser is not in the audit trail")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) > 0 {
		t.Errorf("a hostile value ran script: dialogs %q", dialogs)
	}
	if len(violations) > 0 {
		t.Errorf("CSP violations or script errors: %q", violations)
	}
}
