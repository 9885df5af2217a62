CREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON {store} USING btree (prefix text_pattern_ops)
