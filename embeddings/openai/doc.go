// Package openai embeds texts with any OpenAI-compatible embeddings
// endpoint: OpenAI itself, Azure OpenAI, and servers that speak the same API
// such as vLLM, Ollama and LocalAI. It is built on
// github.com/sashabaranov/go-openai.
//
// [New] returns an [Embedder] that implements embeddings.Embedder. It splits
// its inputs into requests within the API's limits (by count and by an
// estimate of tokens), retries rate-limited and failed requests with
// exponential backoff and jitter while honouring Retry-After, bounds every
// request with a timeout, stops as soon as its context is done, places
// every vector by the response's index field, and checks each vector's
// length. Errors name the failed batch by input indices as a [*BatchError]
// and never contain the API key.
package openai
