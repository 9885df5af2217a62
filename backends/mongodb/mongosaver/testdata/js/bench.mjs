// The JS column of `memvault bench checkpointer --dsn mongodb://… --js DIR`
// (DIR: this directory, with its node_modules): JS LangGraph's own
// MongoDBSaver (@langchain/langgraph-checkpoint-mongodb) doing the bench's
// classic operations in the bench's database and collections, in the same
// alternating slices as memvault and the raw-driver baseline.
//
// Protocol (that of interop/js/bench.mjs): one JSON object per line on
// stdin, one reply per line on stdout.
//   {"cmd":"init","uri":…,"db":…,"max_conc":16,"fixture":{channel values}}
//     → {"ok":true,"version":"1.4.1"}  (with a fixture, seeds thread "read-langgraph-js": 100 checkpoints of 3 writes)
//   {"cmd":"init_messages","steps":200,"fixture":{"messages":[…],"context":…,"summary":…}}
//     → {"ok":true}  (seeds mget50-langgraph-js and mget200-langgraph-js for the
//                     growing-messages workload, one more message per step)
//   {"cmd":"run","op":"put"|"put_steady"|"put_writes"|"get_tuple"|"get_tuple_by_id"|"list10"
//          |"put_messages"|"get_messages_50"|"get_messages_200","conc":N,"ms":M}
//     → {"lat_us":[…],"elapsed_us":…,"cpu_us":…,"cmds":…}   (or {"error":"…"};
//       cmds: the commands the driver sent during the slice)

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

let cmds = 0; // commands the driver sent (commandStarted events)

async function init(msg) {
  const client = new MongoClient(msg.uri, { maxPoolSize: Math.max(msg.max_conc * 2, 8), monitorCommands: true });
  client.on("commandStarted", () => { cmds++; });
  await client.connect();
  saver = new MongoDBSaver({ client, dbName: msg.db });
  // setup's index on the keys memvault's index already covers is refused
  // (another name); it reports, not throws, and memvault's serves its
  // queries.
  await saver.setup();
  const pkg = new URL("./node_modules/@langchain/langgraph-checkpoint-mongodb/package.json", import.meta.url);
  const version = JSON.parse(readFileSync(pkg, "utf8")).version;
  values = msg.fixture;
  if (!values) return { ok: true, version };
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
  return { ok: true, version };
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
  return { ok: true };
}

async function getMessages(depth) {
  const t = await saver.getTuple({ configurable: { thread_id: `mget${depth}-${MODE}`, checkpoint_ns: "" } });
  const n = t?.checkpoint?.channel_values?.messages?.length;
  if (n !== depth) throw new Error(`latest of mget${depth} holds ${n} messages, want ${depth}`);
}

// put_steady's threads: one per operation in flight, each written step
// after step on the one before.
const steadyFree = [];
let steadyN = 0;

const ops = {
  async put(i) {
    const vers = versions(i);
    const cp = checkpoint(i, vers);
    await saver.put({ configurable: { thread_id: `put-${MODE}-${i % 64}`, checkpoint_ns: "" } }, cp,
      { source: "loop", step: i, run_id: "bench" }, { messages: vers.messages, scratch: vers.scratch });
  },
  async put_steady() {
    const t = steadyFree.pop() ?? { k: steadyN++, step: 0, last: undefined };
    try {
      const vers = versions(t.step);
      const cp = checkpoint(t.step, vers);
      const nv = t.step === 0 ? vers : { messages: vers.messages, scratch: vers.scratch };
      await saver.put({ configurable: { thread_id: `steady-${MODE}-${t.k}`, checkpoint_ns: "", checkpoint_id: t.last } }, cp,
        { source: "loop", step: t.step, run_id: "bench" }, nv);
      t.last = cp.id;
      t.step++;
    } finally {
      steadyFree.push(t);
    }
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
  cmds = 0;
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
  return { lat_us: lat, elapsed_us: elapsed, cpu_us: cpu.user + cpu.system, cmds };
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let reply;
  try {
    const msg = JSON.parse(line);
    if (msg.cmd === "init") {
      reply = await init(msg);
    } else if (msg.cmd === "init_messages") {
      reply = await initMessages(msg);
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
