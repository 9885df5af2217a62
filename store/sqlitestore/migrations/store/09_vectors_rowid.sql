-- v9: store_vectors becomes a table with row ids, keyed by the unique
-- index of its primary key, as store_vector_fine is (v7). A vector of
-- 1 536 dimensions is a 6 KiB row that overflows its page; in a WITHOUT
-- ROWID table the rows are the b-tree's keys, so every row a lookup
-- compared on its way down was read whole, overflow pages included: a
-- search that scored 22 items exactly read ~37 pages for each (issue 32,
-- the first search after open from a cold page cache). With row ids the
-- descent reads the index's small entries, then one leaf and the row's
-- own overflow pages. The rows are copied in key order, so that the
-- vectors of a prefix stay together in the file; the old table is
-- renamed first, so that the new one's CREATE statement is the v0 text
-- without WITHOUT ROWID. Migrate runs the step in one transaction: a
-- process killed during it leaves the file as it was (the write-ahead
-- log's uncommitted frames are ignored), and the next Open runs it again.
-- The old table, renamed, is dropped by Open after the step, in a
-- transaction of its own (sqlitestore.dropOldVectors says why).
ALTER TABLE store_vectors RENAME TO store_vectors_v8;
CREATE TABLE store_vectors (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		field_name TEXT NOT NULL,
		embedding BLOB,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (prefix, key, field_name),
		FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE
	);
INSERT INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at)
    SELECT prefix, key, field_name, embedding, created_at, updated_at FROM store_vectors_v8
    ORDER BY prefix, key, field_name;
