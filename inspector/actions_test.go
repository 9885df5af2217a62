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

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/vault"
)

// writeServer serves an inspector of h with write actions on or off behind
// a token gate, and returns it with a logged-in client.
func writeServer(t *testing.T, h *vault.Handle, opt inspector.Options) (*httptest.Server, *http.Client) {
	t.Helper()
	in, err := inspector.New(h, opt)
	if err != nil {
		t.Fatal(err)
	}
	gate, token, err := inspector.NewTokenGate(in, false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gate)
	t.Cleanup(srv.Close)
	return srv, login(t, srv, token)
}

// post sends form to u from c as a browser would from an inspector page
// (same origin), with extra headers.
func post(t *testing.T, c *http.Client, srvURL, path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", srvURL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srvURL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Dest", "document")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
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

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// confirmToken opens the confirmation page at path and returns its CSRF
// token.
func confirmToken(t *testing.T, c *http.Client, srvURL, path string) string {
	t.Helper()
	resp, body := get(t, c, srvURL+path)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("%s: status %d, no token:\n%s", path, resp.StatusCode, body)
	}
	return m[1]
}

func threadExists(t *testing.T, h *vault.Handle, id string) bool {
	t.Helper()
	tup, err := h.Saver.GetTuple(context.Background(), checkpointer.Config{ThreadID: id})
	if err != nil {
		t.Fatal(err)
	}
	return tup != nil
}

// recorded reports whether the trail holds a record of op on target by
// principal.
func recorded(t *testing.T, h *vault.Handle, op, target, principal string) bool {
	t.Helper()
	found := false
	err := h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		found = found || r.Op == op && r.Target == target && r.Principal == principal
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestWriteActionsOff: without AllowWrite no page offers an action, the
// confirmation pages and every POST answer 403, and nothing is deleted.
func TestWriteActionsOff(t *testing.T) {
	f := newFixture(t)
	srv, c := writeServer(t, f.h, inspector.Options{})
	_, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread))
	if strings.Contains(body, "delete-thread") || strings.Contains(body, "fork-checkpoint") || !strings.Contains(body, "read-only") {
		t.Error("the thread page offers a write action with write actions off")
	}
	for _, u := range []string{"/confirm/delete-thread?thread=" + url.QueryEscape(thread), "/confirm/erase-subject?subject=carol",
		"/confirm/fork-checkpoint?thread=" + url.QueryEscape(thread) + "&cpns=&cp=" + f.first} {
		if resp, _ := get(t, c, srv.URL+u); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: status %d, want 403", u, resp.StatusCode)
		}
	}
	form := url.Values{"thread": {thread}, "confirm": {thread}, "csrf": {"anything"}}
	for _, p := range []string{"/action/delete-thread", "/action/erase-subject", "/action/fork-checkpoint", "/threads"} {
		if resp, body := post(t, c, srv.URL, p, form, nil); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "--allow-write") {
			t.Errorf("POST %s: status %d, want 403 naming --allow-write", p, resp.StatusCode)
		}
	}
	if !threadExists(t, f.h, thread) {
		t.Error("the thread was deleted with write actions off")
	}
}

