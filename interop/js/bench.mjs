// The JS column of `memvault bench checkpointer --js DIR`: JS LangGraph's own
// PostgresSaver doing the bench's operations on the same cluster, the same
// tables and the same data, in the same alternating slices as memvault and
// the raw-pgx baseline.
//
// Protocol: one JSON object per line on stdin, one reply per line on stdout.
//   {"cmd":"init","dsn":…,"schema":…,"max_conc":16,"fixture":{channel values}}
//     → {"ok":true}      (seeds thread "read-langgraph-js": 100 checkpoints of 3 writes)
//   {"cmd":"init_messages","steps":200,"fixture":{"messages":[…],"context":…,"summary":…}}
//     → {"ok":true}      (seeds threads "mget50-langgraph-js" and "mget200-langgraph-js": the
//                         growing-messages workload, one more message per step)
//   {"cmd":"run","op":"put"|"put_writes"|"get_tuple"|"get_tuple_by_id"|"list10","conc":N,"ms":M}
//     → {"lat_us":[…],"elapsed_us":…,"cpu_us":…}   (or {"error":"…"})
//
// The JS column of `memvault bench store --js DIR`: JS LangGraph's
// PostgresStore in a schema of its own (its tables are not memvault's),
// holding the same items as the Go stores:
//   {"cmd":"init_store","dsn":…,"schema":…,"max_conc":16,"dims":D,"items":N,
//    "queries":[…],"put_texts":[…],"texts":[…],"vecs":[base64 float32 LE, …]}
//     → {"ok":true,"version":"1.0.5"}   (setup: tables and HNSW cosine index)
//   {"cmd":"store_seed","first":J,"texts":[…],"vecs":[…],"par":P}
//     → {"ok":true}      (items J.. as batch puts, P batches in parallel)
//   {"cmd":"run","op":"store_put"|"store_get"|"store_search_k10",…} as above

import readline from "node:readline";
import pg from "pg";
import { readFileSync } from "node:fs";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { uuid6 } from "@langchain/langgraph-checkpoint";

const MODE = "langgraph-js";
let saver;
let values;
let readIDs = [];
let seq = 0;

// versions of checkpoint i, as the Go bench writes them: "messages" and
// "scratch" change at every step, the other three keep the first version.
function versions(i) {
  const pad = (n, w) => String(n).padStart(w, "0");
  const next = `${pad(i + 1, 32)}.${pad(i, 16)}`;
  const first = `${pad(1, 32)}.${pad(0, 16)}`;
  return { messages: next, scratch: next, context: first, summary: first, step: first };
}

function checkpoint(i, vers) {
  return {
    v: 4, id: uuid6(i), ts: new Date().toISOString(),
    channel_values: values, channel_versions: vers,
    versions_seen: { agent: vers }, updated_channels: ["messages", "scratch"],
  };
}

async function init(msg) {
  const pool = new pg.Pool({ connectionString: msg.dsn, max: Math.max(msg.max_conc * 2, 8) });
  saver = new PostgresSaver(pool, undefined, { schema: msg.schema });
  await saver.setup();
  values = msg.fixture;
  const thread = `read-${MODE}`;
  let parent;
  for (let i = 0; i < 100; i++) {
    const vers = versions(i);
    const cp = checkpoint(i, vers);
    const nv = i === 0 ? vers : { messages: vers.messages, scratch: vers.scratch };
    const cfg = await saver.put({ configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: parent } }, cp, { source: "loop", step: i }, nv);
    await saver.putWrites(cfg, [["messages", "w1"], ["scratch", "w2"], ["summary", "w3"]], "task");
    parent = cp.id;
    readIDs.push(cp.id);
  }
}

// The growing-messages workload, as the Go bench writes it: at step s the
// messages channel holds s+1 messages and gets a new version; context and
// summary keep step 0's.
let msgFx;
let msgSteps = 200;
let msgSeq = 0;
const msgLast = new Map(); // thread → id of its last put, set before the put is awaited

function msgVersion(s) {
  return `${String(s + 1).padStart(32, "0")}.${"0".repeat(16)}`;
}

