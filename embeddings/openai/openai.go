package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/memvault/memvault/embeddings"
)

// Defaults of Options.
const (
	// DefaultModel is the model used when Options.Model is empty.
	DefaultModel = "text-embedding-3-small"
	// DefaultBaseURL is OpenAI's endpoint, used when neither
	// Options.BaseURL nor $OPENAI_BASE_URL is set.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultAzureAPIVersion is the Azure OpenAI API version used when
	// Options.AzureAPIVersion is empty.
	DefaultAzureAPIVersion = "2024-02-01"
	// DefaultMaxBatchInputs is OpenAI's limit on inputs per request.
	DefaultMaxBatchInputs = 2048
	// DefaultMaxBatchTokens is OpenAI's limit on tokens per request.
	DefaultMaxBatchTokens = 300_000
	// DefaultMaxRetries is the number of retries after a failed attempt.
	DefaultMaxRetries = 5
	// DefaultRequestTimeout bounds each HTTP request; every retry gets
	// the full timeout again.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultBackoffBase is the delay before the first retry.
	DefaultBackoffBase = 500 * time.Millisecond
	// DefaultBackoffMax caps the computed backoff delay.
	DefaultBackoffMax = 20 * time.Second
)

// Environment variables read by New.
const (
	// EnvAPIKey holds the default Options.APIKey.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvBaseURL holds the default Options.BaseURL.
	EnvBaseURL = "OPENAI_BASE_URL"
)

// knownDims are the native dimensions of OpenAI's embedding models.
var knownDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// Options configures an Embedder. The zero value embeds with
// text-embedding-3-small at 1536 dimensions against OpenAI, with the key
// from $OPENAI_API_KEY.
type Options struct {
	// Model is the embedding model (for Azure, the deployment name).
	// Default DefaultModel.
	Model string
	// Dimensions is the length of the vectors. Zero selects the model's
	// native size for OpenAI's models (1536 for text-embedding-3-small
	// and text-embedding-ada-002, 3072 for text-embedding-3-large) and is
	// an error for other models, whose size New cannot know. For
	// text-embedding-3-* models it is sent as the request's "dimensions"
	// field, so a smaller value shortens the vectors server-side; for
	// other models it is only checked against the response.
	Dimensions int
	// BaseURL is the API root, for example "http://localhost:11434/v1"
	// for Ollama or "http://localhost:8000/v1" for vLLM; requests go to
	// BaseURL + "/embeddings". Default $OPENAI_BASE_URL, then
	// DefaultBaseURL. For Azure it is the resource endpoint
	// ("https://NAME.openai.azure.com") and is required.
	BaseURL string
	// APIKey authenticates requests. Default $OPENAI_API_KEY. It may stay
	// empty for local servers that need none.
	APIKey string
	// Azure selects Azure OpenAI: the key is sent in the api-key header
	// and requests go to BaseURL/openai/deployments/Model/embeddings.
	Azure bool
	// AzureAPIVersion is the api-version query parameter for Azure.
	// Default DefaultAzureAPIVersion.
	AzureAPIVersion string
	// MaxBatchInputs caps the inputs per request. Default
	// DefaultMaxBatchInputs (OpenAI's limit); lower it for servers with
	// smaller limits.
	MaxBatchInputs int
	// MaxBatchTokens caps the estimated tokens per request. Tokens are
	// estimated without a tokenizer as ceil(bytes/4), which is close for
	// English text and overestimates most other text; an input whose
	// estimate alone exceeds the cap is sent in a request of its own.
	// Inputs are not truncated: an input over the model's own per-input
	// limit (8192 tokens for OpenAI's models) fails its batch. Default
	// DefaultMaxBatchTokens (OpenAI's limit).
	MaxBatchTokens int
	// MaxRetries is how many times a failed request is retried. Requests
	// are retried after HTTP 408, 409, 429 and 5xx responses, connection
	// errors and request timeouts. Zero selects DefaultMaxRetries; a
	// negative value disables retries.
	MaxRetries int
	// RequestTimeout bounds each HTTP request (each attempt separately).
	// Zero selects DefaultRequestTimeout; a negative value disables the
	// timeout, leaving only the caller's context.
	RequestTimeout time.Duration
	// BackoffBase is the delay before the first retry; each further retry
	// doubles it, up to BackoffMax, and a random jitter takes off up to
	// half of each delay. A Retry-After or retry-after-ms response header
	// replaces the computed delay, however long: the caller's context
	// bounds the total wait. Default DefaultBackoffBase.
	BackoffBase time.Duration
	// BackoffMax caps the computed backoff delay. Default
	// DefaultBackoffMax.
	BackoffMax time.Duration
	// Base64 asks the server for base64-encoded vectors, which makes
	// responses about four times smaller. OpenAI and vLLM support it; some
	// other servers do not.
	Base64 bool
	// HTTPClient sends the requests. Default a new http.Client without a
	// timeout of its own (RequestTimeout applies). Whatever its policy, a
	// redirect out of BaseURL's origin (scheme, host and port) is refused,
	// since it would carry the API key elsewhere (Go keeps the api-key
	// header, and Authorization within a host); the client itself is not
	// changed.
	HTTPClient *http.Client
}

