package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/embeddings"
)

func mustNew(t *testing.T, opts Options) *Embedder {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// recordSleeps replaces e's backoff sleep with one that records the
// requested delays and returns at once.
func recordSleeps(e *Embedder) *[]time.Duration {
	var mu sync.Mutex
	var waits []time.Duration
	e.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return &waits
}

func checkVectors(t *testing.T, texts []string, got [][]float32, dims int) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	h := embeddings.NewUnkeyedHashing(dims)
	for i, text := range texts {
		want := make([]float32, dims)
		if text != "" {
			want = h.Embed(text)
		}
		if !slices.Equal(got[i], want) {
			t.Errorf("vector %d is not the vector of %q", i, text)
		}
	}
}

func TestEmbedDocumentsOrderAndEmpty(t *testing.T) {
	s := newAPIServer(t)
	s.reverse = true
	opts := s.options()
	opts.Dimensions = 24
	e := mustNew(t, opts)
	if e.Name() != "openai:text-embedding-3-small:24" || e.Dims() != 24 {
		t.Errorf("Name %q Dims %d", e.Name(), e.Dims())
	}
	texts := []string{"first text", "", "second text", "third", ""}
	got, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 24)

	if s.count() != 1 {
		t.Fatalf("%d requests, want 1", s.count())
	}
	req := s.requests[0]
	if !slices.Equal(req.Input, []string{"first text", "second text", "third"}) {
		t.Errorf("inputs sent %q", req.Input)
	}
	if req.Model != DefaultModel || req.Dimensions == nil || *req.Dimensions != 24 || req.EncodingFormat != "" {
		t.Errorf("request model %q dimensions %v format %q", req.Model, req.Dimensions, req.EncodingFormat)
	}
	if s.paths[0] != "/v1/embeddings" {
		t.Errorf("path %q", s.paths[0])
	}

	q, err := e.EmbedQuery(context.Background(), "third")
	if err != nil || !slices.Equal(q, got[3]) {
		t.Errorf("EmbedQuery: err %v, vector differs from the document vector", err)
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"", ""}); err != nil || s.count() != 2 {
		t.Errorf("all-empty input: err %v, %d requests (want no new one)", err, s.count())
	}
}

func TestBase64Encoding(t *testing.T) {
	s := newAPIServer(t)
	opts := s.options()
	opts.Base64 = true
	e := mustNew(t, opts)
	texts := []string{"base64 vectors", "are smaller"}
	got, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 32)
	if f := s.requests[0].EncodingFormat; f != "base64" {
		t.Errorf("encoding_format %q", f)
	}
}

func TestNonV3ModelSendsNoDimensions(t *testing.T) {
	s := newAPIServer(t)
	s.defaultDims = 16
	opts := s.options()
	opts.Model = "nomic-embed-text"
	opts.Dimensions = 16
	e := mustNew(t, opts)
	got, err := e.EmbedDocuments(context.Background(), []string{"local model"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, []string{"local model"}, got, 16)
	if s.requests[0].Dimensions != nil {
		t.Errorf("dimensions %d sent for a model that does not take it", *s.requests[0].Dimensions)
	}
	if e.Name() != "openai:nomic-embed-text:16" {
		t.Errorf("Name %q", e.Name())
	}
}

func TestBatchSplitByCount(t *testing.T) {
	s := newAPIServer(t)
	s.reverse = true
	opts := s.options()
	opts.MaxBatchInputs = 3
	e := mustNew(t, opts)
	texts := []string{"a1", "a2", "", "a3", "a4", "a5", "a6", "a7", ""}
	got, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 32)
	if b := s.batchSizes(); !slices.Equal(b, []int{3, 3, 1}) {
		t.Errorf("batch sizes %v, want [3 3 1]", b)
	}
}

func TestBatchSplitByTokens(t *testing.T) {
	s := newAPIServer(t)
	opts := s.options()
	opts.MaxBatchTokens = 10 // 40 bytes
	e := mustNew(t, opts)
	texts := []string{
		strings.Repeat("a", 16),  // 4 tokens
		strings.Repeat("b", 16),  // 4 tokens: 8
		strings.Repeat("c", 9),   // 3 tokens: 11 > 10, new batch
		strings.Repeat("d", 100), // 25 tokens alone: its own batch
		"e",                      // 1 token
		strings.Repeat("f", 36),  // 9 tokens: 10, fits
	}
	got, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 32)
	if b := s.batchSizes(); !slices.Equal(b, []int{2, 1, 1, 2}) {
		t.Errorf("batch sizes %v, want [2 1 1 2]", b)
	}
}

