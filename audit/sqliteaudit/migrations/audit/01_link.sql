-- v1: the hash chain (audit format 2); records of format 1 keep ''.
ALTER TABLE memvault_audit ADD COLUMN link TEXT NOT NULL DEFAULT '';