// Embedder embeds texts with an OpenAI-compatible embeddings endpoint. It
// implements embeddings.Embedder and is safe for concurrent use.
//
// Inputs are sent in consecutive requests, one batch at a time. An empty
// string is not sent (OpenAI rejects empty inputs): its vector is the zero
// vector of Dims components, like embeddings.Hashing's. Documents and
// queries are embedded identically. A response body longer than its
// batch can need (its vectors as JSON, with room to spare; 1 MiB for an
// error) is not read on: the batch fails.
type Embedder struct {
	client     *goopenai.Client
	model      string
	dims       int
	sendDims   bool
	format     goopenai.EmbeddingEncodingFormat
	name       string
	apiKey     string
	maxInputs  int
	maxTokens  int
	maxRetries int
	timeout    time.Duration
	backBase   time.Duration
	backMax    time.Duration

	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ embeddings.Embedder = (*Embedder)(nil)

// Errors of New and of embedding. Embedding errors are returned as a
// *BatchError whose chain contains one of these, or the context's error.
var (
	// ErrUnknownDimensions reports a model whose vector size New does not
	// know; set Options.Dimensions.
	ErrUnknownDimensions = errors.New("openai: unknown dimensions for model; set Options.Dimensions")
	// ErrInvalidOptions reports options that cannot work.
	ErrInvalidOptions = errors.New("openai: invalid options")
	// ErrStatus reports an HTTP error response.
	ErrStatus = errors.New("openai: error response")
	// ErrTransport reports a request that got no HTTP response.
	ErrTransport = errors.New("openai: request failed")
	// ErrTimeout reports a request that exceeded Options.RequestTimeout.
	ErrTimeout = errors.New("openai: request timed out")
	// ErrBadResponse reports a successful response that does not hold one
	// vector per input.
	ErrBadResponse = errors.New("openai: malformed embeddings response")
	// ErrRetriesExhausted reports a batch that still failed after
	// Options.MaxRetries retries; the last failure is in the chain too.
	ErrRetriesExhausted = errors.New("openai: retries exhausted")
)

// New returns an Embedder configured by opts, with defaults from the
// environment (see Options). It makes no request.
func New(opts Options) (*Embedder, error) {
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(EnvAPIKey)
	}
	if opts.BaseURL == "" {
		opts.BaseURL = os.Getenv(EnvBaseURL)
	}
	if opts.Dimensions == 0 {
		d, ok := knownDims[opts.Model]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownDimensions, opts.Model)
		}
		opts.Dimensions = d
	}
	if opts.Dimensions < 0 {
		return nil, fmt.Errorf("%w: Dimensions %d", ErrInvalidOptions, opts.Dimensions)
	}
	if opts.MaxBatchInputs < 0 || opts.MaxBatchTokens < 0 || opts.BackoffBase < 0 || opts.BackoffMax < 0 {
		return nil, fmt.Errorf("%w: negative batch limit or backoff", ErrInvalidOptions)
	}
	if opts.MaxBatchInputs == 0 {
		opts.MaxBatchInputs = DefaultMaxBatchInputs
	}
	if opts.MaxBatchTokens == 0 {
		opts.MaxBatchTokens = DefaultMaxBatchTokens
	}
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	switch {
	case opts.RequestTimeout == 0:
		opts.RequestTimeout = DefaultRequestTimeout
	case opts.RequestTimeout < 0:
		opts.RequestTimeout = 0
	}
	if opts.BackoffBase == 0 {
		opts.BackoffBase = DefaultBackoffBase
	}
	if opts.BackoffMax == 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.BaseURL == "" && !opts.Azure {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.APIKey == "" && !opts.Azure && strings.TrimRight(opts.BaseURL, "/") == DefaultBaseURL {
		// OpenAI itself refuses keyless requests: fail now, not after the
		// retries. Local servers (another BaseURL) may need no key.
		return nil, fmt.Errorf("%w: no API key for %s (set %s)", ErrInvalidOptions, DefaultBaseURL, EnvAPIKey)
	}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: BaseURL must be an http or https URL", ErrInvalidOptions)
		}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	// A copy, so that the caller's client keeps its own redirect policy.
	hc := *opts.HTTPClient
	hc.CheckRedirect = sameOrigin(opts.HTTPClient.CheckRedirect)

	var cfg goopenai.ClientConfig
	if opts.Azure {
		if opts.BaseURL == "" {
			return nil, fmt.Errorf("%w: Azure needs BaseURL", ErrInvalidOptions)
		}
		cfg = goopenai.DefaultAzureConfig(opts.APIKey, opts.BaseURL)
		if opts.AzureAPIVersion == "" {
			opts.AzureAPIVersion = DefaultAzureAPIVersion
		}
		cfg.APIVersion = opts.AzureAPIVersion
		cfg.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		cfg = goopenai.DefaultConfig(opts.APIKey)
		cfg.BaseURL = opts.BaseURL
	}
	cfg.HTTPClient = recordingDoer{&hc}

	e := &Embedder{
		client:     goopenai.NewClientWithConfig(cfg),
		model:      opts.Model,
		dims:       opts.Dimensions,
		sendDims:   strings.HasPrefix(opts.Model, "text-embedding-3"),
		name:       "openai:" + opts.Model + ":" + strconv.Itoa(opts.Dimensions),
		apiKey:     opts.APIKey,
		maxInputs:  opts.MaxBatchInputs,
		maxTokens:  opts.MaxBatchTokens,
		maxRetries: opts.MaxRetries,
		timeout:    opts.RequestTimeout,
		backBase:   opts.BackoffBase,
		backMax:    opts.BackoffMax,
		sleep:      sleepCtx,
	}
	if opts.Base64 {
		e.format = goopenai.EmbeddingEncodingFormatBase64
	}
	return e, nil
}

