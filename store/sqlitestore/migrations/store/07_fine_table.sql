-- v7: the fine parts of the codes (format 3, vecindex/fine.go) move out of
-- store_vector_codes into store_vector_fine, a table of its own keyed as
-- the code row: a code row of 1 536 dimensions with its fine part (1 750
-- bytes) overflowed SQLite's 4 KiB page, so that loading the codes read an
-- overflow page per vector and a search read one, by a system call of its
-- own, per candidate it bounded finely. The code row keeps the sign bits
-- as format 2 (206 bytes at 1 536 dimensions); the fine part (1 544 bytes)
-- lies in the leaf of a table with row ids, whose rows hold up to 4 061
-- bytes in the page. A search reads both in one query (tx.Codes) and hands
-- the index the format-3 blob (vecindex.JoinCode). A format-3 row of
-- n bytes has w = ceil((n - 22) / 72) words of sign bits
-- (vecindex.SplitCode): the code row is its first 14 + 8·w bytes, the
-- fine part the rest. The trigger deletes a code row's fine part with it,
-- whoever deletes it (a build before this one included).
CREATE TABLE IF NOT EXISTS store_vector_fine (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		field_name TEXT NOT NULL,
		fine BLOB NOT NULL,
		PRIMARY KEY (prefix, key, field_name)
	);
CREATE TRIGGER IF NOT EXISTS store_vector_fine_gone AFTER DELETE ON store_vector_codes BEGIN
		DELETE FROM store_vector_fine WHERE prefix = OLD.prefix AND key = OLD.key AND field_name = OLD.field_name;
	END;
INSERT OR REPLACE INTO store_vector_fine (prefix, key, field_name, fine)
    SELECT prefix, key, field_name, substr(code, 15 + 8 * ((length(code) - 22 + 71) / 72))
    FROM store_vector_codes WHERE substr(code, 1, 1) = X'03' AND length(code) > 30;
UPDATE store_vector_codes SET code = CAST(X'02' || substr(code, 2, 13 + 8 * ((length(code) - 22 + 71) / 72)) AS BLOB)
    WHERE substr(code, 1, 1) = X'03' AND length(code) > 30;
