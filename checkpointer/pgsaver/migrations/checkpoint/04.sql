ALTER TABLE {checkpoint_blobs} ALTER COLUMN blob DROP not null;