// Dims returns the length of every vector e returns.
func (e *Embedder) Dims() int { return e.dims }

// Name returns "openai:<model>:<dims>".
func (e *Embedder) Name() string { return e.name }

// EmbedDocuments returns one vector per text, in input order. It fails
// with a *BatchError naming the first batch that failed; no partial result
// is returned.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int // indices of the non-empty texts
	for i, t := range texts {
		if t == "" {
			out[i] = make([]float32, e.dims)
			continue
		}
		idx = append(idx, i)
	}
	for n, b := range e.batches(texts, idx) {
		if err := e.embedBatch(ctx, n, texts, b, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EmbedQuery returns the vector of text, embedded as a document.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// estimateTokens approximates the token count of s as ceil(bytes/4), at
// least 1.
func estimateTokens(s string) int { return max(1, (len(s)+3)/4) }

// batches splits idx, the indices of the texts to send, into consecutive
// runs within the input and token limits.
func (e *Embedder) batches(texts []string, idx []int) [][]int {
	var out [][]int
	start, tokens := 0, 0
	for i, j := range idx {
		t := estimateTokens(texts[j])
		if i > start && (i-start == e.maxInputs || tokens+t > e.maxTokens) {
			out = append(out, idx[start:i])
			start, tokens = i, 0
		}
		tokens += t
	}
	if start < len(idx) {
		out = append(out, idx[start:])
	}
	return out
}
