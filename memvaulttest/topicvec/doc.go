// Package topicvec makes synthetic embeddings that behave as text
// embeddings do rather than as uniform noise, for benchmarks and tests of
// vector search (store/sqlitestore's BenchmarkSearch1536 and dense-topic
// tests, `memvault bench store --topics`): each item is a shared direction
// (the common component every embedding model leaves in its outputs) plus
// one of a number of topic centroids plus gaussian noise, normalised, so
// that items of a topic have cosines near 0.8 and unrelated items near
// 0.4; a query is an item with noise added (a paraphrase of a stored
// memory). Everything is deterministic: item i and query j are the same
// vectors in every process.
package topicvec