func TestBatches(t *testing.T) {
	e := &Embedder{maxInputs: 2, maxTokens: 5}
	texts := []string{"", "aaaa", "bbbbbbbb", "c", "", "d", strings.Repeat("e", 40), "f"}
	idx := []int{1, 2, 3, 5, 6, 7}
	got := e.batches(texts, idx)
	want := [][]int{{1, 2}, {3, 5}, {6}, {7}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
	if b := e.batches(texts, nil); len(b) != 0 {
		t.Errorf("no inputs: %v", b)
	}
}

func TestRateLimitedThenSuccess(t *testing.T) {
	s := newAPIServer(t)
	s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, n int) bool {
		if n < 2 {
			w.Header().Set("Retry-After", "0")
			writeError(w, http.StatusTooManyRequests, "Rate limit reached")
			return true
		}
		return false
	}
	e := mustNew(t, s.options())
	texts := []string{"retry me", "and me"}
	got, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, texts, got, 32)
	if s.count() != 3 {
		t.Errorf("%d requests, want 3", s.count())
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	future := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name, header, value string
		min, max            time.Duration
	}{
		{"seconds", "Retry-After", "7", 7 * time.Second, 7 * time.Second},
		{"fraction", "Retry-After", "0.25", 250 * time.Millisecond, 250 * time.Millisecond},
		{"milliseconds", "Retry-After-Ms", "1500", 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"date", "Retry-After", future, 20 * time.Second, 30 * time.Second},
		{"past date", "Retry-After", "Mon, 02 Jan 2006 15:04:05 GMT", 0, 0},
		{"huge", "Retry-After", "99999999999", maxRetryAfter, maxRetryAfter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newAPIServer(t)
			s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, n int) bool {
				if n == 0 {
					w.Header().Set(tc.header, tc.value)
					writeError(w, http.StatusServiceUnavailable, "overloaded")
					return true
				}
				return false
			}
			e := mustNew(t, s.options())
			waits := recordSleeps(e)
			if _, err := e.EmbedQuery(context.Background(), "x"); err != nil {
				t.Fatal(err)
			}
			if len(*waits) != 1 || (*waits)[0] < tc.min || (*waits)[0] > tc.max {
				t.Errorf("waited %v, want one wait in [%v, %v]", *waits, tc.min, tc.max)
			}
		})
	}
}

func TestServerErrorRetriesExhausted(t *testing.T) {
	s := newAPIServer(t)
	s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
		writeError(w, http.StatusInternalServerError, "The server had an error")
		return true
	}
	opts := s.options()
	opts.MaxRetries = 3
	opts.BackoffBase = 100 * time.Millisecond
	opts.BackoffMax = 300 * time.Millisecond
	opts.MaxBatchInputs = 2
	e := mustNew(t, opts)
	waits := recordSleeps(e)
	_, err := e.EmbedDocuments(context.Background(), []string{"", "a", "b", "c"})
	var be *BatchError
	if !errors.As(err, &be) {
		t.Fatalf("error %v is not a *BatchError", err)
	}
	if be.Batch != 0 || be.First != 1 || be.Last != 2 || be.Inputs != 2 || be.Attempts != 4 || be.StatusCode != 500 {
		t.Errorf("BatchError %+v", be)
	}
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrStatus) {
		t.Errorf("error chain lacks ErrRetriesExhausted/ErrStatus: %v", err)
	}
	for _, want := range []string{"batch 0", "inputs 1..2", "4 attempt", "HTTP 500", "The server had an error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if s.count() != 4 {
		t.Errorf("%d requests, want 4", s.count())
	}
	// Exponential backoff with up to 50% jitter, capped at BackoffMax.
	bounds := [][2]time.Duration{{50, 100}, {100, 200}, {150, 300}}
	if len(*waits) != len(bounds) {
		t.Fatalf("waits %v, want %d", *waits, len(bounds))
	}
	for i, w := range *waits {
		if lo, hi := bounds[i][0]*time.Millisecond, bounds[i][1]*time.Millisecond; w < lo || w > hi {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, w, lo, hi)
		}
	}
}

