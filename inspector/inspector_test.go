package inspector_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"

	_ "modernc.org/sqlite"
)

// routes are the inspector's pages, for the tests that visit them all.
func routes(f *fixture) []string {
	return []string{
		"/threads",
		"/threads?q=support",
		"/threads?meta=user_id=carol",
		"/thread?id=" + url.QueryEscape(thread),
		"/thread?id=" + url.QueryEscape(thread) + "&cp=" + f.fork + "&cpns=",
		"/thread?id=" + url.QueryEscape(thread) + "&ns=tools:7f3a",
		"/thread?id=hostile",
		"/thread?id=" + url.QueryEscape(hostileTID),
		"/value?thread=hostile&cpns=&cp=x&channel=big",
		"/memories",
		"/memories?ns=users&ns=carol",
		"/memories?ns=users&q=nuts",
		"/memories?ns=users&ns=" + url.QueryEscape(hostileImg),
		"/keys",
		"/audit",
		"/audit?principal=inspector&op=checkpoint",
		"/static/style.css",
		"/no-such-page",
		"/thread",                // 400: no id
		"/threads?page=-1",       // 400
		"/thread?id=nope",        // 404
		"/audit?since=yesterday", // 400
	}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func checkHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": inspector.ContentSecurityPolicy,
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("%s: CSP without default-src 'none'", what)
	}
}

// TestUnauthorizedWithoutCookie: every route answers 401, with the security
// headers, to a request without the session cookie; so does a wrong token.
func TestUnauthorizedWithoutCookie(t *testing.T) {
	f := newFixture(t)
	srv, _ := f.server(t)
	for _, r := range append(routes(f), "/", "/?token=wrong", "/?token=") {
		resp, body := get(t, srv.Client(), srv.URL+r)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", r, resp.StatusCode)
		}
		checkHeaders(t, r, resp.Header)
		if strings.Contains(body, secretPhrase) || strings.Contains(body, "carol") {
			t.Errorf("%s: a 401 shows data: %q", r, body)
		}
	}
	// Every method, on every path, also those no link names: no data
	// without the cookie (a value's download, the write actions, a HEAD
	// that would decrypt, a path the mux does not route).
	for _, m := range []string{"HEAD", "POST", "PUT", "DELETE", "OPTIONS"} {
		for _, r := range []string{"/value.json?thread=" + url.QueryEscape(thread) + "&cpns=&cp=" + f.first + "&channel=messages",
			"/threads", "/thread?id=" + url.QueryEscape(thread), "/action/delete-thread", "/action/forget-subject", "//threads", "/static/",
			"/%2e%2e/threads", "/memories?ns=users&ns=carol", "/audit"} {
			req, _ := http.NewRequest(m, srv.URL+r, strings.NewReader("thread="+url.QueryEscape(thread)))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), secretPhrase) || strings.Contains(string(b), "carol") {
				t.Errorf("%s %s: status %d, want 401 and no data", m, r, resp.StatusCode)
			}
		}
	}
	if tup, err := f.h.Saver.GetTuple(context.Background(), checkpointer.Config{ThreadID: thread}); err != nil || tup == nil {
		t.Errorf("the thread is not intact after the unauthenticated requests: %v", err)
	}
	// A forged cookie is no session.
	req, _ := http.NewRequest("GET", srv.URL+"/threads", nil)
	req.AddCookie(&http.Cookie{Name: f.gate.CookieName(), Value: "forged"})
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged cookie: status %d, want 401", resp.StatusCode)
	}
}

// TestTokenSingleUse: the token yields a cookie (HttpOnly, SameSite=Strict,
// Path=/) and a redirect that drops it from the URL, once; a second browser
// presenting it gets 401.
func TestTokenSingleUse(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, _ := get(t, noRedirect, srv.URL+"/?token="+url.QueryEscape(token))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("token exchange: status %d, want 303", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "token") || loc != "/" {
		t.Errorf("redirect to %q, want / (the token dropped)", loc)
	}
	checkHeaders(t, "exchange", resp.Header)
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v, want one", cookies)
	}
	c := cookies[0]
	if c.Name != f.gate.CookieName() || !strings.HasPrefix(c.Name, inspector.CookieName+"_") || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure without TLS", c)
	}
	if strings.Contains(c.Value, token) {
		t.Error("the session cookie holds the token")
	}
	// The cookie opens the pages.
	req, _ := http.NewRequest("GET", srv.URL+"/threads", nil)
	req.AddCookie(c)
	r2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: status %d, want 200", r2.StatusCode)
	}
	// The token again, from a browser without the cookie: refused.
	resp, _ = get(t, noRedirect, srv.URL+"/?token="+url.QueryEscape(token))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token used twice: status %d, want 401", resp.StatusCode)
	}
	if len(resp.Cookies()) != 0 {
		t.Error("a used token still sets a cookie")
	}
}

// TestHeadersOnEveryRoute: every page, asset and error carries the headers.
func TestHeadersOnEveryRoute(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	for _, r := range routes(f) {
		resp, body := get(t, c, srv.URL+r)
		checkHeaders(t, r, resp.Header)
		if resp.StatusCode >= 500 {
			t.Errorf("%s: status %d: %s", r, resp.StatusCode, body)
		}
	}
	resp, err := c.Post(srv.URL+"/threads", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	checkHeaders(t, "POST", resp.Header)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST: status %d, want 403 (read-only: write actions off)", resp.StatusCode)
	}
	req, _ := http.NewRequest("PUT", srv.URL+"/threads", strings.NewReader("x"))
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	checkHeaders(t, "PUT", resp.Header)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: status %d, want 405", resp.StatusCode)
	}
}

