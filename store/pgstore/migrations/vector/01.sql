CREATE TABLE IF NOT EXISTS {store_vectors} (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding {vector_type}({dims}),
    created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES {store} (prefix, key) ON DELETE CASCADE
)
