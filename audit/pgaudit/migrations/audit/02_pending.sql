CREATE TABLE IF NOT EXISTS {pending} (
	id        TEXT PRIMARY KEY,
	at        TIMESTAMPTZ NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
);
