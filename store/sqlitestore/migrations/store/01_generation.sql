-- v1: the generation every item-changing transaction bumps; processes
-- keep their in-memory vector caches coherent by it.
CREATE TABLE IF NOT EXISTS store_generation (
		id INTEGER PRIMARY KEY CHECK (id = 0),
		gen INTEGER NOT NULL
	);
INSERT OR IGNORE INTO store_generation (id, gen) VALUES (0, 0);