// TestDeleteThreadAction: with AllowWrite, the thread page links to a
// confirmation whose form deletes the thread — only with this session's
// CSRF token, from the inspector's own origin, and with the thread id typed
// again; the deletion is recorded under the principal.
func TestDeleteThreadAction(t *testing.T) {
	f := newFixture(t)
	opt := inspector.Options{AllowWrite: true, Principal: func(*http.Request) string { return "inspector:alice" }}
	srv, c := writeServer(t, f.h, opt)
	_, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread))
	link := regexp.MustCompile(`id="delete-thread" href="([^"]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatal("the thread page has no deletion link with write actions on")
	}
	confirm := strings.ReplaceAll(link[1], "&amp;", "&")
	token := confirmToken(t, c, srv.URL, confirm)

	// Another session (another gate on the same inspector) has another
	// token.
	srv2, c2 := writeServer(t, f.h, opt)
	otherToken := confirmToken(t, c2, srv2.URL, confirm)
	if otherToken == token {
		t.Fatal("two sessions got the same CSRF token")
	}

	good := url.Values{"thread": {thread}, "confirm": {thread}, "csrf": {token}}
	with := func(k, v string) url.Values {
		u := url.Values{}
		for kk, vv := range good {
			u[kk] = vv
		}
		if v == "" {
			u.Del(k)
		} else {
			u.Set(k, v)
		}
		return u
	}
	for _, bad := range []struct {
		name   string
		form   url.Values
		hdr    map[string]string
		status int
	}{
		{"no token", with("csrf", ""), nil, http.StatusForbidden},
		{"wrong token", with("csrf", token[:len(token)-2]+"xx"), nil, http.StatusForbidden},
		{"another session's token", with("csrf", otherToken), nil, http.StatusForbidden},
		{"cross-site", good, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"same site, another port", good, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"another origin, no fetch metadata", good, map[string]string{"Sec-Fetch-Site": "", "Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"opaque origin, no fetch metadata", good, map[string]string{"Sec-Fetch-Site": "", "Origin": "null"}, http.StatusForbidden},
		{"opaque origin, cross-site", good, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "null"}, http.StatusForbidden},
		{"not confirmed", with("confirm", ""), nil, http.StatusBadRequest},
		{"confirmed another thread", with("confirm", "hostile"), nil, http.StatusBadRequest},
	} {
		resp, _ := post(t, c, srv.URL, "/action/delete-thread", bad.form, bad.hdr)
		if resp.StatusCode != bad.status {
			t.Errorf("%s: status %d, want %d", bad.name, resp.StatusCode, bad.status)
		}
		if !threadExists(t, f.h, thread) {
			t.Fatalf("%s: the thread was deleted", bad.name)
		}
	}
	if recorded(t, f.h, audit.OpThreadDelete, thread, "inspector:alice") {
		t.Fatal("a deletion was recorded before any succeeded")
	}

	// As Chromium sends it under Referrer-Policy: no-referrer.
	resp, body := post(t, c, srv.URL, "/action/delete-thread", good, map[string]string{"Origin": "null"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "deleted") {
		t.Fatalf("confirmed deletion: status %d:\n%s", resp.StatusCode, body)
	}
	if threadExists(t, f.h, thread) {
		t.Error("the thread is still there after its confirmed deletion")
	}
	if !recorded(t, f.h, audit.OpThreadDelete, thread, "inspector:alice") {
		t.Error("the deletion is not in the audit trail under inspector:alice")
	}
	if resp, _ := post(t, c, srv.URL, "/action/delete-thread", good, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("deleting it again: status %d, want 404", resp.StatusCode)
	}
}

// TestEraseSubjectAction: with AllowWrite, a subject looked up on the keys
// page links to a confirmation whose form erases the subject: its keys
// destroyed, its threads and memories deleted, the erasure recorded under
// the principal and shown on the keys page.
func TestEraseSubjectAction(t *testing.T) {
	h := subjectVault(t)
	srv, c := writeServer(t, h, inspector.Options{AllowWrite: true})
	_, body := get(t, c, srv.URL+"/keys?subject=dave")
	link := regexp.MustCompile(`id="erase-subject" href="([^"]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatal("the keys page has no erasure link for a subject looked up")
	}
	token := confirmToken(t, c, srv.URL, strings.ReplaceAll(link[1], "&amp;", "&"))
	if resp, _ := post(t, c, srv.URL, "/action/erase-subject", url.Values{"subject": {"dave"}, "confirm": {"dave"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("no token: status %d, want 403", resp.StatusCode)
	}
	if !threadExists(t, h, "dave:chat") {
		t.Fatal("dave's thread was deleted by a refused request")
	}
	// A subject that owns nothing (a typo: "dav", "dave2") is refused,
	// 404, and nothing is recorded: no erasure, no audit record.
	for _, typo := range []string{"dav", "dave2"} {
		resp, body := post(t, c, srv.URL, "/action/erase-subject", url.Values{"subject": {typo}, "confirm": {typo}, "csrf": {token}}, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(errorText(body), "owns nothing") {
			t.Errorf("erasure of %q, who owns nothing: status %d: %s", typo, resp.StatusCode, errorText(body))
		}
		if e, err := h.Keys.Erasure(context.Background(), typo); err != nil || e != nil || recorded(t, h, audit.OpSubjectErase, typo, inspector.DefaultPrincipal) {
			t.Errorf("the refused erasure of %q was recorded: %+v, %v", typo, e, err)
		}
	}
	resp, body := post(t, c, srv.URL, "/action/erase-subject", url.Values{"subject": {"dave"}, "confirm": {"dave"}, "csrf": {token}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "erased") {
		t.Fatalf("confirmed erasure: status %d:\n%s", resp.StatusCode, body)
	}
	if threadExists(t, h, "dave:chat") || !threadExists(t, h, "carol:chat") {
		t.Error("after erasing dave: dave's thread is there, or carol's is not")
	}
	if it, err := h.Store.Get(context.Background(), []string{"users", "dave"}, "diet"); err != nil || it != nil {
		t.Errorf("dave's memory after the erasure: %v, %v", it, err)
	}
	if e, err := h.Keys.Erasure(context.Background(), "dave"); err != nil || e == nil || !e.Done {
		t.Errorf("dave's erasure record: %+v, %v", e, err)
	}
	if !recorded(t, h, audit.OpSubjectErase, "dave", inspector.DefaultPrincipal) {
		t.Error("the erasure is not in the audit trail under the inspector's principal")
	}
	if _, body := get(t, c, srv.URL+"/keys?subject=dave"); !strings.Contains(body, "ERASED") {
		t.Error("the keys page does not show dave as erased")
	}
}

// TestForkCheckpointAction: with AllowWrite, a checkpoint's page links to
// the confirmation of a fork; the confirmed form stores a new checkpoint
// whose parent is that one, with the channel values given, recorded under
// the principal; a refused or malformed request stores nothing.
func TestForkCheckpointAction(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	srv, c := writeServer(t, f.h, inspector.Options{AllowWrite: true, Principal: func(*http.Request) string { return "inspector:bob" }})
	_, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&cpns=&cp="+f.first)
	link := regexp.MustCompile(`id="fork-checkpoint" href="([^"]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatal("the checkpoint has no fork link with write actions on")
	}
	token := confirmToken(t, c, srv.URL, strings.ReplaceAll(link[1], "&amp;", "&"))
	count := func() int {
		n := 0
		for _, err := range f.h.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	before := count()
	form := url.Values{"thread": {thread}, "cpns": {""}, "cp": {f.first}, "confirm": {thread}, "csrf": {token}, "values": {`{"status": "reopened"}`}}
	for _, bad := range []struct {
		name   string
		edit   func(url.Values)
		status int
	}{
		{"no token", func(v url.Values) { v.Del("csrf") }, http.StatusForbidden},
		{"values not an object", func(v url.Values) { v.Set("values", `["x"]`) }, http.StatusBadRequest},
		{"values not JSON", func(v url.Values) { v.Set("values", `{status: reopened}`) }, http.StatusBadRequest},
		{"no such checkpoint", func(v url.Values) { v.Set("cp", "1f000000-0000-6000-8000-000000000000") }, http.StatusNotFound},
		{"not confirmed", func(v url.Values) { v.Set("confirm", "x") }, http.StatusBadRequest},
	} {
		v := url.Values{}
		for k, vs := range form {
			v[k] = append([]string(nil), vs...)
		}
		bad.edit(v)
		if resp, _ := post(t, c, srv.URL, "/action/fork-checkpoint", v, nil); resp.StatusCode != bad.status {
			t.Errorf("%s: status %d, want %d", bad.name, resp.StatusCode, bad.status)
		}
	}
	if n := count(); n != before {
		t.Fatalf("refused forks stored %d checkpoints", n-before)
	}
	resp, body := post(t, c, srv.URL, "/action/fork-checkpoint", form, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "new checkpoint") {
		t.Fatalf("confirmed fork: status %d:\n%s", resp.StatusCode, body)
	}
	tup, err := f.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil || tup == nil {
		t.Fatal(tup, err)
	}
	if tup.ParentConfig == nil || tup.ParentConfig.CheckpointID != f.first || tup.Checkpoint.ChannelValues["status"] != "reopened" || tup.Metadata["source"] != "fork" {
		t.Errorf("the newest checkpoint after the fork: parent %+v, status %v, source %v", tup.ParentConfig, tup.Checkpoint.ChannelValues["status"], tup.Metadata["source"])
	}
	if !recorded(t, f.h, audit.OpCheckpointWrite, thread, "inspector:bob") {
		t.Error("the fork is not in the audit trail under inspector:bob")
	}
	res := regexp.MustCompile(`id="result" href="([^"]+)"`).FindStringSubmatch(body)
	if res == nil || !strings.Contains(res[1], tup.Config.CheckpointID) {
		t.Errorf("the result does not link to the new checkpoint %s", tup.Config.CheckpointID)
	}
}
