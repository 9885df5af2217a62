package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRedirectKeepsTheKeyAtHome: a server that redirects the request to
// another origin (a compromised proxy, a misconfigured gateway) does not get
// the API key sent there. Go's client drops Authorization on a redirect to
// another host but keeps every other header, such as Azure's api-key, and
// keeps Authorization on a redirect to another port or from https to http
// of the same host. The embedder follows no redirect out of its BaseURL's
// origin: the call fails with ErrStatus naming the redirect, and the other
// server sees no request.
func TestRedirectKeepsTheKeyAtHome(t *testing.T) {
	for _, azure := range []bool{false, true} {
		name := "openai"
		if azure {
			name = "azure"
		}
		t.Run(name, func(t *testing.T) {
			var got atomic.Int32
			var leaked atomic.Value
			leaked.Store("")
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				leaked.Store(r.Header.Get("Authorization") + r.Header.Get("api-key"))
				writeError(w, http.StatusUnauthorized, "no")
			}))
			defer elsewhere.Close()
			s := newAPIServer(t)
			s.hook = func(w http.ResponseWriter, r *http.Request, _ apiRequest, _ int) bool {
				// Another port of the same host, then (for the test of
				// another host) the loopback name instead of its address.
				to := elsewhere.URL + r.URL.RequestURI()
				if azure {
					to = strings.Replace(to, "127.0.0.1", "localhost", 1)
				}
				http.Redirect(w, r, to, http.StatusTemporaryRedirect)
				return true
			}
			opts := s.options()
			opts.MaxRetries = -1
			if azure {
				opts.Azure, opts.BaseURL, opts.Model = true, s.URL, "emb"
			}
			e := mustNew(t, opts)
			_, err := e.EmbedDocuments(context.Background(), []string{"hello"})
			if err == nil {
				t.Fatal("a redirected request succeeded")
			}
			if k := leaked.Load().(string); strings.Contains(k, testKey) {
				t.Errorf("the redirect's target received the API key (%d requests)", got.Load())
			}
			if got.Load() != 0 {
				t.Errorf("the redirect's target received %d requests", got.Load())
			}
			t.Log(err)
			if !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("err %v, want ErrStatus naming the redirect", err)
			}
		})
	}
}

// TestRedirectWithinOriginFollowed: a redirect to another path of the same
// origin (a gateway's trailing-slash rewrite) is still followed.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	s := newAPIServer(t)
	s.hook = func(w http.ResponseWriter, r *http.Request, _ apiRequest, n int) bool {
		if r.URL.Path != "/v1/embeddings" {
			return false
		}
		http.Redirect(w, r, "/v2/embeddings", http.StatusPermanentRedirect)
		return true
	}
	e := mustNew(t, s.options())
	v, err := e.EmbedDocuments(context.Background(), []string{"hello"})
	if err != nil || len(v) != 1 {
		t.Fatalf("%d vectors, %v", len(v), err)
	}
}

// TestHugeResponseBounded: a server that answers with an endless body (a
// successful one, or an error whose body never ends) cannot make the
// client read and buffer it all: the response of a batch is capped by
// what the batch can need (its vectors as JSON, plus slack), and the call
// fails with ErrBadResponse / ErrStatus.
func TestHugeResponseBounded(t *testing.T) {
	const endless = 256 << 20
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var written atomic.Int64
			s := newAPIServer(t)
			s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				chunk := []byte(`{"error":{"message":"` + strings.Repeat("x", 1<<16))
				if status == http.StatusOK {
					chunk = []byte(`{"data":[{"index":0,"embedding":[` + strings.Repeat("0,", 1<<15))
				}
				for written.Load() < endless {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return true
					}
					if status == http.StatusOK {
						chunk = []byte(strings.Repeat("0,", 1<<15))
					} else {
						chunk = []byte(strings.Repeat("x", 1<<16))
					}
				}
				return true
			}
			opts := s.options()
			opts.MaxRetries = -1
			e := mustNew(t, opts)
			_, err := e.EmbedDocuments(context.Background(), []string{"hello"})
			if err == nil {
				t.Fatal("an endless response was accepted")
			}
			t.Log(err)
			if w := written.Load(); w >= endless {
				t.Errorf("the client read the whole %d MiB response", w>>20)
			}
			if !errors.Is(err, ErrBadResponse) && !errors.Is(err, ErrStatus) {
				t.Errorf("err %v, want ErrBadResponse or ErrStatus", err)
			}
			if len(err.Error()) > 2*maxDetail+200 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
}