func TestNonRetryableStatus(t *testing.T) {
	s := newAPIServer(t)
	s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
		writeError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens")
		return true
	}
	e := mustNew(t, s.options())
	_, err := e.EmbedDocuments(context.Background(), []string{"too long"})
	var be *BatchError
	if !errors.As(err, &be) || be.Attempts != 1 || be.StatusCode != 400 || errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("err %v (%+v), want one attempt with status 400", err, be)
	}
	if !strings.Contains(err.Error(), "maximum context length") {
		t.Errorf("error %q lacks the server's message", err)
	}
	if s.count() != 1 {
		t.Errorf("%d requests, want 1", s.count())
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	echo := func(status int, raw bool) func(http.ResponseWriter, *http.Request, apiRequest, int) bool {
		return func(w http.ResponseWriter, r *http.Request, _ apiRequest, _ int) bool {
			msg := "request with " + r.Header.Get("Authorization") + " refused (key " + testKey + ")"
			if raw {
				w.WriteHeader(status)
				fmt.Fprint(w, "<html>"+msg+"</html>")
				return true
			}
			writeError(w, status, msg)
			return true
		}
	}
	cases := map[string]func(*apiServer, *Options){
		"401 wrong key": func(_ *apiServer, o *Options) { o.APIKey = testKey + "-wrong" },
		"400 echo":      func(s *apiServer, _ *Options) { s.hook = echo(400, false) },
		"500 echo":      func(s *apiServer, _ *Options) { s.hook = echo(500, false) },
		"502 html":      func(s *apiServer, _ *Options) { s.hook = echo(502, true) },
		"200 garbage": func(s *apiServer, _ *Options) {
			s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
				fmt.Fprint(w, `{"data": "`+testKey+`"`)
				return true
			}
		},
		// Nothing listens on port 1 of the loopback interface; the
		// connection error quotes the URL, which here holds the key.
		"transport": func(s *apiServer, o *Options) { o.BaseURL = "http://127.0.0.1:1/" + testKey + "/v1" },
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			s := newAPIServer(t)
			opts := s.options()
			opts.MaxRetries = 1
			setup(s, &opts)
			e := mustNew(t, opts)
			_, err := e.EmbedDocuments(context.Background(), []string{"secret-free"})
			if err == nil {
				t.Fatal("no error")
			}
			key := opts.APIKey
			for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
				if strings.Contains(text, key) || strings.Contains(text, testKey) {
					t.Errorf("error text contains the API key: %s", text)
				}
			}
			for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
				if strings.Contains(u.Error(), testKey) {
					t.Errorf("wrapped error contains the API key: %s", u)
				}
			}
			t.Log(err)
		})
	}
}

func TestSlowServerRequestTimeout(t *testing.T) {
	s := newAPIServer(t)
	s.hook = func(w http.ResponseWriter, r *http.Request, _ apiRequest, _ int) bool {
		<-r.Context().Done() // never answers; the client gives up
		return true
	}
	opts := s.options()
	opts.RequestTimeout = 20 * time.Millisecond
	opts.MaxRetries = 1
	e := mustNew(t, opts)
	_, err := e.EmbedDocuments(context.Background(), []string{"slow"})
	var be *BatchError
	if !errors.As(err, &be) || be.Attempts != 2 {
		t.Fatalf("err %v, want a BatchError after 2 attempts", err)
	}
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrRetriesExhausted) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error chain %v: want ErrTimeout and ErrRetriesExhausted, not the caller's deadline", err)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		s := newAPIServer(t)
		e := mustNew(t, s.options())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := e.EmbedDocuments(ctx, []string{"x"})
		if !errors.Is(err, context.Canceled) || s.count() != 0 {
			t.Errorf("err %v after %d requests, want Canceled and none", err, s.count())
		}
	})
	t.Run("during request", func(t *testing.T) {
		s := newAPIServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.hook = func(w http.ResponseWriter, r *http.Request, _ apiRequest, _ int) bool {
			cancel()
			<-r.Context().Done()
			return true
		}
		e := mustNew(t, s.options())
		_, err := e.EmbedDocuments(ctx, []string{"x"})
		var be *BatchError
		if !errors.As(err, &be) || !errors.Is(err, context.Canceled) || be.Attempts != 1 || errors.Is(err, ErrTimeout) {
			t.Errorf("err %v, want Canceled after 1 attempt", err)
		}
	})
	t.Run("during backoff", func(t *testing.T) {
		s := newAPIServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
			w.Header().Set("Retry-After", "3600")
			writeError(w, http.StatusTooManyRequests, "slow down")
			return true
		}
		e := mustNew(t, s.options())
		var waited time.Duration
		e.sleep = func(ctx context.Context, d time.Duration) error {
			waited = d
			cancel()
			return sleepCtx(ctx, d) // the real sleep: only ctx can end it
		}
		_, err := e.EmbedDocuments(ctx, []string{"x"})
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrStatus) || s.count() != 1 || waited != time.Hour {
			t.Errorf("err %v after %d requests and a wait of %v, want Canceled after 1 and 1h", err, s.count(), waited)
		}
	})
}

