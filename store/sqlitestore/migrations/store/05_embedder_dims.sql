-- v5: the size of the recorded embedder's vectors (NULL in a record made
-- before: checkEmbedder takes it from a stored vector).
ALTER TABLE store_embedder ADD COLUMN dims INTEGER;
