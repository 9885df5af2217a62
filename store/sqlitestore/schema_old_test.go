package sqlitestore

// oldMigrations are the schema steps of the build before they became
// embedded .sql files (migrations/), copied verbatim from its schema.go:
// TestSchemaUpgrade builds databases with them at every version and checks
// that the new runner opens and migrates them, and that both make the same
// schema byte for byte. Never edit them.
var oldMigrations = []string{
	`CREATE TABLE IF NOT EXISTS store (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		expires_at INTEGER,
		ttl_minutes INTEGER,
		PRIMARY KEY (prefix, key)
	);
	CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL;
	CREATE TABLE IF NOT EXISTS store_vectors (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		field_name TEXT NOT NULL,
		embedding BLOB,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (prefix, key, field_name),
		FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE
	) WITHOUT ROWID`,
	// v1: the generation every item-changing transaction bumps; processes
	// keep their in-memory vector caches coherent by it.
	`CREATE TABLE IF NOT EXISTS store_generation (
		id INTEGER PRIMARY KEY CHECK (id = 0),
		gen INTEGER NOT NULL
	);
	INSERT OR IGNORE INTO store_generation (id, gen) VALUES (0, 0)`,
	// v2: the embedder whose vectors the store holds (see checkEmbedder).
	`CREATE TABLE IF NOT EXISTS store_embedder (
		id INTEGER PRIMARY KEY CHECK (id = 0),
		name TEXT NOT NULL
	)`,
	// v3: the search index (package vecindex; codes.go and index.go). store_vector_codes
	// holds a sign code per vector, written in the vector's transaction;
	// store_vector_log the items each item-changing transaction changed
	// (prefix NULL: every code changed), so that another process refreshes
	// its index from the rows changed since its generation; and
	// store_vector_quant the centre codes are made with, the generation the
	// codes are complete for (a write by an older build, which writes no
	// codes, leaves it behind until the next Open recodes), the newest
	// generation trimmed from the log and the generation of the snapshot in
	// store_vector_snapshot (-1: none), the whole index serialized in parts
	// so that a process loads it with a few reads, then the log since. A
	// database with vectors already starts behind, so that Open codes them.
	`CREATE TABLE IF NOT EXISTS store_vector_codes (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		field_name TEXT NOT NULL,
		updated_at INTEGER NOT NULL,
		code BLOB NOT NULL,
		PRIMARY KEY (prefix, key, field_name)
	) WITHOUT ROWID;
	CREATE TABLE IF NOT EXISTS store_vector_log (
		gen INTEGER NOT NULL,
		prefix TEXT,
		key TEXT
	);
	CREATE INDEX IF NOT EXISTS idx_store_vector_log_gen ON store_vector_log (gen);
	CREATE TABLE IF NOT EXISTS store_vector_quant (
		id INTEGER PRIMARY KEY CHECK (id = 0),
		codes_gen INTEGER NOT NULL,
		log_floor INTEGER NOT NULL,
		centre BLOB,
		snapshot_gen INTEGER NOT NULL DEFAULT -1
	);
	CREATE TABLE IF NOT EXISTS store_vector_snapshot (
		part INTEGER PRIMARY KEY,
		data BLOB NOT NULL
	);
	INSERT OR IGNORE INTO store_vector_quant (id, codes_gen, log_floor)
		SELECT 0, CASE WHEN EXISTS (SELECT 1 FROM store_vectors) THEN -1 ELSE gen END, gen
		FROM store_generation WHERE id = 0`,
	// v4: codes are taken after a rotation (codeFormat 2, see vecindex/codes.go):
	// v3's codes read as none, so the codes fall behind and the next Open
	// recodes every vector; their snapshot goes with them.
	`UPDATE store_vector_quant SET codes_gen = -1, snapshot_gen = -1
		WHERE id = 0 AND EXISTS (SELECT 1 FROM store_vectors);
	DELETE FROM store_vector_snapshot`,
	// v5: the size of the recorded embedder's vectors (NULL in a record
	// made before: checkEmbedder takes it from a stored vector).
	`ALTER TABLE store_embedder ADD COLUMN dims INTEGER`,
	// v6: the coverage of the items with code rows (their count and a
	// checksum of their keys, see vecindex.Coverage), which an index must match
	// to be used: NULL until the next Open counts it. The snapshot format
	// changes (its parts name their generation): the old one goes.
	`ALTER TABLE store_vector_quant ADD COLUMN code_items INTEGER;
	ALTER TABLE store_vector_quant ADD COLUMN code_sum INTEGER;
	UPDATE store_vector_quant SET snapshot_gen = -1 WHERE id = 0;
	DELETE FROM store_vector_snapshot`,
}
