-- v1: DeleteForRuns finds checkpoints by metadata.run_id.
CREATE INDEX IF NOT EXISTS checkpoints_run_id_idx ON checkpoints (json_extract(metadata, '$.run_id'));
