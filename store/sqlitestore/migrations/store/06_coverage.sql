-- v6: the coverage of the items with code rows (their count and a checksum
-- of their keys, see vecindex.Coverage), which an index must match to be
-- used: NULL until the next Open counts it. The snapshot format changes
-- (its parts name their generation): the old one goes.
ALTER TABLE store_vector_quant ADD COLUMN code_items INTEGER;
ALTER TABLE store_vector_quant ADD COLUMN code_sum INTEGER;
UPDATE store_vector_quant SET snapshot_gen = -1 WHERE id = 0;
DELETE FROM store_vector_snapshot;
