// Generator of js_rows.sql: run with node against a PostgreSQL (npm install
// @langchain/langgraph-checkpoint-postgres@1.0.5 @langchain/langgraph-checkpoint@1.1.5
// @langchain/core pg), then pg_dump --data-only --column-inserts --schema=jsfix.

import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { uuid6, TASKS } from "@langchain/langgraph-checkpoint";

const saver = PostgresSaver.fromConnString("postgresql://postgres@127.0.0.1:54329/postgres", { schema: "jsfix" });
await saver.setup();

// Thread js-1: two v4 checkpoints, integer versions, json blobs, an empty
// placeholder, pending writes (normal and special).
const id1 = uuid6(-1);
const cp1 = {
  v: 4, id: id1, ts: "2024-05-04T06:32:42.235Z",
  channel_values: { messages: [{ role: "user", content: "hi" }], count: 1 },
  channel_versions: { messages: 1, count: 1, empty_ch: 1 },
  versions_seen: { __input__: {} },
};
const cfg1 = await saver.put({ configurable: { thread_id: "js-1", checkpoint_ns: "" } }, cp1,
  { source: "input", step: -1, parents: {}, user_id: "u1" }, { messages: 1, count: 1, empty_ch: 1 });
await saver.putWrites(cfg1, [["messages", { role: "ai", content: "yo" }], ["count", 2]], "task-a");
await saver.putWrites(cfg1, [["__interrupt__", { value: "stop?" }]], "task-b");

const id2 = uuid6(0);
const cp2 = {
  v: 4, id: id2, ts: "2024-05-04T06:32:43.000Z",
  channel_values: { messages: [{ role: "user", content: "hi" }, { role: "ai", content: "yo" }], count: 1 },
  channel_versions: { messages: 2, count: 1, empty_ch: 1 },
  versions_seen: { __input__: {}, agent: { messages: 1, count: 1 } },
};
const cfg2 = await saver.put(cfg1, cp2, { source: "loop", step: 0, parents: {}, user_id: "u1" }, { messages: 2 });

// Subgraph namespace.
const id3 = uuid6(1);
await saver.put({ configurable: { thread_id: "js-1", checkpoint_ns: "child:1" } },
  { v: 4, id: id3, ts: "2024-05-04T06:32:44.000Z", channel_values: { x: "sub" }, channel_versions: { x: 1 }, versions_seen: {} },
  { source: "loop", step: 1, parents: { "": id2 } }, { x: 1 });

// Thread js-sends: v1 checkpoints with pending sends stored as parent's TASKS writes.
const p = uuid6(-1);
const pcfg = await saver.put({ configurable: { thread_id: "js-sends", checkpoint_ns: "" } },
  { v: 1, id: p, ts: "2024-05-04T06:40:00.000Z", channel_values: { a: "x" }, channel_versions: { a: 2, b: 1 }, versions_seen: {} },
  { source: "loop", step: 0, parents: {} }, { a: 2, b: 1 });
await saver.putWrites(pcfg, [[TASKS, "send-1"], [TASKS, "send-2"]], "task-1");
await saver.putWrites(pcfg, [[TASKS, "send-3"]], "task-2");
const c = uuid6(1);
await saver.put(pcfg,
  { v: 1, id: c, ts: "2024-05-04T06:40:01.000Z", channel_values: {}, channel_versions: { a: 2, b: 1 }, versions_seen: {} },
  { source: "loop", step: 1, parents: {} }, {});

console.log(JSON.stringify({ id1, id2, id3, p, c }));
await saver.end();
