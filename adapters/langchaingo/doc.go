// Package langchaingo makes memvault the persistence layer of LangChainGo
// (github.com/tmc/langchaingo): ChatMessageHistory is a
// schema.ChatMessageHistory kept in a memvault store, one item per
// conversation, and VectorStore is a vectorstores.VectorStore over the
// store's semantic search (pgvector on PostgreSQL, an exact scan on SQLite).
// Both run on any memvault store and are encrypted when the store is.
//
// Where LangChainGo's contract and memvault's differ, memvault's wins and
// says so: VectorStore embeds with the store's embedder (the store records
// which one made its vectors), so vectorstores.WithEmbedder is refused;
// filters are memvault's (JSON equality and $eq $ne $gt $gte $lt $lte on
// metadata keys); a document's metadata may not use the key "page_content",
// which holds its text.
//
// LangChainGo has no user id, so nothing here maps one to a data subject.
// To make a user's conversations and documents hers under per-subject
// keys, give them namespaces under her label (HistoryOptions.Namespace
// {"users", user, "chat"}, VectorOptions.Namespace {"users", user,
// "docs"}) with MEMVAULT_SUBJECT_NAMESPACE=users: forgetting the user then
// erases them.
package langchaingo
