-- The tables exactly as LangGraph's Python PostgresStore.setup() leaves them
-- (langgraph-checkpoint-postgres, MIGRATIONS 0..3 and VECTOR_MIGRATIONS 0..2
-- with dims=3, cosine, HNSW defaults), its migration rows, and rows written
-- by Python's put(): plain JSONB values, one vector per embedded field.
CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY);

CREATE TABLE IF NOT EXISTS store (
    -- 'prefix' represents the doc's 'namespace'
    prefix text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
);
CREATE INDEX IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops);
ALTER TABLE store
ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE,
ADD COLUMN IF NOT EXISTS ttl_minutes INT;
CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)
WHERE expires_at IS NOT NULL;
INSERT INTO store_migrations (v) VALUES (0), (1), (2), (3);

CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding vector(3),
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS store_vectors_embedding_idx ON store_vectors
    USING hnsw (embedding vector_cosine_ops);
INSERT INTO vector_migrations (v) VALUES (0), (1), (2);

-- store.put(("users", "alice"), "prefs", {"food": "pizza", "n": 9}, index=["food"])
INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) VALUES
    ('users.alice', 'prefs', '{"food": "pizza", "n": 9}', '2025-01-02 03:04:05.123456+00', '2025-01-02 03:04:05.123456+00', NULL, NULL),
    ('users.alice', 'pet', '{"kind": "cat", "name": "Tom", "n": 10}', '2025-01-02 03:05:00+00', '2025-01-03 00:00:00+00', NULL, NULL),
    ('users.bob', 'note', '{"text": "no vectors here", "n": 1.5, "nested": {"a": [1, "x", null]}}', '2025-01-01 00:00:00+00', '2025-01-01 00:00:00+00', '2099-01-01 00:00:00+00', 60);
INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES
    ('users.alice', 'prefs', 'food', '[1,0,0]'),
    ('users.alice', 'pet', 'kind', '[0,1,0]'),
    ('users.alice', 'pet', 'name', '[0.6,0.8,0]');
