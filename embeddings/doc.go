// Package embeddings turns text into vectors for semantic search.
//
// [Embedder] is the contract every model implements. The package provides
// two implementations and one decorator:
//
//   - [Hashing]: a deterministic, offline embedder based on feature hashing
//     of normalised word unigrams, word bigrams and character n-grams. It
//     needs no network and no model weights, produces bit-identical vectors
//     on every platform, and is the default for embedded use and for tests.
//     It captures lexical similarity (shared words, stems and spelling
//     variants), not meaning the way a neural model does.
//   - [Cached]: an LRU cache in front of any Embedder, keyed by the
//     embedder's Name and the SHA-256 of the text, that batches only the
//     misses.
//   - Package embeddings/openai: any OpenAI-compatible embeddings endpoint
//     (OpenAI, Azure OpenAI, vLLM, Ollama, LocalAI).
//
// Vectors of an empty text may be all zeros (Hashing and the OpenAI
// embedder both return a zero vector for ""); callers computing cosine
// similarity must treat a zero norm as "no similarity" rather than divide by
// zero.
package embeddings
