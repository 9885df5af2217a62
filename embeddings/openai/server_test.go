package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/embeddings"
)

// testKey is the API key the test server expects. Error tests check that it
// never appears in error text, even when the server echoes it.
const testKey = "sk-test-Secret-0123456789abcdef"

// apiRequest is the body of POST /v1/embeddings.
type apiRequest struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

// apiServer is an httptest server speaking OpenAI's embeddings API. Its
// vectors are embeddings.Hashing vectors of the inputs, so tests can check
// which input a vector belongs to.
type apiServer struct {
	*httptest.Server
	defaultDims int // when the request has no dimensions field

	mu       sync.Mutex
	requests []apiRequest
	paths    []string
	// hook, when set, may answer request n (from 0) itself by returning
	// true.
	hook func(w http.ResponseWriter, r *http.Request, req apiRequest, n int) bool
	// reverse answers with the data items in reverse index order.
	reverse bool
	// dimsDelta is added to the length of every returned vector.
	dimsDelta int
}

func newAPIServer(t testing.TB) *apiServer {
	t.Helper()
	s := &apiServer{defaultDims: 32}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// options returns Options pointing at s with fast retries.
func (s *apiServer) options() Options {
	return Options{
		BaseURL:     s.URL + "/v1",
		APIKey:      testKey,
		Dimensions:  32,
		BackoffBase: time.Millisecond,
		BackoffMax:  4 * time.Millisecond,
		HTTPClient:  s.Client(),
	}
}

func (s *apiServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *apiServer) batchSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []int
	for _, r := range s.requests {
		n = append(n, len(r.Input))
	}
	return n
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "param": nil, "code": nil,
	}})
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	var req apiRequest
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad JSON: "+err.Error())
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.paths = append(s.paths, r.URL.RequestURI())
	hook, reverse, delta := s.hook, s.reverse, s.dimsDelta
	s.mu.Unlock()

	if hook != nil && hook(w, r, req, n) {
		return
	}
	auth := r.Header.Get("Authorization")
	if r.Header.Get("api-key") != "" {
		auth = "Bearer " + r.Header.Get("api-key")
	}
	if auth != "Bearer "+testKey {
		// Like OpenAI, quote the key that was sent.
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+strings.TrimPrefix(auth, "Bearer "))
		return
	}
	if len(req.Input) == 0 {
		writeError(w, http.StatusBadRequest, "'input' must not be empty")
		return
	}
	dims := s.defaultDims
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	h := embeddings.NewUnkeyedHashing(dims)
	data := make([]map[string]any, len(req.Input))
	for i, in := range req.Input {
		if in == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("'$.input[%d]' is invalid: empty string", i))
			return
		}
		v := h.Embed(in)
		if delta > 0 {
			v = append(v, make([]float32, delta)...)
		} else if delta < 0 {
			v = v[:len(v)+delta]
		}
		var emb any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}
