-- Rows written by JS LangGraph: @langchain/langgraph-checkpoint-postgres 1.0.5 with
-- @langchain/langgraph-checkpoint 1.1.5 (PostgresSaver.setup(), put, putWrites),
-- produced by running that package against PostgreSQL 15 and dumped with pg_dump
-- (schema prefix removed so the statements resolve through search_path).
-- Migrations 0..4 only, as JS runs them; no task_path column.
CREATE TABLE checkpoint_blobs (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    channel text NOT NULL,
    version text NOT NULL,
    type text NOT NULL,
    blob bytea
);
CREATE TABLE checkpoint_migrations (
    v integer NOT NULL
);
CREATE TABLE checkpoint_writes (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id text NOT NULL,
    idx integer NOT NULL,
    channel text NOT NULL,
    type text,
    blob bytea NOT NULL
);
CREATE TABLE checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    parent_checkpoint_id text,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);
ALTER TABLE ONLY checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel, version);
ALTER TABLE ONLY checkpoint_migrations
    ADD CONSTRAINT checkpoint_migrations_pkey PRIMARY KEY (v);
ALTER TABLE ONLY checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);
ALTER TABLE ONLY checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id);
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-1', '', 'messages', '1', 'json', '\x5b7b22726f6c65223a2275736572222c22636f6e74656e74223a226869227d5d');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-1', '', 'count', '1', 'json', '\x31');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-1', '', 'empty_ch', '1', 'empty', NULL);
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-1', '', 'messages', '2', 'json', '\x5b7b22726f6c65223a2275736572222c22636f6e74656e74223a226869227d2c7b22726f6c65223a226169222c22636f6e74656e74223a22796f227d5d');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-1', 'child:1', 'x', '1', 'json', '\x2273756222');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-sends', '', 'a', '2', 'json', '\x227822');
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('js-sends', '', 'b', '1', 'empty', NULL);
INSERT INTO checkpoint_migrations (v) VALUES (0);
INSERT INTO checkpoint_migrations (v) VALUES (1);
INSERT INTO checkpoint_migrations (v) VALUES (2);
INSERT INTO checkpoint_migrations (v) VALUES (3);
INSERT INTO checkpoint_migrations (v) VALUES (4);
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-1', '', '1f1e606e-befa-6760-ffff-c817c2e36317', 'task-a', 0, 'messages', 'json', '\x7b22726f6c65223a226169222c22636f6e74656e74223a22796f227d');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-1', '', '1f1e606e-befa-6760-ffff-c817c2e36317', 'task-a', 1, 'count', 'json', '\x32');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-1', '', '1f1e606e-befa-6760-ffff-c817c2e36317', 'task-b', -3, '__interrupt__', 'json', '\x7b2276616c7565223a2273746f703f227d');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-sends', '', '1f1e606e-bf12-6e00-ffff-b913a8cbfb1f', 'task-1', 0, '__pregel_tasks', 'json', '\x2273656e642d3122');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-sends', '', '1f1e606e-bf12-6e00-ffff-b913a8cbfb1f', 'task-1', 1, '__pregel_tasks', 'json', '\x2273656e642d3222');
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) VALUES ('js-sends', '', '1f1e606e-bf12-6e00-ffff-b913a8cbfb1f', 'task-2', 0, '__pregel_tasks', 'json', '\x2273656e642d3322');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('js-1', '', '1f1e606e-befa-6760-ffff-c817c2e36317', NULL, NULL, '{"v": 4, "id": "1f1e606e-befa-6760-ffff-c817c2e36317", "ts": "2024-05-04T06:32:42.235Z", "versions_seen": {"__input__": {}}, "channel_versions": {"count": 1, "empty_ch": 1, "messages": 1}}', '{"step": -1, "source": "input", "parents": {}, "user_id": "u1"}');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('js-1', '', '1f1e606e-bf0d-6fe0-8000-f490090de42e', '1f1e606e-befa-6760-ffff-c817c2e36317', NULL, '{"v": 4, "id": "1f1e606e-bf0d-6fe0-8000-f490090de42e", "ts": "2024-05-04T06:32:43.000Z", "versions_seen": {"agent": {"count": 1, "messages": 1}, "__input__": {}}, "channel_versions": {"count": 1, "empty_ch": 1, "messages": 2}}', '{"step": 0, "source": "loop", "parents": {}, "user_id": "u1"}');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('js-1', 'child:1', '1f1e606e-bf10-66f0-8001-727797d9b829', NULL, NULL, '{"v": 4, "id": "1f1e606e-bf10-66f0-8001-727797d9b829", "ts": "2024-05-04T06:32:44.000Z", "versions_seen": {}, "channel_versions": {"x": 1}}', '{"step": 1, "source": "loop", "parents": {"": "1f1e606e-bf0d-6fe0-8000-f490090de42e"}}');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('js-sends', '', '1f1e606e-bf12-6e00-ffff-b913a8cbfb1f', NULL, NULL, '{"v": 1, "id": "1f1e606e-bf12-6e00-ffff-b913a8cbfb1f", "ts": "2024-05-04T06:40:00.000Z", "versions_seen": {}, "channel_versions": {"a": 2, "b": 1}}', '{"step": 0, "source": "loop", "parents": {}}');
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('js-sends', '', '1f1e606e-bf17-6c20-8001-dedf3b3f45d1', '1f1e606e-bf12-6e00-ffff-b913a8cbfb1f', NULL, '{"v": 1, "id": "1f1e606e-bf17-6c20-8001-dedf3b3f45d1", "ts": "2024-05-04T06:40:01.000Z", "versions_seen": {}, "channel_versions": {"a": 2, "b": 1}}', '{"step": 1, "source": "loop", "parents": {}}');
