package mongovault_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/backends/mongodb/mongovault"
	"github.com/memvault/memvault/store"
)

// mongoStore is the *mongostore.Store under h.Store's wrappers.
func mongoStore(t *testing.T, s store.Store) *mongostore.Store {
	t.Helper()
	for s != nil {
		if m, ok := s.(*mongostore.Store); ok {
			return m
		}
		u, ok := s.(interface{ Unwrap() store.Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	t.Fatalf("no *mongostore.Store under %T", s)
	return nil
}

// TestTTLIndexThroughURI: memvault_ttl_index=true in a mongodb:// URI asks
// the store for its TTL index (mongostore.Options.TTLIndex; before, config
// could not set it); FerretDB refuses the index, which the store reports
// while its sweeper goes on. The parameter never reaches the driver, and a
// value that is not a boolean is refused (ErrURI).
func TestTTLIndexThroughURI(t *testing.T) {
	uri, db := mongotest.URI(t), mongotest.Database(t).Name()
	env := map[string]string{
		"MEMVAULT_SCHEMA":      db,
		"MEMVAULT_EMBEDDINGS":  "none",
		"LANGGRAPH_AES_KEY":    "0123456789abcdef0123456789abcdef",
		"MEMVAULT_TTL_DEFAULT": "1h",
	}
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		param string
		want  bool
	}{{"", false}, {sep + "memvault_ttl_index=true", true}, {sep + "connectTimeoutMS=20000&memvault_ttl_index=1", true}, {sep + "memvault_ttl_index=false", false}} {
		env["MEMVAULT_DSN"] = uri + c.param
		h, err := openEnv(t, env)
		if err != nil {
			t.Fatalf("Open %q: %v", c.param, err)
		}
		st := mongoStore(t, h.Store).TTLIndex()
		_ = h.Close()
		if st.Requested != c.want {
			t.Errorf("URI parameters %q: TTLIndex() = %+v, want requested %v", c.param, st, c.want)
		}
		if c.want && (st.Present || st.Reason == "") {
			t.Errorf("URI parameters %q on FerretDB: TTLIndex() = %+v, want absent with the server's refusal", c.param, st)
		}
	}
	env["MEMVAULT_DSN"] = uri + sep + "memvault_ttl_index=sometimes"
	if h, err := openEnv(t, env); !errors.Is(err, mongovault.ErrURI) {
		if err == nil {
			_ = h.Close()
		}
		t.Fatalf("Open with memvault_ttl_index=sometimes: %v; want ErrURI", err)
	}
}
