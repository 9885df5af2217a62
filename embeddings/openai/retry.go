package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/memvault/memvault/embeddings"
)

// BatchError reports a batch of inputs that could not be embedded. Its
// message and its chain never contain the API key.
type BatchError struct {
	// Batch is the batch's position among the requests of one call,
	// from 0.
	Batch int
	// First and Last are the indices, in the texts passed to
	// EmbedDocuments, of the batch's first and last input; empty texts in
	// between are not part of the batch.
	First, Last int
	// Inputs is the number of texts in the batch.
	Inputs int
	// Attempts is the number of requests made for the batch.
	Attempts int
	// StatusCode is the HTTP status of the last response, or 0 if there
	// was none.
	StatusCode int
	// Err is the cause: a chain holding ErrStatus, ErrTransport,
	// ErrTimeout, ErrBadResponse, embeddings.ErrDimensionMismatch or the
	// context's error, and ErrRetriesExhausted when retries ran out.
	Err error
}

// Error describes the failed batch and its cause.
func (e *BatchError) Error() string {
	return fmt.Sprintf("openai: batch %d (inputs %d..%d, %d texts) failed after %d attempt(s): %v",
		e.Batch, e.First, e.Last, e.Inputs, e.Attempts, e.Err)
}

// Unwrap returns the cause.
func (e *BatchError) Unwrap() error { return e.Err }

// failure is the outcome of one failed attempt.
type failure struct {
	err       error
	status    int
	retryable bool
	wait      time.Duration // server-requested delay, if hasWait
	hasWait   bool
}

// embedBatch embeds texts[idx] as batch n, retrying as configured, and
// stores the vectors in out.
func (e *Embedder) embedBatch(ctx context.Context, n int, texts []string, idx []int, out [][]float32) error {
	inputs := make([]string, len(idx))
	for k, j := range idx {
		inputs[k] = texts[j]
	}
	fail := func(attempts, status int, err error) error {
		return &BatchError{Batch: n, First: idx[0], Last: idx[len(idx)-1], Inputs: len(idx),
			Attempts: attempts, StatusCode: status, Err: err}
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fail(attempt, 0, err)
		}
		resp, f := e.attempt(ctx, inputs)
		if f == nil {
			if err := e.place(resp, idx, out); err != nil {
				return fail(attempt+1, http.StatusOK, err)
			}
			return nil
		}
		if !f.retryable {
			return fail(attempt+1, f.status, f.err)
		}
		if attempt >= e.maxRetries {
			return fail(attempt+1, f.status, fmt.Errorf("%w: %w", ErrRetriesExhausted, f.err))
		}
		wait := e.backoff(attempt)
		if f.hasWait {
			wait = f.wait
		}
		if err := e.sleep(ctx, wait); err != nil {
			return fail(attempt+1, f.status, fmt.Errorf("%w while waiting to retry after: %w", err, f.err))
		}
	}
}

// attempt makes one request.
func (e *Embedder) attempt(ctx context.Context, inputs []string) (goopenai.EmbeddingResponse, *failure) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if e.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, e.timeout)
	}
	defer cancel()
	rec := new(record)
	req := goopenai.EmbeddingRequest{
		Input:          inputs,
		Model:          goopenai.EmbeddingModel(e.model),
		EncodingFormat: e.format,
	}
	if e.sendDims {
		req.Dimensions = e.dims
	}
	rec.limit = responseLimit(len(inputs), e.dims)
	resp, err := e.client.CreateEmbeddings(context.WithValue(actx, recordKey{}, rec), req)
	if err == nil {
		return resp, nil
	}
	timedOut := actx.Err() != nil
	return resp, e.classify(ctx, timedOut, rec, err)
}

