-- v3: the search index (package vecindex; codes.go and index.go).
-- store_vector_codes holds a sign code per vector, written in the vector's
-- transaction; store_vector_log the items each item-changing transaction
-- changed (prefix NULL: every code changed), so that another process
-- refreshes its index from the rows changed since its generation; and
-- store_vector_quant the centre codes are made with, the generation the
-- codes are complete for (a write by an older build, which writes no codes,
-- leaves it behind until the next Open recodes), the newest generation
-- trimmed from the log and the generation of the snapshot in
-- store_vector_snapshot (-1: none), the whole index serialized in parts so
-- that a process loads it with a few reads, then the log since. A database
-- with vectors already starts behind, so that Open codes them.
CREATE TABLE IF NOT EXISTS store_vector_codes (
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
    FROM store_generation WHERE id = 0;
