CREATE TABLE IF NOT EXISTS {audit} (
	seq       BIGINT PRIMARY KEY,
	at        TIMESTAMPTZ NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
);