// classify turns a failed attempt into a failure whose error holds no
// secret.
func (e *Embedder) classify(ctx context.Context, timedOut bool, rec *record, err error) *failure {
	if cerr := ctx.Err(); cerr != nil {
		return &failure{err: cerr, status: rec.status}
	}
	if timedOut {
		return &failure{err: fmt.Errorf("%w after %v", ErrTimeout, e.timeout), status: rec.status, retryable: true}
	}
	status, detail := rec.status, ""
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		if status == 0 {
			status = apiErr.HTTPStatusCode
		}
		detail = apiErr.Message
		if apiErr.Type != "" {
			detail = apiErr.Type + ": " + detail
		}
	case errors.As(err, &reqErr):
		if status == 0 {
			status = reqErr.HTTPStatusCode
		}
		detail = strings.TrimSpace(string(reqErr.Body))
		if detail == "" && reqErr.Err != nil {
			detail = reqErr.Err.Error()
		}
	default:
		detail = err.Error()
	}
	detail = e.redact(detail)
	switch {
	case status == 0:
		return &failure{err: fmt.Errorf("%w: %s", ErrTransport, detail), retryable: true}
	case status < 300:
		return &failure{err: fmt.Errorf("%w: %s", ErrBadResponse, detail), status: status}
	}
	f := &failure{
		err:       fmt.Errorf("%w: HTTP %d: %s", ErrStatus, status, detail),
		status:    status,
		retryable: retryableStatus(status),
	}
	now := time.Now()
	if d, ok := parseRetryAfterMs(rec.retryAfterMs); ok {
		f.wait, f.hasWait = d, true
	} else if d, ok := parseRetryAfter(rec.retryAfter, now); ok {
		f.wait, f.hasWait = d, true
	}
	return f
}

// retryableStatus reports the statuses worth another attempt: request
// timeout, conflict (lock contention), rate limiting and server errors.
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// maxDetail caps the server text quoted in errors.
const maxDetail = 300

// redact removes the API key from s and shortens it to maxDetail bytes.
func (e *Embedder) redact(s string) string {
	if e.apiKey != "" {
		s = strings.ReplaceAll(s, e.apiKey, "[REDACTED]")
	}
	if len(s) > maxDetail {
		s = strings.ToValidUTF8(s[:maxDetail], "") + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// place stores the vectors of resp in out by their index field.
func (e *Embedder) place(resp goopenai.EmbeddingResponse, idx []int, out [][]float32) error {
	if len(resp.Data) != len(idx) {
		return fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(resp.Data), len(idx))
	}
	seen := make([]bool, len(idx))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(idx) || seen[d.Index] {
			return fmt.Errorf("%w: index %d out of range or repeated", ErrBadResponse, d.Index)
		}
		seen[d.Index] = true
		if len(d.Embedding) != e.dims {
			return fmt.Errorf("%w: input %d: got %d components, want %d",
				embeddings.ErrDimensionMismatch, idx[d.Index], len(d.Embedding), e.dims)
		}
		out[idx[d.Index]] = d.Embedding
	}
	return nil
}

