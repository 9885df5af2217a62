package inspector_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
)

// TestDeleteSubgraphOnlyThread: the README promises "A thread's page
// can delete the thread". The thread page lists a thread whose
// checkpoints are all in a subgraph namespace and offers its deletion,
// but the action first looks the thread up with GetTuple in the root
// namespace only, finds nothing, and answers 404 "no thread": such a
// thread cannot be deleted from the inspector.
func TestDeleteSubgraphOnlyThread(t *testing.T) {
	f := newFixture(t)
	const id = "subgraph-only"
	put(t, f.h, id, "tools:1", "", 0, map[string]any{"tool": "lookup"})
	srv, c := writeServer(t, f.h, inspector.Options{AllowWrite: true})
	resp, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(id))
	link := regexp.MustCompile(`id="delete-thread" href="([^"]+)"`).FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || link == nil {
		t.Fatalf("thread page: status %d, deletion link %v", resp.StatusCode, link)
	}
	token := confirmToken(t, c, srv.URL, strings.ReplaceAll(link[1], "&amp;", "&"))
	resp, body = post(t, c, srv.URL, "/action/delete-thread", url.Values{"thread": {id}, "confirm": {id}, "csrf": {token}}, nil)
	n := 0
	for _, err := range f.h.Saver.List(context.Background(), &checkpointer.Config{ThreadID: id}, checkpointer.ListOptions{AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if resp.StatusCode != http.StatusOK || n != 0 {
		m := regexp.MustCompile(`(?s)<main.*?</main>`).FindString(body)
		t.Fatalf("deleting a thread offered on its page: status %d, %d checkpoints left; page: %.300s", resp.StatusCode, n, m)
	}
}

// TestCSRFWithoutSession: write actions' CSRF tokens are bound to the
// browser session (WithSession). Mounted behind a team's own
// authentication with write actions on but no session set, the inspector
// refuses the confirmation page (and so the action); it served every user
// one shared token for the life of the process.
func TestCSRFWithoutSession(t *testing.T) {
	f := newFixture(t)
	in, err := inspector.New(f.h, inspector.Options{AllowWrite: true, Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	if err != nil {
		t.Fatal(err)
	}
	// The team's own authentication: it names the user, nothing more.
	srv := httptest.NewServer(in)
	t.Cleanup(srv.Close)
	tokenOf := func(user string) string {
		req, err := http.NewRequest("GET", srv.URL+"/confirm/delete-thread?thread="+url.QueryEscape(thread), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := csrfField.FindStringSubmatch(string(b))
		if resp.StatusCode != http.StatusOK || m == nil {
			return ""
		}
		return m[1]
	}
	alice, mallory := tokenOf("alice"), tokenOf("mallory")
	if alice != "" && alice == mallory {
		t.Fatalf("write actions are on without a session binding, and two users' CSRF tokens are the same (%s…): one user's token works in another's browser", alice[:8])
	}
	if alice != "" || mallory != "" {
		t.Fatal("the confirmation page gave a CSRF token to a request with no session")
	}
}
