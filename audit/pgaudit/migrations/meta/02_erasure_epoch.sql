INSERT INTO {meta} (name, value) VALUES ('erasure_epoch', '0') ON CONFLICT (name) DO NOTHING;
