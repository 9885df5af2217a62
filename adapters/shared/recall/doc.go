// Package recall picks the default relevance threshold of the memory
// adapters (ADK, ADK v2, tRPC-Agent-Go) from the embedder of their store
// (store.EmbedderNamer). A framework's memory service must return nothing
// when nothing matches, and semantic search always ranks something first:
// the threshold is what says "nothing matches". What counts as close
// depends on the model, so one number cannot serve them all:
//
//   - memvault's offline hashing embedder ("hash:<dims>", keyed or not) is
//     lexical: a memory that shares one content word with a short question
//     scores 0.17–0.30 when it is a sentence ("I have lived in Lisbon since
//     2019…" for "where do I live": 0.174), down to 0.12 when it is 15–25
//     words long, while unrelated texts score around 0 with a spread that
//     shrinks with the dimensions (at 256, one unrelated pair in a hundred
//     reaches 0.21 under a random key). HashingMinScore keeps nearly every
//     one-word match (see its figures).
//   - a neural model served through an OpenAI-compatible API ("openai:…",
//     sealed or not — sealing keeps every cosine) scores by meaning, not
//     shared words: NeuralMinScore, the threshold the adapters always had.
//   - any other embedder is not known: the adapters then rank (return the
//     best results up to their limit, whatever their scores).
//
// It exists for memvault's adapters, and is exported only because each
// adapter is a module of its own; it is not meant for other callers.
package recall
