package inspector_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// The hostile strings every view must show as text.
const (
	hostileScript = `<script>alert("pwned")</script>`
	hostileImg    = `"><img src=x onerror=alert(1)>`
	hostileURL    = `javascript:alert(document.cookie)`
	// secretPhrase is in a sealed channel value: seeing it proves the page
	// decrypted it.
	secretPhrase = "parcel 1187 left the depot"
	thread       = "support-1187"
	hostileTID   = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
)

// fixture is an encrypted, audited SQLite vault holding a thread with a
// fork, a subgraph namespace, pending writes with an interrupt, hostile
// ids and values, a value over 4 KiB, and memories.
type fixture struct {
	h      *vault.Handle
	dir    string
	fork   string // the checkpoint forked from
	branch string // the fork's new checkpoint
	first  string // the checkpoint the main line continued with
	gate   *inspector.TokenGate
}

// lookupAny reports the value of name in the first of env that has it.
func lookupAny(env []map[string]string, name string) (string, bool) {
	for _, e := range env {
		if v, ok := e[name]; ok {
			return v, true
		}
	}
	return "", false
}

// openVault opens an encrypted, audited vault: a SQLite file in dir, or
// what env names (MEMVAULT_DSN for PostgreSQL).
func openVault(t testing.TB, dir string, env ...map[string]string) *vault.Handle {
	t.Helper()
	cfg, err := config.FromLookup(func(name string) (string, bool) {
		for _, e := range env {
			if v, ok := e[name]; ok {
				return v, true
			}
		}
		_, server := lookupAny(env, "MEMVAULT_DSN")
		switch name {
		case "MEMVAULT_DB":
			// A file unless env names a server: both are refused.
			return filepath.Join(dir, "inspect.db"), !server
		case "LANGGRAPH_AES_KEY":
			return "0123456789abcdef0123456789abcdef", true
		case "MEMVAULT_AUDIT":
			return "true", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := vault.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// put stores a checkpoint of thread (ns) after parent with values.
func put(t testing.TB, h *vault.Handle, thread, ns, parent string, step int, values map[string]any) string {
	t.Helper()
	versions := map[string]string{}
	for k := range values {
		versions[k] = h.Saver.NextVersion("")
		if parent != "" {
			versions[k] = h.Saver.NextVersion(h.Saver.NextVersion(""))
		}
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), TS: time.Now(), ChannelValues: values, ChannelVersions: versions}
	cfg, err := h.Saver.Put(context.Background(), checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: parent}, cp,
		checkpointer.Metadata{"step": step, "source": "loop", "user_id": "carol"}, versions)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CheckpointID
}

func newFixture(t testing.TB, env ...map[string]string) *fixture {
	t.Helper()
	dir := t.TempDir()
	h := openVault(t, dir, env...)
	ctx := context.Background()
	f := &fixture{h: h, dir: dir}
	c0 := put(t, h, thread, "", "", -1, map[string]any{"messages": []any{"Where is my parcel 1187?"}})
	c1 := put(t, h, thread, "", c0, 0, map[string]any{"messages": []any{"Where is my parcel 1187?", secretPhrase}, "status": "looking"})
	f.fork = c1
	c2 := put(t, h, thread, "", c1, 1, map[string]any{"messages": []any{"Where is my parcel 1187?", secretPhrase, "refund 49.90 EUR?"}, "status": "refund"})
	f.first = c2
	if err := h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: c2}, []checkpointer.Write{
		{Channel: "messages", Value: "approve the refund?"},
		{Channel: checkpointer.ChannelInterrupt, Value: map[string]any{"value": "needs a human", "hostile": hostileScript}},
	}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	put(t, h, thread, "tools:7f3a", "", 0, map[string]any{"tool": "track_parcel"})
	br, err := threadfile.Fork(ctx, h.Saver, checkpointer.Config{ThreadID: thread, CheckpointID: c1}, map[string]any{"status": "escalated"})
	if err != nil {
		t.Fatal(err)
	}
	f.branch = br.CheckpointID

	put(t, h, "hostile", "", "", 0, map[string]any{
		"messages": []any{hostileScript, hostileImg, hostileURL, "nul\x00byte", "bidi \u202egnp.exe"},
		hostileImg: hostileScript,
		"big":      strings.Repeat("0123456789abcdef", 600),
	})
	put(t, h, hostileTID, "", "", 0, map[string]any{"x": hostileURL})

	users := store.Namespace{"users", "carol"}
	for k, v := range map[string]string{"diet": "vegetarian, allergic to nuts", "contact": "prefers email", "shipping": "parcels to the depot on Rue 12"} {
		if err := h.Store.Put(ctx, users, k, map[string]any{"text": v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Store.Put(ctx, users, "session", map[string]any{"text": "short-lived"}, store.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", hostileImg}, hostileScript, map[string]any{"text": hostileScript, "url": hostileURL}); err != nil {
		t.Fatal(err)
	}
	return f
}

// server serves the fixture's inspector behind a token gate and returns it
// with the one-time token.
func (f *fixture) server(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	in, err := inspector.New(f.h, inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate, token, err := inspector.NewTokenGate(in, false)
	if err != nil {
		t.Fatal(err)
	}
	f.gate = gate
	srv := httptest.NewServer(gate)
	t.Cleanup(srv.Close)
	return srv, token
}

// login returns a client holding the session cookie.
func login(t testing.TB, srv *httptest.Server, token string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: status %d", resp.StatusCode)
	}
	return c
}

// trailLen is how many records the fixture's audit trail holds.
func (f *fixture) trailLen(t testing.TB) int {
	t.Helper()
	n := 0
	if err := f.h.Audit.Records(context.Background(), audit.Filter{}, func(audit.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