// injected returns the first piece of markup in page that a hostile value
// could have injected: an element that runs or loads something, an event
// handler or style attribute, a javascript: URL. The page is tokenized as
// a browser would, so escaped text ("&lt;img onerror=…") is text.
func injected(page string) string {
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "img", "iframe", "object", "embed", "style", "base", "meta":
				if tok.Data == "meta" && len(tok.Attr) > 0 && (tok.Attr[0].Key == "charset" || tok.Attr[0].Key == "name") {
					continue
				}
				return tok.String()
			}
			for _, a := range tok.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(a.Key, "on") || a.Key == "style" || strings.HasPrefix(v, "javascript:") {
					return tok.String()
				}
			}
		}
	}
}

// TestHostileRendersAsText: hostile values, keys, namespaces, thread ids and
// query parameters come out escaped, printable and valid UTF-8.
func TestHostileRendersAsText(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	pages := append(routes(f),
		"/threads?q="+url.QueryEscape(hostileScript+"\x00\xff"),
		"/threads?meta="+url.QueryEscape(hostileImg+"="+hostileScript),
		"/thread?id="+url.QueryEscape("\x00\xff"+hostileScript),
		"/thread?id=hostile&cp="+url.QueryEscape(hostileImg)+"&cpns="+url.QueryEscape(hostileScript),
		"/memories?ns="+url.QueryEscape("\xff\x00")+"&q="+url.QueryEscape(hostileImg),
		"/audit?principal="+url.QueryEscape(hostileScript)+"&op="+url.QueryEscape(hostileImg),
		"/value?ns=users&ns="+url.QueryEscape(hostileImg)+"&key="+url.QueryEscape(hostileScript),
	)
	sawEscaped := 0
	for _, r := range pages {
		if strings.HasPrefix(r, "/static/") {
			continue
		}
		resp, body := get(t, c, srv.URL+r)
		if m := injected(body); m != "" {
			t.Errorf("%s (%d): markup injected: %s", r, resp.StatusCode, m)
		}
		if !utf8.ValidString(body) {
			t.Errorf("%s: the page is not valid UTF-8", r)
		}
		if strings.ContainsRune(body, 0) || strings.ContainsRune(body, '\u202e') {
			t.Errorf("%s: a NUL or a bidi override reaches the page raw", r)
		}
		if strings.Contains(body, "&lt;script&gt;") {
			sawEscaped++
		}
	}
	if sawEscaped < 5 {
		t.Errorf("the hostile strings were shown escaped on %d pages, want them visible (as text) on most", sawEscaped)
	}
	// The value itself is there, as text, with its NUL and override made visible.
	_, body := get(t, c, srv.URL+"/thread?id=hostile")
	for _, want := range []string{`&lt;script&gt;alert(\&#34;pwned\&#34;)&lt;/script&gt;`, "javascript:alert(document.cookie)", `nul\u0000byte`, `\u{202e}gnp.exe`} {
		if !strings.Contains(body, want) {
			t.Errorf("thread page lacks %q", want)
		}
	}
}

// TestThreadView: the decrypted value, the timeline with the fork, pending
// writes with the interrupt, the namespaces and the diff against the parent.
func TestThreadView(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	_, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&cp="+f.first+"&cpns=")
	for _, want := range []string{secretPhrase, "refund 49.90 EUR?", `<svg xmlns="http://www.w3.org/2000/svg" id="timeline"`, "interrupt", "needs a human", "tools:7f3a", "changed", "root graph"} {
		if !strings.Contains(body, want) {
			t.Errorf("thread page lacks %q", want)
		}
	}
	// The fork point has two children on the page and is drawn as a fork.
	_, body = get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&cp="+f.fork+"&cpns=")
	if !strings.Contains(body, "fork: 2 branches") || !strings.Contains(body, `class="node fork`) {
		t.Errorf("fork point not shown as a fork")
	}
	for _, id := range []string{f.first, f.branch} {
		if !strings.Contains(body, `class="child" href="/thread?cp=`+id) {
			t.Errorf("no link to child %s", id)
		}
	}
	// The branch: its parent is the fork point, its diff shows the change.
	_, body = get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&cp="+f.branch+"&cpns=")
	if !strings.Contains(body, "escalated") || !strings.Contains(body, `class="parent" href="/thread?cp=`+f.fork) {
		t.Errorf("branch page lacks its value or its parent link")
	}
}

