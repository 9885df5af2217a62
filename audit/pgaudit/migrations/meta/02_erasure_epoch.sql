INSERT INTO {meta} (name, value) SELECT 'erasure_epoch:' || b, '0' FROM generate_series(0, 63) AS b ON CONFLICT (name) DO NOTHING;
