-- v4: codes are taken after a rotation (codeFormat 2, see
-- vecindex/codes.go): v3's codes read as none, so the codes fall behind and
-- the next Open recodes every vector; their snapshot goes with them.
UPDATE store_vector_quant SET codes_gen = -1, snapshot_gen = -1
    WHERE id = 0 AND EXISTS (SELECT 1 FROM store_vectors);
DELETE FROM store_vector_snapshot;
