// Package mongovault wires the MongoDB backend into vault.Open: importing
// it (the memvault CLI does) registers the mongodb:// and mongodb+srv://
// schemes with vault.RegisterBackend, so that MEMVAULT_DSN (or the CLI's
// --dsn) set to a MongoDB URI opens the MongoDB checkpointer (package
// mongosaver) with the configured serializer — plaintext, envelope or
// LangGraph encryption, as with SQLite and PostgreSQL — retention and
// version style.
//
// The database is MEMVAULT_SCHEMA (Config.Schema) when set, else the
// URI's ("mongodb://host/mydb"), else "checkpointing_db", Python
// MongoDBSaver's default, so that Python agents share it as they are.
// Open creates the saver's indexes (so `memvault migrate` does); with
// Config.MustExist it first requires that the database holds a
// collection, so that a mistyped database name is reported instead of
// being read as empty.
//
// The store is package mongostore in the same database (Python
// MongoDBStore's persistent-store collection), with the configured
// serializer, semantic search and TTL; the URI parameter
// memvault_ttl_index=true (TTLIndexParam) also asks the server for a TTL
// index on expired items (mongostore.Options.TTLIndex).
//
// Per-subject keys (MEMVAULT_SUBJECT_*) work with their key table apart
// from MongoDB: MEMVAULT_KEY_DSN names a PostgreSQL database (schema
// MEMVAULT_KEY_TABLE, default memvault_keys) that every process reaches,
// or MEMVAULT_KEY_TABLE alone a SQLite file (processes of one host only);
// with neither vault.Open refuses (vault.ErrUnsupported). vault.Forget
// drains the writes of every process (thread leases, the store's writer
// lease) before it lists and deletes the subject's data. Its erasure lock
// (vault.ErasureLock) is a lease document in memvault_meta, judged by the
// server's clock and renewed while held: a killed Forget blocks the next
// one, and leaves its intent to Opens, until the lease expires
// (EraseLeaseParam, default DefaultEraseLease). memvault_meta is read from
// the primary whatever the URI's readPreference (the erasure guard's
// marks, the intents, the lease).
//
// The audit trail (MEMVAULT_AUDIT) lives in a SQLite file named by
// MEMVAULT_AUDIT_TABLE (required: processes of one host share it), bound
// to the MongoDB database by an id and a mark that the chain began, kept in
// its memvault_meta collection; once the mark is there, vault.Open refuses
// a configuration that does not record (vault.ErrAuditRequired). Records
// are not written in the operation's transaction (there is none across a
// SQLite file and MongoDB), as with a SQLite trail in a file of its own.
// The census and compaction are refused (vault.ErrUnsupported).
package mongovault
