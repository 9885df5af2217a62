-- v8: code rows without a fine part (format 2, written by builds before the
-- fine parts, vecindex/fine.go) bound their items by sign bits alone, for
-- as long as the item is not rewritten: inside a dense topic a search then
-- reads the vectors of most of the topic, and the index holds no middle
-- part for them (issue 32). Putting the codes' generation behind makes the
-- next Open recode every vector (engine.SyncCodes, once, in one write
-- transaction: every code row gets its fine part, around a fresh centre;
-- the snapshot goes); a file whose code rows all have one is left as it is.
UPDATE store_vector_quant SET codes_gen = -1
    WHERE id = 0 AND EXISTS (SELECT 1 FROM store_vector_codes c WHERE NOT EXISTS (
        SELECT 1 FROM store_vector_fine f WHERE f.prefix = c.prefix AND f.key = c.key AND f.field_name = c.field_name));