function putMsgStep(thread, parent, s) {
  const first = msgVersion(0);
  const vers = { messages: msgVersion(s), context: first, summary: first };
  const cp = {
    v: 4, id: uuid6(s), ts: new Date().toISOString(),
    channel_values: { messages: msgFx.messages.slice(0, s + 1), context: msgFx.context, summary: msgFx.summary },
    channel_versions: vers, versions_seen: { agent: vers }, updated_channels: ["messages"],
  };
  const nv = s === 0 ? vers : { messages: vers.messages };
  const done = saver.put({ configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: parent } }, cp, { source: "loop", step: s }, nv);
  return [cp.id, done];
}

async function initMessages(msg) {
  msgFx = msg.fixture;
  msgSteps = msg.steps;
  for (const depth of [50, msgSteps]) {
    let parent;
    for (let s = 0; s < depth; s++) {
      const [id, done] = putMsgStep(`mget${depth}-${MODE}`, parent, s);
      await done;
      parent = id;
    }
  }
}

async function getMessages(depth) {
  const t = await saver.getTuple({ configurable: { thread_id: `mget${depth}-${MODE}`, checkpoint_ns: "" } });
  const n = t?.checkpoint?.channel_values?.messages?.length;
  if (n !== depth) throw new Error(`latest of mget${depth} holds ${n} messages, want ${depth}`);
}

// The store workload. LangGraph's store embeds on put and search with the
// index's embed function; here that function looks up the vectors Go
// computed with memvault's offline hashing embedder for the same texts, so
// that both sides store and search the same vectors. What embedding costs
// is thus left out of this column (the Go side prints its own cost).
let store;
let storeW; // {items, queries, putTexts}
const storeVecs = new Map(); // query and put texts → vector, for the whole run
let seedVecs = new Map(); // the seeding chunk's texts → vector

function f32(b64) {
  const b = Buffer.from(b64, "base64");
  const v = new Array(b.length / 4);
  for (let i = 0; i < v.length; i++) v[i] = b.readFloatLE(4 * i);
  return v;
}

async function embed(texts) {
  return texts.map((t) => {
    const v = storeVecs.get(t) ?? seedVecs.get(t);
    if (!v) throw new Error(`no precomputed vector for ${JSON.stringify(t)}`);
    return v;
  });
}

async function initStore(msg) {
  store = new PostgresStore({
    connectionOptions: { connectionString: msg.dsn, max: Math.max(msg.max_conc * 2, 8) },
    schema: msg.schema,
    // The defaults otherwise: an HNSW index with cosine distance.
    index: { dims: msg.dims, embed, fields: ["text"] },
  });
  await store.setup();
  storeW = { items: msg.items, queries: msg.queries, putTexts: msg.put_texts };
  msg.texts.forEach((t, i) => storeVecs.set(t, f32(msg.vecs[i])));
  const pkg = new URL("./node_modules/@langchain/langgraph-checkpoint-postgres/package.json", import.meta.url);
  return { ok: true, version: JSON.parse(readFileSync(pkg, "utf8")).version };
}

// storeSeed puts one chunk of the seeded items, named as the Go bench names
// them, with the store's batch (one connection, one put after another), in
// par batches at once so that their commits overlap.
async function storeSeed(msg) {
  seedVecs = new Map(msg.texts.map((t, i) => [t, f32(msg.vecs[i])]));
  const puts = msg.texts.map((text, i) => {
    const j = msg.first + i;
    return { namespace: ["users", `u${j % 100}`, "memories"], key: `m${j}`, value: { text, n: j } };
  });
  const per = Math.ceil(puts.length / Math.max(1, msg.par));
  const batches = [];
  for (let i = 0; i < puts.length; i += per) batches.push(store.batch(puts.slice(i, i + per)));
  await Promise.all(batches);
  seedVecs = new Map();
}

