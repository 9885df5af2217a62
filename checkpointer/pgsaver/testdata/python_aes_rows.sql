-- Rows as Python LangGraph writes them with
-- EncryptedSerializer.from_pycryptodome_aes() (AES-EAX, LANGGRAPH_AES_KEY =
-- "0123456789abcdef0123456789abcdef"): the reference known-answer vector, whose
-- blob is nonce(16) || tag(16) || ciphertext of msgpack {"a": 1}. Inline
-- primitive values stay plaintext in the checkpoint document, as in Python.

INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('py-aes', '', 'secret', '00000000000000000000000000000001.0.5488135039273248', 'msgpack+aes', '\x000102030405060708090a0b0c0d0e0f8ee76d82f558339f0a1b2b3ee26b5ee1a5d8639e');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ('py-aes', '', '1ef4f797-9000-6000-8000-0123456789ab', NULL, '{"v": 4, "id": "1ef4f797-9000-6000-8000-0123456789ab", "ts": "2024-05-04T06:32:42.235444+00:00", "channel_values": {"plain": "inline text"}, "channel_versions": {"secret": "00000000000000000000000000000001.0.5488135039273248", "plain": "00000000000000000000000000000001.0.5488135039273248"}, "versions_seen": {}, "updated_channels": ["plain", "secret"]}', '{"source": "loop", "step": 0, "parents": {}}');
