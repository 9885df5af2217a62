-- Rows as Python LangGraph writes them (langgraph-checkpoint-postgres 3.1.2,
-- langgraph-checkpoint 4.2.0, default JsonPlusSerializer), hand-built from the
-- reference spec (section 2.3): primitive channel values (str, int, float,
-- bool, None) stay inline in the checkpoint document; other values are
-- msgpack blob rows written only for channels in new_versions; versions are
-- "%032d.<random>" strings; ids are UUIDv6 with clock_seq = step (0x3fff for
-- the input step -1); pending writes carry task_path. Tables are created by
-- Python's migrations 0..9 (see setup_test.go), so this file holds rows only.
--
-- Blob payloads (msgpack):
--   __start__@1  {"question": "hi"}   81 a8 7175657374696f6e a2 6869
--   messages@2   ["hi", "there"]      92 a2 6869 a5 7468657265
--   write t1/0   ["ok"]               91 a2 6f6b
--   write t2/0   4                    04

INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('py-1', '', '__start__', '00000000000000000000000000000001.0.5488135039273248', 'msgpack', '\x81a87175657374696f6ea26869');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ('py-1', '', '1ef4f797-8335-6428-bfff-8a1503f9b875', NULL, '{"v": 4, "id": "1ef4f797-8335-6428-bfff-8a1503f9b875", "ts": "2024-05-04T06:32:42.235444+00:00", "channel_values": {}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.5488135039273248"}, "versions_seen": {"__input__": {}}, "updated_channels": ["__start__"]}', '{"source": "input", "step": -1, "parents": {}, "run_id": "run-1", "user_id": "u1"}');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('py-1', '', 'messages', '00000000000000000000000000000002.0.6027633760716439', 'msgpack', '\x92a26869a57468657265');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ('py-1', '', '1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3', '1ef4f797-8335-6428-bfff-8a1503f9b875', '{"v": 4, "id": "1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3", "ts": "2024-05-04T06:32:42.240012+00:00", "channel_values": {"question": "hi", "count": 3, "flag": true, "nothing": null, "ratio": 0.25}, "channel_versions": {"__start__": "00000000000000000000000000000001.0.5488135039273248", "question": "00000000000000000000000000000002.0.7151893663724195", "count": "00000000000000000000000000000002.0.7151893663724195", "flag": "00000000000000000000000000000002.0.7151893663724195", "nothing": "00000000000000000000000000000002.0.7151893663724195", "ratio": "00000000000000000000000000000002.0.7151893663724195", "messages": "00000000000000000000000000000002.0.6027633760716439"}, "versions_seen": {"__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.5488135039273248"}}, "updated_channels": ["count", "flag", "messages", "nothing", "question", "ratio"]}', '{"source": "loop", "step": 0, "parents": {}, "run_id": "run-1", "user_id": "u1"}');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) VALUES ('py-1', '', '1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3', 't1', '~__pregel_pull, agent', 0, 'messages', 'msgpack', '\x91a26f6b');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) VALUES ('py-1', '', '1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3', 't2', '~__pregel_pull, tools', 0, 'count', 'msgpack', '\x04');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) VALUES ('py-1', '', '1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3', 't2', '~__pregel_pull, tools', -1, '__error__', 'null', '');