const ops = {
  // store_put writes one of put_texts' items, as the Go bench's put does:
  // a new item with its embedding under users/bench/put.
  async store_put(i) {
    const k = i % storeW.putTexts.length;
    await store.put(["users", "bench", "put"], `k${k}`, { text: storeW.putTexts[k], i });
  },
  async store_get(i) {
    const j = i % storeW.items;
    const it = await store.get(["users", `u${j % 100}`, "memories"], `m${j}`);
    if (!it) throw new Error(`item m${j} missing`);
  },
  async store_search_k10(i) {
    const res = await store.search(["users"], { query: storeW.queries[i % storeW.queries.length], limit: 10 });
    const want = Math.min(10, storeW.items);
    if (res.length !== want) throw new Error(`search returned ${res.length} items, want ${want}`);
  },
  async put_messages() {
    const n = msgSeq++;
    const thread = `mput-${MODE}-${Math.floor(n / msgSteps)}`;
    const s = n % msgSteps;
    const [id, done] = putMsgStep(thread, s === 0 ? undefined : msgLast.get(thread), s);
    if (s === msgSteps - 1) msgLast.delete(thread); else msgLast.set(thread, id);
    await done;
  },
  async get_messages_50() {
    await getMessages(50);
  },
  async get_messages_200() {
    await getMessages(msgSteps);
  },
  async put(i) {
    const vers = versions(i);
    const cp = checkpoint(i, vers);
    await saver.put({ configurable: { thread_id: `put-${MODE}-${i % 64}`, checkpoint_ns: "" } }, cp,
      { source: "loop", step: i, run_id: "bench" }, { messages: vers.messages, scratch: vers.scratch });
  },
  async put_writes(i) {
    const cfg = { configurable: { thread_id: `w-${MODE}-${i % 64}`, checkpoint_ns: "", checkpoint_id: "1f0c0000-0000-6000-8000-000000000000" } };
    await saver.putWrites(cfg, [["messages", values.messages], ["scratch", values.scratch], ["summary", values.summary]], `task-${i}`);
  },
  async get_tuple() {
    const t = await saver.getTuple({ configurable: { thread_id: `read-${MODE}`, checkpoint_ns: "" } });
    if (!t) throw new Error("no tuple");
  },
  async get_tuple_by_id(i) {
    const id = readIDs[i % readIDs.length];
    const t = await saver.getTuple({ configurable: { thread_id: `read-${MODE}`, checkpoint_ns: "", checkpoint_id: id } });
    if (!t) throw new Error(`no tuple ${id}`);
  },
  async list10() {
    let n = 0;
    for await (const _ of saver.list({ configurable: { thread_id: `read-${MODE}` } }, { limit: 10 })) n++;
    if (n !== 10) throw new Error(`list returned ${n} tuples, want 10`);
  },
};

// run drives op with conc workers for ms milliseconds, as the Go side's
// measure does: each worker takes the next sequence number, times the call
// and stops at the deadline.
async function run(msg) {
  const fn = ops[msg.op];
  if (!fn) throw new Error(`unknown op ${msg.op}`);
  const lat = [];
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(msg.ms) * 1000000n;
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      const i = ++seq;
      const t0 = process.hrtime.bigint();
      await fn(i);
      lat.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  };
  await Promise.all(Array.from({ length: msg.conc }, worker));
  const elapsed = Number(process.hrtime.bigint() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { lat_us: lat, elapsed_us: elapsed, cpu_us: cpu.user + cpu.system };
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let reply;
  try {
    const msg = JSON.parse(line);
    if (msg.cmd === "init") {
      await init(msg);
      reply = { ok: true };
    } else if (msg.cmd === "init_messages") {
      await initMessages(msg);
      reply = { ok: true };
    } else if (msg.cmd === "init_store") {
      reply = await initStore(msg);
    } else if (msg.cmd === "store_seed") {
      await storeSeed(msg);
      reply = { ok: true };
    } else if (msg.cmd === "run") {
      reply = await run(msg);
    } else {
      reply = { error: `unknown cmd ${msg.cmd}` };
    }
  } catch (e) {
    reply = { error: String(e?.stack ?? e) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
process.exit(0);
