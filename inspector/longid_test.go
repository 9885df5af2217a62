package inspector_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
)

// TestLongIDNotEchoed: lookups take ids longer than
// checkpointer.MaxIDBytes (a thread an earlier version stored must stay
// reachable), and the inspector's not-found errors quoted a 64 KiB query
// parameter whole, into the error page and whatever logs it. They name
// it by its length and the limit now; an id within the limit is still
// quoted.
func TestLongIDNotEchoed(t *testing.T) {
	f := newFixture(t)
	srv, c := writeServer(t, f.h, inspector.Options{AllowWrite: true, Principal: func(*http.Request) string { return "inspector:alice" }})
	huge := strings.Repeat("S", 64<<10)
	q := url.QueryEscape
	check := func(name string, resp *http.Response, body string, huge string) {
		t.Helper()
		msg := errorText(body)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404: %.300s", name, resp.StatusCode, msg)
		}
		if strings.Contains(body, huge[:64]) {
			t.Errorf("%s: the id's text is echoed (page of %d bytes): %.300s", name, len(body), msg)
		}
		if len(msg) > 1000 || !strings.Contains(msg, " bytes (longer than the") || !strings.Contains(msg, strconv.Itoa(checkpointer.MaxIDBytes)) {
			t.Errorf("%s: the error (%d bytes) does not name the id by its length and the limit: %.300s", name, len(msg), msg)
		}
	}
	for _, u := range []string{
		"/thread?id=" + huge,
		"/thread?id=" + q(thread) + "&cp=" + huge + "&cpns=",
		"/thread?id=" + q(thread) + "&ns=" + huge,
		"/value?thread=" + huge + "&cpns=&cp=x&channel=messages",
		"/value?thread=" + q(thread) + "&cpns=&cp=" + huge + "&channel=messages",
		"/value?thread=" + q(thread) + "&cpns=&cp=" + f.first + "&channel=" + huge,
		"/value?thread=" + q(thread) + "&cpns=&cp=" + f.first + "&write=" + huge,
		"/value?ns=users&ns=carol&key=" + huge,
		"/value?ns=users&ns=" + huge + "&key=k",
	} {
		resp, body := get(t, c, srv.URL+u)
		check(u[:strings.IndexByte(u, '=')+1]+"…", resp, body, huge)
	}

	// A form is at most 16 KiB (maxFormBytes): its ids are 6 KiB.
	long := huge[:6<<10]
	token := confirmToken(t, c, srv.URL, "/confirm/delete-thread?thread="+q(thread))
	for name, form := range map[string]url.Values{
		"delete-thread": {"thread": {long}, "confirm": {long}, "csrf": {token}},
		"fork-checkpoint": {"thread": {thread}, "cpns": {""}, "cp": {long}, "confirm": {thread}, "csrf": {token},
			"values": {`{"status": "x"}`}},
	} {
		resp, body := post(t, c, srv.URL, "/action/"+name, form, nil)
		check(name, resp, body, long)
	}

	// Within the limit, the id is still quoted.
	resp, body := get(t, c, srv.URL+"/thread?id=nosuch")
	if msg := errorText(body); resp.StatusCode != http.StatusNotFound || !strings.Contains(msg, "thread &#34;nosuch&#34;") {
		t.Errorf("status %d: %s", resp.StatusCode, msg)
	}
}