// TestLargeValueTruncated: a value over 4 KiB is cut on the thread page,
// with a link to the value page, which shows it whole.
func TestLargeValueTruncated(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	_, body := get(t, c, srv.URL+"/thread?id=hostile")
	big := strings.Repeat("0123456789abcdef", 600)
	if strings.Contains(body, big) {
		t.Fatal("the 9600-byte value is shown whole on the thread page")
	}
	m := regexp.MustCompile(`<a class="full" href="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no link to the whole value")
	}
	href := strings.ReplaceAll(m[1], "&amp;", "&")
	_, full := get(t, c, srv.URL+href)
	if !strings.Contains(full, big) {
		t.Errorf("the value page (%s) does not show the whole value", href)
	}
}

// TestMemories: the namespace tree, items with TTL, and search with scores.
func TestMemories(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	_, body := get(t, c, srv.URL+"/memories?ns=users")
	if !strings.Contains(body, `href="/memories?ns=users&amp;ns=carol"`) {
		t.Errorf("tree lacks users.carol: %s", body)
	}
	_, body = get(t, c, srv.URL+"/memories?ns=users&ns=carol")
	for _, want := range []string{"vegetarian, allergic to nuts", "prefers email", "short-lived", "(in "} {
		if !strings.Contains(body, want) {
			t.Errorf("items page lacks %q", want)
		}
	}
	_, body = get(t, c, srv.URL+"/memories?ns=users&q="+url.QueryEscape("allergic to nuts"))
	if !strings.Contains(body, "vegetarian, allergic to nuts") || !regexp.MustCompile(`class="num score">[0-9.-]+<`).MatchString(body) {
		t.Errorf("search page lacks the item or its score")
	}
}

// TestReadsAudited: the views that decrypt are recorded under the
// inspector's principal; the census and the audit view record nothing.
func TestReadsAudited(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	count := func() map[string]int {
		n := map[string]int{}
		err := f.h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
			if r.Principal == inspector.DefaultPrincipal {
				n[r.Op+" "+r.Target]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread))
	get(t, c, srv.URL+"/memories?ns=users&q=nuts")
	get(t, c, srv.URL+"/memories?ns=users&ns=carol")
	after := count()
	for _, want := range []string{audit.OpCheckpointRead + " " + thread, audit.OpItemSearch + " users"} {
		if after[want] <= before[want] {
			t.Errorf("no %q record by %q (have %v)", want, inspector.DefaultPrincipal, after)
		}
	}
	total := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	mid := total(count())
	get(t, c, srv.URL+"/keys")
	get(t, c, srv.URL+"/audit")
	get(t, c, srv.URL+"/threads")
	if got := total(count()); got != mid {
		t.Errorf("views that decrypt nothing recorded %d reads", got-mid)
	}
	// The audit page shows the trail verified and the inspector's reads.
	_, body := get(t, c, srv.URL+"/audit?principal=inspector")
	if !strings.Contains(body, "Trail verified") || !strings.Contains(body, audit.OpCheckpointRead) {
		t.Errorf("audit page lacks the verification or the records")
	}
}

// TestNoInlineScriptOrStyle: the pages hold no script element, no inline
// style and no event handler attribute, which the CSP would block anyway.
func TestNoInlineScriptOrStyle(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	for _, r := range routes(f) {
		_, body := get(t, c, srv.URL+r)
		if strings.HasPrefix(r, "/static/") {
			continue
		}
		if m := injected(body); m != "" {
			t.Errorf("%s: %s", r, m)
		}
	}
	_, css := get(t, c, srv.URL+"/static/style.css")
	if !bytes.Contains([]byte(css), []byte("svg#timeline")) {
		t.Error("the stylesheet is not served")
	}
}

// TestThreadPaging: a thread's checkpoints page by a cursor, across its
// namespaces, each exactly once.
func TestThreadPaging(t *testing.T) {
	f := newFixture(t)
	ids := pageThrough(t, f, 2, "/thread?id="+url.QueryEscape(thread), "older", regexp.MustCompile(`<title>([0-9a-f-]{36})</title>`), 6)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("checkpoint %s on two pages", id)
		}
		seen[id] = true
	}
	if len(seen) != 5 {
		t.Errorf("paged through %d checkpoints, want 5", len(seen))
	}
}

// pageThrough follows a paged view from first through its rel="next" links
// (whose text starts with nextText), with a page size of size, and returns
// the first group of item matched on each page, in order; it fails the
// test when paging does not end within maxPages.
func pageThrough(t *testing.T, f *fixture, size int, first, nextText string, item *regexp.Regexp, maxPages int) []string {
	t.Helper()
	in, err := inspector.New(f.h, inspector.Options{PageSize: size})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	next := regexp.MustCompile(`<a rel="next" href="([^"]+)">` + nextText)
	var got []string
	for u, pages := first, 0; u != ""; pages++ {
		if pages >= maxPages {
			t.Fatalf("%s: paging does not end", first)
		}
		_, body := get(t, srv.Client(), srv.URL+u)
		for _, m := range item.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		u = ""
		if m := next.FindStringSubmatch(body); m != nil {
			u = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	return got
}

// TestReadsKeepTTL: looking at memories (the list, a search, the value
// page) does not restart their TTL, though the store refreshes on read by
// default: the inspector is read-only.
func TestReadsKeepTTL(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	ns := store.Namespace{"users", "carol"}
	expiry := func() time.Time {
		it, err := f.h.Store.(store.Lister).ListItems(context.Background(), ns, store.ListItemsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range it {
			if i.Key == "session" {
				return i.ExpiresAt
			}
		}
		t.Fatal("no session item")
		return time.Time{}
	}
	before := expiry()
	time.Sleep(5 * time.Millisecond) // a refresh would move the expiry by this much at least
	get(t, c, srv.URL+"/memories?ns=users&ns=carol")
	get(t, c, srv.URL+"/memories?ns=users&q=short-lived")
	get(t, c, srv.URL+"/value?ns=users&ns=carol&key=session")
	if after := expiry(); !after.Equal(before) {
		t.Errorf("viewing moved the expiry from %v to %v", before, after)
	}
}

// TestSecureCookieWithTLS: behind TLS the session cookie is Secure.
func TestSecureCookieWithTLS(t *testing.T) {
	f := newFixture(t)
	in, err := inspector.New(f.h, inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate, token, err := inspector.NewTokenGate(in, true)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(gate)
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, _ := get(t, c, srv.URL+"/?token="+token)
	if cs := resp.Cookies(); len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly {
		t.Errorf("cookies over TLS: %+v, want one Secure HttpOnly", cs)
	}
}

// TestTokenRedirectStaysOnSite: the redirect that drops the token never
// leaves the inspector's host, whatever path the link had ("//evil.example"
// would be a network-path reference to another host).
func TestTokenRedirectStaysOnSite(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var session *http.Cookie
	for _, p := range []string{"//evil.example/", "/\\evil.example/", "///evil.example/x", "/%2F%2Fevil.example/"} {
		req, err := http.NewRequest("GET", srv.URL+"/?token="+url.QueryEscape(token), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Path = p
		req.URL.RawPath = ""
		if session != nil {
			req.AddCookie(session) // the token is used: a logged-in browser follows such a link
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if session == nil {
			for _, c := range resp.Cookies() {
				session = c
			}
		}
		loc := resp.Header.Get("Location")
		u, err := url.Parse(loc)
		if resp.StatusCode != http.StatusSeeOther || err != nil || u.Host != "" || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			t.Errorf("path %q: status %d, redirect to %q", p, resp.StatusCode, loc)
		}
	}
}

// TestMountedUnderPrefix: mounted in an admin server under a path with its
// own principal, every link and asset stays under the path and reads are
// recorded under that principal.
func TestMountedUnderPrefix(t *testing.T) {
	f := newFixture(t)
	const base = "/admin/memvault"
	in, err := inspector.New(f.h, inspector.Options{BasePath: base + "/", Principal: func(r *http.Request) string { return "inspector:" + r.Header.Get("X-User") }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(base+"/", http.StripPrefix(base, in))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+base+"/thread?id="+url.QueryEscape(thread), nil)
	req.Header.Set("X-User", "alice")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	links := regexp.MustCompile(`(?:href|action)="([^"]*)"`).FindAllStringSubmatch(string(b), -1)
	if len(links) < 10 {
		t.Fatalf("only %d links", len(links))
	}
	for _, m := range links {
		if !strings.HasPrefix(m[1], base+"/") {
			t.Errorf("link %q outside %s", m[1], base)
		}
	}
	if r, body := get(t, srv.Client(), srv.URL+base+"/static/style.css"); r.StatusCode != http.StatusOK || !strings.Contains(body, "svg#timeline") {
		t.Errorf("stylesheet under the prefix: %d", r.StatusCode)
	}
	found := false
	err = f.h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		found = found || r.Principal == "inspector:alice" && r.Target == thread
		return nil
	})
	if err != nil || !found {
		t.Errorf("no read recorded under inspector:alice (%v)", err)
	}
}

// TestKeysViewRetired: after a key rotation, the census page shows the
// values still under the previous key and says to re-encrypt them.
func TestKeysViewRetired(t *testing.T) {
	f := newFixture(t)
	h := openVault(t, f.dir, map[string]string{
		"LANGGRAPH_AES_KEY":          "fedcba9876543210fedcba9876543210",
		"LANGGRAPH_AES_KEY_PREVIOUS": "0123456789abcdef0123456789abcdef",
	})
	in, err := inspector.New(h, inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	_, body := get(t, srv.Client(), srv.URL+"/keys")
	if !strings.Contains(body, `<tr class="retired"><td>checkpoint_blobs</td><td>mvgcm</td><td class="id">4e79a8eafcd4cf2e</td><td>previous</td>`) ||
		!regexp.MustCompile(`\d+ values are under a key that is not the primary`).MatchString(body) {
		t.Errorf("keys page after a rotation:\n%s", body)
	}
}

// TestTwoInspectorsOneBrowser: cookies do not tell ports apart, so two
// inspectors on 127.0.0.1 (two `memvault inspect`, two databases) share one
// browser's cookies: logging in to the second must not log out of the first.
func TestTwoInspectorsOneBrowser(t *testing.T) {
	a, b := newFixture(t), newFixture(t)
	srvA, tokA := a.server(t)
	srvB, tokB := b.server(t)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	for _, s := range []struct {
		srv   *httptest.Server
		token string
	}{{srvA, tokA}, {srvB, tokB}} {
		if resp, _ := get(t, c, s.srv.URL+"/?token="+s.token); resp.StatusCode != http.StatusOK {
			t.Fatalf("login to %s: %d", s.srv.URL, resp.StatusCode)
		}
	}
	for _, srv := range []*httptest.Server{srvA, srvB} {
		if resp, _ := get(t, c, srv.URL+"/threads"); resp.StatusCode != http.StatusOK {
			t.Errorf("%s after logging in to both: %d", srv.URL, resp.StatusCode)
		}
	}
}

// TestAuditPageNumberBoundsMemory: the page cursor of the audit view is
// the reader's to choose; asking for a page far beyond a short trail must
// not allocate room for millions of records (a page number did: 686 MB
// for page 100 000).
func TestAuditPageNumberBoundsMemory(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	get(t, c, srv.URL+"/audit") // warm up: templates, the trail's first check
	for _, u := range []string{"/audit?after=9223372036854775807", "/audit?before=1", "/audit?page=100000"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, body := get(t, c, srv.URL+u)
		runtime.ReadMemStats(&after)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d, want 200", u, resp.StatusCode)
		}
		if u != "/audit?page=100000" && !strings.Contains(body, "no records") {
			t.Errorf("%s of a short trail shows records", u)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Errorf("%s of a %d-record trail allocated %d MB", u, f.trailLen(t), grew>>20)
		}
	}
	for _, u := range []string{"/audit?before=-1", "/audit?after=x", "/audit?before=3&after=1"} {
		if resp, _ := get(t, c, srv.URL+u); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", u, resp.StatusCode)
		}
	}
}

// TestAuditPaging: the audit view pages through the matching records newest
// first, each exactly once, with the count of all that match; and back,
// newer, to the first page.
func TestAuditPaging(t *testing.T) {
	f := newFixture(t)
	var want []string
	err := f.h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointWrite {
			want = append([]string{strconv.FormatInt(r.Seq, 10)}, want...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`<tr><td class="num">(\d+)</td>`)
	got := pageThrough(t, f, 2, "/audit?op="+audit.OpCheckpointWrite, "older", row, len(want)+1)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paged through records %v, want %v (newest first)", got, want)
	}
	// From the oldest page back to the newest, through the newer links.
	in, err := inspector.New(f.h, inspector.Options{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	oldest := want[len(want)-1]
	seq, _ := strconv.Atoi(oldest)
	u := "/audit?op=" + audit.OpCheckpointWrite + "&before=" + strconv.Itoa(seq+1)
	newer := regexp.MustCompile(`<a rel="prev" href="([^"]+)">`)
	var back []string
	for pages := 0; u != ""; pages++ {
		if pages > len(want) {
			t.Fatal("paging newer does not end")
		}
		_, body := get(t, srv.Client(), srv.URL+u)
		if !strings.Contains(body, strconv.Itoa(len(want))+" matching records") {
			t.Errorf("%s does not count all %d matching records", u, len(want))
		}
		var page []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			page = append(page, m[1])
		}
		back = append(page, back...)
		u = ""
		if m := newer.FindStringSubmatch(body); m != nil {
			u = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if strings.Join(back, " ") != strings.Join(want, " ") {
		t.Errorf("paged back through records %v, want %v", back, want)
	}
}

// countingTable is an audit table that counts how often the trail is read
// from its start.
type countingTable struct {
	*audit.MemoryTable
	reads atomic.Int64
}

func (c *countingTable) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	if after == 0 {
		c.reads.Add(1)
	}
	return c.MemoryTable.Page(ctx, after, limit)
}

// TestAuditViewReadsTrailOnce: a request of the audit page reads the trail
// once, whatever page and filter it asks (it read it three times: the
// verification, a count, the page).
func TestAuditViewReadsTrailOnce(t *testing.T) {
	f := newFixture(t)
	tb := &countingTable{MemoryTable: audit.NewMemoryTable()}
	trail, err := audit.New(tb, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := trail.Log(audit.WithPrincipal(context.Background(), "clerk"), audit.OpItemRead, fmt.Sprintf("users.carol/k%d", i), "carol", ""); err != nil {
			t.Fatal(err)
		}
	}
	h := *f.h
	h.Audit = trail
	in, err := inspector.New(&h, inspector.Options{PageSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	for _, u := range []string{"/audit", "/audit?before=6", "/audit?after=2&subject=carol", "/audit?op=item"} {
		before := tb.reads.Load()
		resp, body := get(t, srv.Client(), srv.URL+u)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Trail verified") {
			t.Fatalf("%s: status %d, not verified", u, resp.StatusCode)
		}
		if n := tb.reads.Load() - before; n != 1 {
			t.Errorf("%s read the trail %d times, want once", u, n)
		}
	}
}

// TestAuditRetentionAndLastDelete: the audit page shows the retention
// settings it was given and the newest thread deletion in the trail.
func TestAuditRetentionAndLastDelete(t *testing.T) {
	f := newFixture(t)
	ctx := audit.WithPrincipal(context.Background(), "sweeper")
	in, err := inspector.New(f.h, inspector.Options{Retention: &inspector.Retention{
		Policy: checkpointer.RetentionPolicy{IdleTTL: 720 * time.Hour, KeepLatest: 50}, SweepInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	if _, body := get(t, srv.Client(), srv.URL+"/audit"); !strings.Contains(body, "No retention sweep recorded.") {
		t.Errorf("audit page before any sweep lacks %q", "No retention sweep recorded.")
	}
	// A sweep (recorded before it runs), then a deletion by hand.
	if _, err := f.h.Saver.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 50}, checkpointer.SweepOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Saver.DeleteThread(ctx, "hostile"); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv.Client(), srv.URL+"/audit?op=checkpoint.read")
	for _, want := range []string{"threads idle longer than 720h0m0s are deleted whole", "only the newest 50 checkpoints", "every 1h0m0s",
		`thread <span class="id">hostile</span> by sweeper`, `Last retention sweep: record`, `policy <span class="id">retention:`} {
		if !strings.Contains(body, want) {
			t.Errorf("audit page without %q", want)
		}
	}
}

// TestStaticAssets: the stylesheet is served as CSS; a missing asset and
// the folder answer 404 with every security header (the file server
// dropped Cache-Control on its errors and listed the folder).
func TestStaticAssets(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	resp, css := get(t, c, srv.URL+"/static/style.css")
	checkHeaders(t, "style.css", resp.Header)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(css, "svg#timeline") {
		t.Errorf("style.css: status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, r := range []string{"/static/nope.css", "/static/", "/static/..%2fthreads", "/static/style.css/x"} {
		resp, body := get(t, c, srv.URL+r)
		checkHeaders(t, r, resp.Header)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, `href="style.css"`) {
			t.Errorf("%s: status %d, want 404 (no listing): %.200s", r, resp.StatusCode, body)
		}
	}
}

// TestUndecryptableValue: a value that does not decrypt (here, ciphertext
// moved to another row, which the row binding refuses) gets one generic
// message, 500 — not the backend's error text, and not a 400 that blames
// the request (the memory value page said "bad request" for it).
func TestUndecryptableValue(t *testing.T) {
	f := newFixture(t)
	db, err := sql.Open("sqlite", filepath.Join(f.dir, "inspect.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE checkpoint_blobs SET blob = (SELECT blob FROM checkpoint_blobs WHERE thread_id = 'hostile' AND channel = 'big') WHERE thread_id = 'hostile' AND channel = 'messages'`,
		`UPDATE store SET value = (SELECT value FROM store WHERE prefix = 'users.carol' AND key = 'contact') WHERE prefix = 'users.carol' AND key = 'diet'`,
	} {
		if res, err := db.Exec(q); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %d rows", q, n)
		}
	}
	srv, token := f.server(t)
	c := login(t, srv, token)
	for _, r := range []string{"/thread?id=hostile", "/threads?meta=step=0", "/value?ns=users&ns=carol&key=diet", "/memories?ns=users&ns=carol"} {
		resp, body := get(t, c, srv.URL+r)
		checkHeaders(t, r, resp.Header)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, inspector.DecryptFailedMessage) {
			t.Errorf("%s: status %d, want 500 with the generic message: %s", r, resp.StatusCode, errorText(body))
		}
		for _, leak := range []string{"sqlite", "serde", "crypto:", "messages", "diet"} {
			if strings.Contains(errorText(body), leak) {
				t.Errorf("%s: the error says %q: %s", r, leak, errorText(body))
			}
		}
	}
}

// errorText is the message of an error page.
func errorText(page string) string {
	_, after, _ := strings.Cut(page, `<p class="error" id="error">`)
	msg, _, _ := strings.Cut(after, "</p>")
	return msg
}

// TestInvalidInputIs400: an id, namespace or key the saver or store
// refuses is the request's fault (400), and says why.
func TestInvalidInputIs400(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	for r, why := range map[string]string{
		"/memories?ns=&q=x":                     "invalid namespace",
		"/memories?ns=a&after=%FF":              "invalid key",
		"/value?ns=users&ns=&key=x":             "invalid namespace",
		"/thread?id=" + url.QueryEscape("\xff"): "invalid",
	} {
		resp, body := get(t, c, srv.URL+r)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(errorText(body), why) {
			t.Errorf("%s: status %d, want 400 saying %q: %s", r, resp.StatusCode, why, errorText(body))
		}
	}
}

// TestEmptyPrincipalRecordedAsInspector: a Principal function that names
// no one (an admin server's request without a user) must not leave reads
// unattributed: they are recorded as DefaultPrincipal.
func TestEmptyPrincipalRecordedAsInspector(t *testing.T) {
	f := newFixture(t)
	in, err := inspector.New(f.h, inspector.Options{Principal: func(*http.Request) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	const tid = "principal-check"
	put(t, f.h, tid, "", "", 0, map[string]any{"x": 1})
	if resp, _ := get(t, srv.Client(), srv.URL+"/thread?id="+tid); resp.StatusCode != http.StatusOK {
		t.Fatalf("thread page: %d", resp.StatusCode)
	}
	var principals []string
	err = f.h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		if r.Target == tid && r.Op == audit.OpCheckpointRead {
			principals = append(principals, r.Principal)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(principals) == 0 || slices.ContainsFunc(principals, func(p string) bool { return p != inspector.DefaultPrincipal }) {
		t.Errorf("the reads were recorded under %q, want %q", principals, inspector.DefaultPrincipal)
	}
}

// TestHugeValueDownload: a value too large for a page (here 1.5 MB; 100 MB
// made a page of ~230 MB and some 3 GB of garbage) is cut on the value page
// too, which links to a download of the whole value as JSON: an attachment
// the browser saves, not renders, with every header, and the read audited.
func TestHugeValueDownload(t *testing.T) {
	f := newFixture(t)
	huge := strings.Repeat("0123456789abcdef", 3<<15) // 1.5 MiB
	cp := put(t, f.h, "huge", "", "", 0, map[string]any{"v": huge})
	srv, token := f.server(t)
	c := login(t, srv, token)
	page := "/value?thread=huge&cpns=&cp=" + cp + "&channel=v"
	resp, body := get(t, c, srv.URL+page)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, huge) || len(body) > 1<<20+16<<10 {
		t.Fatalf("value page: status %d, %d bytes: want the value cut at 1 MiB", resp.StatusCode, len(body))
	}
	m := regexp.MustCompile(`<a class="download" href="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the value page has no link to download the whole value")
	}
	resp, raw := get(t, c, srv.URL+strings.ReplaceAll(m[1], "&amp;", "&"))
	checkHeaders(t, "download", resp.Header)
	if resp.StatusCode != http.StatusOK || raw != `"`+huge+`"` ||
		resp.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download: status %d, %d bytes, type %q, disposition %q", resp.StatusCode, len(raw), resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	reads := 0
	err := f.h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		if r.Target == "huge" && r.Op == audit.OpCheckpointRead && r.Principal == inspector.DefaultPrincipal {
			reads++
		}
		return nil
	})
	if err != nil || reads != 2 {
		t.Errorf("%d reads of the huge thread recorded (%v), want 2: the page and the download", reads, err)
	}
}

// TestFetchMetadataIsolation: a page of another origin on the same site —
// any other server on 127.0.0.1, whatever its port, to which SameSite=Strict
// still sends the session cookie — cannot make the browser load inspector
// pages as images or fetches (each a decrypting read in the trail under the
// inspector's name); top-level navigations and the inspector's own requests
// go through, and so do clients that send no Fetch Metadata.
func TestFetchMetadataIsolation(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	do := func(site, mode, dest string) (int, http.Header) {
		req, err := http.NewRequest("GET", srv.URL+"/thread?id="+url.QueryEscape(thread), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, h := range [][3]string{{"same-site", "no-cors", "image"}, {"cross-site", "cors", "empty"}, {"same-site", "navigate", "iframe"}, {"same-site", "no-cors", "script"}} {
		code, hdr := do(h[0], h[1], h[2])
		checkHeaders(t, "refused", hdr)
		if code != http.StatusForbidden {
			t.Errorf("%v: status %d, want 403", h, code)
		}
	}
	for _, h := range [][3]string{{"", "", ""}, {"none", "navigate", "document"}, {"same-origin", "no-cors", "style"}, {"same-site", "navigate", "document"}, {"cross-site", "navigate", "document"}} {
		if code, _ := do(h[0], h[1], h[2]); code != http.StatusOK {
			t.Errorf("%v: status %d, want 200", h, code)
		}
	}
}

// TestTokenOnlyByGet: a HEAD (a link checker, a preview) or any other
// method with the token neither uses it up nor gets a session; the GET a
// browser sends then logs in.
func TestTokenOnlyByGet(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, method := range []string{http.MethodHead, http.MethodOptions, http.MethodPost} {
		req, err := http.NewRequest(method, srv.URL+"/?token="+url.QueryEscape(token), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("%s with the token: status %d, cookies %v; want 401 and none", method, resp.StatusCode, resp.Cookies())
		}
	}
	resp, _ := get(t, noRedirect, srv.URL+"/?token="+url.QueryEscape(token))
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Errorf("GET with the token after the others: status %d, cookies %v; want 303 and the session", resp.StatusCode, resp.Cookies())
	}
}

// TestThreadNamespaceNotFound: a namespace the thread does not have is a
// 404 that names the namespace (it said the thread had no checkpoint).
func TestThreadNamespaceNotFound(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	resp, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&ns=nope")
	if msg := errorText(body); resp.StatusCode != http.StatusNotFound || !strings.Contains(msg, "namespace &#34;nope&#34;") {
		t.Errorf("status %d: %s", resp.StatusCode, msg)
	}
}

// TestMemoriesPaging: the items of a namespace page by key, each once.
func TestMemoriesPaging(t *testing.T) {
	f := newFixture(t)
	keys := pageThrough(t, f, 3, "/memories?ns=users&ns=carol", "next", regexp.MustCompile(`<tr><td class="key">([a-z]+)</td>`), 4)
	if got := strings.Join(keys, " "); got != "contact diet session shipping" {
		t.Errorf("paged through %q, want the four keys in order", got)
	}
}

// TestPendingWritesPaged: a checkpoint's pending writes are shown a page
// at a time, each exactly once across the pages, with their count; a page
// number beyond them shows none and sizes nothing (they were all rendered
// on the thread's page, however many).
func TestPendingWritesPaged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cp := put(t, f.h, "fan-out", "", "", 0, map[string]any{"x": 1})
	var want []string
	for i := range 7 {
		task := fmt.Sprintf("task-%02d", i)
		want = append(want, task)
		if err := f.h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "fan-out", CheckpointID: cp}, []checkpointer.Write{{Channel: "out", Value: i}}, task, ""); err != nil {
			t.Fatal(err)
		}
	}
	in, err := inspector.New(f.h, inspector.Options{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	row := regexp.MustCompile(`<tr><td class="id">(task-\d+)</td>`)
	more := regexp.MustCompile(`<a href="([^"]+)" class="more-writes">`)
	var got []string
	for u, pages := "/thread?id=fan-out", 0; u != ""; pages++ {
		if pages > 4 {
			t.Fatal("paging the writes does not end")
		}
		_, body := get(t, srv.Client(), srv.URL+u)
		rows := row.FindAllStringSubmatch(body, -1)
		if len(rows) > 3 {
			t.Errorf("%s shows %d writes, want at most a page of 3", u, len(rows))
		}
		for _, m := range rows {
			got = append(got, m[1])
		}
		if !strings.Contains(body, "7 in all") {
			t.Errorf("%s does not count the 7 writes", u)
		}
		u = ""
		if m := more.FindStringSubmatch(body); m != nil {
			u = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	slices.Sort(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paged through writes %v, want %v", got, want)
	}
	resp, body := get(t, srv.Client(), srv.URL+"/thread?id=fan-out&wpage=1000000")
	if resp.StatusCode != http.StatusOK || row.MatchString(body) {
		t.Errorf("wpage beyond the writes: status %d, rows %v", resp.StatusCode, row.FindAllString(body, -1))
	}
	for _, u := range []string{"/thread?id=fan-out&wpage=-1", "/thread?id=fan-out&wpage=1000001", "/thread?id=fan-out&wpage=x"} {
		if resp, _ := get(t, srv.Client(), srv.URL+u); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", u, resp.StatusCode)
		}
	}
}

// subjectVault opens a vault with per-subject keys (thread "carol:…" and
// namespace ("users", "carol", …) are Carol's) holding the threads of
// carol, dave, erin and a hostile subject.
func subjectVault(t *testing.T) *vault.Handle {
	t.Helper()
	h := openVault(t, t.TempDir(), map[string]string{"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":", "MEMVAULT_SUBJECT_NAMESPACE": "users"})
	for _, s := range []string{"carol", "dave", "erin", hostileImg} {
		put(t, h, s+":chat", "", "", 0, map[string]any{"messages": []any{"hello from " + s}})
	}
	if err := h.Store.Put(context.Background(), store.Namespace{"users", "dave"}, "diet", map[string]any{"text": "vegan"}); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestKeysViewSubjects: with per-subject keys, the keys page lists who has
// keys a page at a time (ids and KEKs, never key bytes), and a subject
// looked up shows its keys, or its erasure once erased.
func TestKeysViewSubjects(t *testing.T) {
	h := subjectVault(t)
	ctx := context.Background()
	if _, err := h.Forget(ctx, "dave"); err != nil {
		t.Fatal(err)
	}
	in, err := inspector.New(h, inspector.Options{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	got := pageThrough(t, &fixture{h: h}, 2, "/keys", "more subjects", regexp.MustCompile(`<tr><td><a href="[^"]+">([^<]+)</a></td><td class="num">1</td>`), 5)
	for i := range got {
		got[i] = html.UnescapeString(got[i])
	}
	want := []string{hostileImg, "carol", "erin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("subjects listed %q, want %q", got, want)
	}
	_, body := get(t, srv.Client(), srv.URL+"/keys?subject=dave")
	if !strings.Contains(body, "ERASED") || !strings.Contains(body, "1 thread and 1 item deleted") {
		t.Errorf("dave looked up: no erasure shown:\n%s", body)
	}
	_, body = get(t, srv.Client(), srv.URL+"/keys?subject=carol")
	if !regexp.MustCompile(`<tr><td class="num">1</td><td class="id">[0-9a-f]+</td>`).MatchString(body) || strings.Contains(body, "ERASED") {
		t.Errorf("carol looked up: no key version 1 shown:\n%s", body)
	}
	_, body = get(t, srv.Client(), srv.URL+"/keys?subject="+url.QueryEscape(hostileImg))
	if inj := injected(body); inj != "" {
		t.Errorf("hostile subject injected %s", inj)
	}
}

// TestHeadReadsNothing: a HEAD of a page that decrypts (a link checker, a
// preview of a pasted URL) is answered with the headers, decrypts nothing
// and records no read (it rendered the page and recorded a read nobody
// made).
func TestHeadReadsNothing(t *testing.T) {
	f := newFixture(t)
	srv, token := f.server(t)
	c := login(t, srv, token)
	before := f.trailLen(t)
	for _, u := range []string{"/thread?id=" + url.QueryEscape(thread), "/memories?ns=users&ns=carol", "/value?thread=hostile&cpns=&cp=x&channel=big"} {
		resp, err := c.Head(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		checkHeaders(t, "HEAD "+u, resp.Header)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: status %d", u, resp.StatusCode)
		}
	}
	if after := f.trailLen(t); after != before {
		t.Errorf("HEAD requests added %d records to the trail, want none", after-before)
	}
	if resp, err := c.Head(srv.URL + "/static/style.css"); err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("HEAD of the stylesheet: %v", err)
	}
	// A HEAD answers as its GET would where that needs no read: a path no
	// page serves is 404 (it answered 200 for any path).
	for _, u := range []string{"/no-such-page", "/static/no-such.css", "/thread/extra"} {
		resp, err := c.Head(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("HEAD %s: status %d, want 404 as its GET", u, resp.StatusCode)
		}
	}
}

// TestNoStore: on a backend without a long-term memory store (the handle's
// Store is nil, as vault.Open leaves it for one that has none) the memory
// views answer 404 naming what is missing; nothing panics.
func TestNoStore(t *testing.T) {
	f := newFixture(t)
	f.h.Store = nil
	srv, token := f.server(t)
	c := login(t, srv, token)
	for _, u := range []string{"/memories", "/memories?ns=users&q=nuts", "/value?ns=users&ns=carol&key=diet"} {
		resp, body := get(t, c, srv.URL+u)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no long-term memory store") {
			t.Errorf("%s: status %d, want 404 saying there is no store: %s", u, resp.StatusCode, body)
		}
	}
	if resp, _ := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)); resp.StatusCode != http.StatusOK {
		t.Errorf("the thread view without a store: status %d, want 200", resp.StatusCode)
	}
}

// TestAuditPageWarnsOfLateAndPending: the audit page says what `memvault
// audit verify` says of records chained late (a pending record withheld
// and inserted later looks so) and of records still pending; before, it
// said only "Trail verified".
func TestAuditPageWarnsOfLateAndPending(t *testing.T) {
	ctx := audit.WithPrincipal(context.Background(), "clerk")
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "trail.db")
	tb, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	key := bytes.Repeat([]byte{7}, 32)
	now, err := audit.NewTrail(tb, audit.Options{Key: key, DatabaseID: "db-1", WritesInTx: true})
	if err != nil {
		t.Fatal(err)
	}
	hourAgo, err := audit.NewTrail(tb, audit.Options{Key: key, DatabaseID: "db-1", WritesInTx: true,
		Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// commit stores a write's pending record as its transaction would.
	commit := func(tr *audit.Trail, target string) {
		row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: target})
		if err != nil || !ok {
			t.Fatalf("RecordInTx = %v, %v", ok, err)
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(row.Values)), ", ")
		if _, err := raw.Exec(`INSERT INTO `+row.Table+` (`+strings.Join(row.Columns, ", ")+`) VALUES (`+marks+`)`, row.Values...); err != nil {
			t.Fatal(err)
		}
	}
	commit(now, "on-time")
	if err := now.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	commit(hourAgo, "withheld") // made an hour ago, chained after a record of now
	if err := now.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	commit(now, "not-chained-yet")

	h := *f.h
	h.Audit = now
	in, err := inspector.New(&h, inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in)
	defer srv.Close()
	_, body := get(t, srv.Client(), srv.URL+"/audit")
	for _, want := range []string{"Trail verified: 2 records intact",
		"Warning: 1 records of writes were chained more than 10m0s after a record made later than them (the first: record 2)",
		"1 more records are pending"} {
		if !strings.Contains(body, want) {
			t.Errorf("audit page without %q", want)
		}
	}
}