// backoff returns the delay before retry number attempt+1: BackoffBase
// doubled attempt times, capped at BackoffMax, minus a random jitter of up
// to half of it.
func (e *Embedder) backoff(attempt int) time.Duration {
	d := e.backMax
	if attempt < 32 {
		if b := e.backBase << attempt; b > 0 && b < d {
			d = b
		}
	}
	if half := d / 2; half > 0 {
		d -= rand.N(half + 1)
	}
	return d
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// maxRetryAfter caps a server-requested delay, guarding against absurd
// values when the caller's context has no deadline.
const maxRetryAfter = time.Hour

// parseRetryAfter parses a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110, section 10.2.3), relative to now. A date in the past
// means no delay. Fractional seconds are accepted.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if c := v[0]; '0' <= c && c <= '9' || c == '.' {
		secs, ok := parseDecimal(v)
		if !ok {
			return 0, false
		}
		return clampDelay(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(0, min(t.Sub(now), maxRetryAfter)), true
}

// parseRetryAfterMs parses OpenAI's retry-after-ms header: a delay in
// milliseconds, possibly fractional.
func parseRetryAfterMs(v string) (time.Duration, bool) {
	ms, ok := parseDecimal(strings.TrimSpace(v))
	if !ok {
		return 0, false
	}
	return clampDelay(ms * float64(time.Millisecond)), true
}

// parseDecimal parses a non-negative decimal number of digits with at most
// one '.', as the delay-seconds of RFC 9110 (which has no fraction) does,
// leniently.
func parseDecimal(v string) (float64, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(x, 0) {
		// Only absurdly long digit strings overflow.
		return math.Inf(1), err == nil || errors.Is(err, strconv.ErrRange)
	}
	return x, true
}

// clampDelay converts nanoseconds to a Duration within [0, maxRetryAfter].
func clampDelay(ns float64) time.Duration {
	if ns >= float64(maxRetryAfter) {
		return maxRetryAfter
	}
	return time.Duration(ns)
}

// recordKey is the context key of an attempt's *record.
type recordKey struct{}

// record keeps what go-openai's errors do not expose: the status and the
// Retry-After headers of the response. limit is the most bytes of a
// successful response body the attempt reads.
type record struct {
	status       int
	retryAfter   string
	retryAfterMs string
	limit        int64
}

// Bounds of a response body: go-openai reads a body whole (an error's with
// io.ReadAll, a success's with a JSON decoder that buffers the value), so a
// server that never ends its body would otherwise make the client buffer
// it until memory runs out.
const (
	// maxErrorBody caps an error response's body; errors quote at most
	// maxDetail bytes of it anyway.
	maxErrorBody = 1 << 20
	// bytesPerComponent bounds one vector component in JSON (a float32 in
	// exponent form with a separator, 16 bytes, and room for a
	// pretty-printing server's indentation).
	bytesPerComponent = 64
	// bytesPerVector bounds a data item's fields besides its vector.
	bytesPerVector = 1 << 10
)

// responseLimit is the most bytes a successful response to a batch of n
// inputs of dims components can need, with room for its other fields.
func responseLimit(n, dims int) int64 {
	return int64(n)*(int64(dims)*bytesPerComponent+bytesPerVector) + maxErrorBody
}

// errBodyTooLarge reports a response body longer than the attempt needs.
var errBodyTooLarge = errors.New("response body exceeds the size a batch needs")

// limitedBody reads at most n more bytes of a response body, then fails.
type limitedBody struct {
	io.ReadCloser
	n int64
}

// Read reads from the body until its limit, then returns errBodyTooLarge.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	k, err := b.ReadCloser.Read(p)
	b.n -= int64(k)
	return k, err
}

// errRedirectOut reports a redirect to another origin than the request's.
var errRedirectOut = errors.New("redirect to another origin refused (it would carry the API key there)")

// sameOrigin is the embedder's redirect policy: a redirect is followed
// only within the origin (scheme, host and port) of the first request.
// Go's client drops Authorization on a redirect to another host, but keeps
// it for another port or scheme of the same host and always keeps other
// headers, such as Azure's api-key. next, the caller's policy, if any,
// then decides; without one, Go's default (at most 10 redirects) applies.
func sameOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if o := via[0].URL; req.URL.Scheme != o.Scheme || req.URL.Host != o.Host {
			return errRedirectOut
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// recordingDoer is the HTTP client given to go-openai; it fills in the
// attempt's record.
type recordingDoer struct{ c *http.Client }

// Do sends req and records the response's status and retry headers.
func (d recordingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if resp == nil {
		return resp, err
	}
	limit := int64(maxErrorBody)
	if rec, ok := req.Context().Value(recordKey{}).(*record); ok {
		rec.status = resp.StatusCode
		rec.retryAfter = resp.Header.Get("Retry-After")
		rec.retryAfterMs = resp.Header.Get("Retry-After-Ms")
		if resp.StatusCode < 300 && rec.limit > 0 {
			limit = rec.limit
		}
	}
	resp.Body = &limitedBody{resp.Body, limit}
	return resp, err
}
