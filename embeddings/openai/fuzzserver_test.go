package openai

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fuzzServer answers every request with 200 and the body under test.
type fuzzServer struct {
	*httptest.Server
	body atomic.Pointer[string]
}

func newFuzzServer(f *testing.F) *fuzzServer {
	s := new(fuzzServer)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if b := s.body.Load(); b != nil {
			fmt.Fprint(w, *b)
		}
	}))
	f.Cleanup(s.Close)
	return s
}
