-- v6: facts about the key table itself; its id (keys.Identified) is made
-- once, by the first TableID call.
CREATE TABLE IF NOT EXISTS {meta} (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
