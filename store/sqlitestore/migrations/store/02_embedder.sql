-- v2: the embedder whose vectors the store holds (see checkEmbedder).
CREATE TABLE IF NOT EXISTS store_embedder (
		id INTEGER PRIMARY KEY CHECK (id = 0),
		name TEXT NOT NULL
	);
