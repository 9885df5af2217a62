// The JS column of `memvault bench checkpointer --dsn mongodb://… --js DIR`
// (DIR: this directory, with its node_modules): JS LangGraph's own
// MongoDBSaver (@langchain/langgraph-checkpoint-mongodb) doing the bench's
// classic operations in the bench's database and collections, in the same
// alternating slices as memvault and the raw-driver baseline.
//
// Protocol (that of interop/js/bench.mjs): one JSON object per line on
// stdin, one reply per line on stdout.
//   {"cmd":"init","uri":…,"db":…,"max_conc":16,"fixture":{channel values}}
//     → {"ok":true,"version":"1.4.1"}  (seeds thread "read-langgraph-js": 100 checkpoints of 3 writes)
//   {"cmd":"run","op":"put"|"put_writes"|"get_tuple"|"get_tuple_by_id"|"list10","conc":N,"ms":M}
//     → {"lat_us":[…],"elapsed_us":…,"cpu_us":…}   (or {"error":"…"})

import readline from "node:readline";
import { readFileSync } from "node:fs";
import { MongoClient } from "mongodb";
import { MongoDBSaver } from "@langchain/langgraph-checkpoint-mongodb";
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
  const client = new MongoClient(msg.uri, { maxPoolSize: Math.max(msg.max_conc * 2, 8) });
  await client.connect();
  saver = new MongoDBSaver({ client, dbName: msg.db });
  // setup's index on the keys memvault's index already covers is refused
  // (another name); it reports, not throws, and memvault's serves its
  // queries.
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
  const pkg = new URL("./node_modules/@langchain/langgraph-checkpoint-mongodb/package.json", import.meta.url);
  return { ok: true, version: JSON.parse(readFileSync(pkg, "utf8")).version };
}

const ops = {
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
      reply = await init(msg);
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