func TestWrongDimensions(t *testing.T) {
	for _, delta := range []int{-1, 3} {
		s := newAPIServer(t)
		s.dimsDelta = delta
		e := mustNew(t, s.options())
		_, err := e.EmbedDocuments(context.Background(), []string{"", "a", "b"})
		var be *BatchError
		if !errors.Is(err, embeddings.ErrDimensionMismatch) || !errors.As(err, &be) || be.Attempts != 1 {
			t.Errorf("delta %d: err %v, want ErrDimensionMismatch without retry", delta, err)
		}
	}
}

func TestMalformedResponses(t *testing.T) {
	bodies := map[string]string{
		"too few":      `{"data":[{"index":0,"embedding":[0.5]}]}`,
		"repeated":     `{"data":[{"index":0,"embedding":[0.5]},{"index":0,"embedding":[0.5]}]}`,
		"out of range": `{"data":[{"index":0,"embedding":[0.5]},{"index":2,"embedding":[0.5]}]}`,
		"negative":     `{"data":[{"index":-1,"embedding":[0.5]},{"index":0,"embedding":[0.5]}]}`,
		"not json":     `<html>gateway</html>`,
		"bad type":     `{"data":[{"index":"0","embedding":[0.5]},{"index":1,"embedding":[0.5]}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			s := newAPIServer(t)
			s.hook = func(w http.ResponseWriter, _ *http.Request, _ apiRequest, _ int) bool {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
				return true
			}
			opts := s.options()
			opts.Dimensions = 1
			opts.Model = "tiny"
			e := mustNew(t, opts)
			_, err := e.EmbedDocuments(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) || s.count() != 1 {
				t.Errorf("err %v after %d requests, want ErrBadResponse after 1", err, s.count())
			}
		})
	}
}

func TestTransportErrorRetried(t *testing.T) {
	s := newAPIServer(t)
	opts := s.options()
	s.Close() // nothing listens any more
	opts.MaxRetries = 2
	e := mustNew(t, opts)
	_, err := e.EmbedDocuments(context.Background(), []string{"x"})
	var be *BatchError
	if !errors.Is(err, ErrTransport) || !errors.Is(err, ErrRetriesExhausted) || !errors.As(err, &be) || be.Attempts != 3 || be.StatusCode != 0 {
		t.Errorf("err %v, want ErrTransport after 3 attempts", err)
	}
}

func TestAzure(t *testing.T) {
	s := newAPIServer(t)
	opts := s.options()
	opts.Azure = true
	opts.BaseURL = s.URL
	opts.Model = "my-deployment"
	e := mustNew(t, opts)
	got, err := e.EmbedDocuments(context.Background(), []string{"azure"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, []string{"azure"}, got, 32)
	want := "/openai/deployments/my-deployment/embeddings?api-version=" + DefaultAzureAPIVersion
	if s.paths[0] != want {
		t.Errorf("path %q, want %q", s.paths[0], want)
	}
}

func TestNew(t *testing.T) {
	t.Setenv(EnvAPIKey, "sk-from-env")
	t.Setenv(EnvBaseURL, "http://localhost:1/v1")
	e := mustNew(t, Options{})
	if e.Name() != "openai:text-embedding-3-small:1536" || e.Dims() != 1536 || e.apiKey != "sk-from-env" {
		t.Errorf("defaults: Name %q Dims %d", e.Name(), e.Dims())
	}
	if e.maxInputs != DefaultMaxBatchInputs || e.maxTokens != DefaultMaxBatchTokens || e.maxRetries != DefaultMaxRetries ||
		e.timeout != DefaultRequestTimeout || e.backBase != DefaultBackoffBase || e.backMax != DefaultBackoffMax {
		t.Errorf("defaults not applied: %+v", e)
	}
	if e := mustNew(t, Options{Model: "text-embedding-3-large"}); e.Dims() != 3072 {
		t.Errorf("3-large Dims %d", e.Dims())
	}
	if e := mustNew(t, Options{MaxRetries: -1, RequestTimeout: -1}); e.maxRetries != 0 || e.timeout != 0 {
		t.Errorf("disabling retries/timeout: %d %v", e.maxRetries, e.timeout)
	}
	for _, bad := range []Options{
		{Model: "nomic-embed-text"},
		{Dimensions: -1},
		{MaxBatchInputs: -1},
		{BackoffBase: -time.Second},
		{BaseURL: "localhost:8080/v1"},
		{BaseURL: "ftp://example.com/v1"},
		{BaseURL: "http://"},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
	if _, err := New(Options{Model: "x"}); !errors.Is(err, ErrUnknownDimensions) {
		t.Errorf("unknown model: %v", err)
	}
	t.Setenv(EnvBaseURL, "")
	if _, err := New(Options{Azure: true}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Azure without BaseURL: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := newAPIServer(t)
	s.reverse = true
	opts := s.options()
	opts.MaxBatchInputs = 4
	e := mustNew(t, opts)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			texts := make([]string, 10)
			for i := range texts {
				texts[i] = fmt.Sprintf("goroutine %d text %d", g, i)
			}
			got, err := e.EmbedDocuments(context.Background(), texts)
			if err != nil {
				t.Error(err)
				return
			}
			checkVectors(t, texts, got, 32)
		})
	}
	wg.Wait()
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{" 12 ", 12 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"Fri, 02 Jan 2026 03:04:15 GMT", 10 * time.Second, true},
		{"Friday, 02-Jan-26 03:04:15 GMT", 10 * time.Second, true}, // RFC 850
		{"Fri Jan  2 03:04:15 2026", 10 * time.Second, true},       // asctime
		{"Thu, 01 Jan 2026 00:00:00 GMT", 0, true},
		{"99999999999", maxRetryAfter, true},
		{strings.Repeat("9", 400), maxRetryAfter, true},
		{"1e3", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
		{"NaN", 0, false},
		{"1..2", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for in, want := range map[string]time.Duration{"250": 250 * time.Millisecond, "0.5": 500 * time.Microsecond} {
		if got, ok := parseRetryAfterMs(in); !ok || got != want {
			t.Errorf("parseRetryAfterMs(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "x", "-3", "Inf", "1e3", "1.2.3", "."} {
		if _, ok := parseRetryAfterMs(in); ok {
			t.Errorf("parseRetryAfterMs(%q) accepted", in)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "7", "1.5", "Fri, 02 Jan 2026 03:04:15 GMT", "1e400", "-1", "", "NaN", "Inf", ".", "9999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []func() (time.Duration, bool){
			func() (time.Duration, bool) { return parseRetryAfter(s, now) },
			func() (time.Duration, bool) { return parseRetryAfterMs(s) },
		} {
			d, ok := p()
			if d < 0 || d > maxRetryAfter || (!ok && d != 0) {
				t.Fatalf("%q: %v, %v", s, d, ok)
			}
		}
	})
}

// FuzzResponse feeds arbitrary bodies to the client as successful
// responses: it must return vectors of the right length or an error,
// never panic.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"index":0,"embedding":[0.5,0.25]},{"index":1,"embedding":[1,0]}]}`,
		`{"data":[{"index":1,"embedding":[0.5,0.25]},{"index":0,"embedding":[1,0]}]}`,
		`{"data":[{"index":0,"embedding":"AAAAPwAAgD4="},{"index":1,"embedding":"AACAPwAAAAA="}]}`,
		`{"data":[{"index":0,"embedding":"AAAAPw"}]}`,
		`{"data":null}`, `{}`, `[]`, `null`, ``, `{"data":[{"index":99999999999999999999}]}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	srv := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body string, b64 bool) {
		srv.body.Store(&body)
		e, err := New(Options{BaseURL: srv.URL, Model: "m", Dimensions: 2, Base64: b64, MaxRetries: -1, HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.EmbedDocuments(context.Background(), []string{"a", "b"})
		if err != nil {
			return
		}
		for _, v := range got {
			if len(v) != 2 {
				t.Fatalf("vector of %d components accepted", len(v))
			}
		}
	})
}

func TestNewWithoutKeyForOpenAI(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv("OPENAI_BASE_URL", "")
	if _, err := New(Options{}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("OpenAI without a key: err = %v, want ErrInvalidOptions", err)
	}
	// A local OpenAI-compatible server may need no key.
	if _, err := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "local", Dimensions: 4}); err != nil {
		t.Fatalf("local server without a key: %v", err)
	}
}
