// Package config turns the environment (or flags) into the configuration
// of a memvault — which package vault.Open wires into a saver and a store:
// the value serializer (plain JsonPlus, memvault's envelope encryption, or
// LangGraph's "aes" format), the embedder (offline hashing, or any
// OpenAI-compatible endpoint) behind an LRU, and a checkpointer and store on
// the embedded SQLite file or on PostgreSQL, with their tables set up.
//
// FromEnv reads MEMVAULT_DSN / DATABASE_URL, MEMVAULT_DB, MEMVAULT_SCHEMA,
// LANGGRAPH_AES_KEY, LANGGRAPH_AES_KEY_PREVIOUS, MEMVAULT_ENCRYPTION,
// MEMVAULT_ALLOW_PLAINTEXT, MEMVAULT_EMBEDDINGS, OPENAI_API_KEY,
// OPENAI_BASE_URL, MEMVAULT_INDEX_FIELDS, MEMVAULT_DISTANCE,
// MEMVAULT_CACHE_SIZE, MEMVAULT_EMBEDDING_CACHE_SIZE and MEMVAULT_VERSIONS
// (the README has the table); an invalid value is an error naming the
// variable and what it accepts. vault.Open then returns a Handle holding
// the saver, the store and what they were built from.
//
// Keys are kept as strings in Config (Keys prints as "Keys{primary: set,
// previous: 1}", never the keys) and parsed by vault.Open exactly as LangGraph
// parses LANGGRAPH_AES_KEY, with LangGraph's error texts.
package config
