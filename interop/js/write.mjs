// write.mjs SCHEMA [THREAD_PREFIX]
//
// Sets up JS LangGraph's PostgresSaver in SCHEMA (creating its tables:
// migrations 0..4) and writes two threads the way a JS graph does, then
// prints, as one JSON line, the ids it wrote and JS's own reading of both
// threads (PostgresSaver.list, all namespaces, newest first):
//
//	{"threads": {"<prefix>graph": {...ids}, "<prefix>sends": {...ids}},
//	 "tuples":  {"<prefix>graph": [tuple views], "<prefix>sends": [...]}}
//
// <prefix>graph: an input checkpoint made from emptyCheckpoint(), two loop
// steps, a subgraph namespace; channel values with LangChain messages,
// nested objects, arrays, unicode, numbers, Set, Map, Uint8Array, undefined;
// a consumed channel ("empty" blob); pending writes including null values
// and the special channels __interrupt__ and __error__; integer versions.
//
// <prefix>sends: two v1 checkpoints whose pending sends are __pregel_tasks
// writes on the parent, as LangGraph wrote them before checkpoint format 4.

import { copyCheckpoint, emptyCheckpoint, uuid6, TASKS, INTERRUPT, ERROR } from "@langchain/langgraph-checkpoint";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { openSaver, listThread, main } from "./lib.mjs";

const [schema, prefix = "js-"] = process.argv.slice(2);

// CONSUMED marks a channel whose value a step consumed: its version moves on
// and the value is gone, so PostgresSaver writes an "empty" blob row.
const CONSUMED = Symbol("consumed");

// advance makes the checkpoint after prev the way Pregel does: a fresh
// uuid6 for the step, the versions of the updated channels bumped with the
// saver's getNextVersion (integers in JS), versions_seen updated, and puts
// it with exactly the updated channels as new versions.
async function advance(saver, cfg, prev, { step, source, updates, seen = {}, parents = {}, extra = {} }) {
  const cp = copyCheckpoint(prev);
  cp.id = uuid6(step);
  cp.ts = new Date().toISOString();
  const newVersions = {};
  for (const [ch, v] of Object.entries(updates)) {
    const next = saver.getNextVersion(cp.channel_versions[ch]);
    cp.channel_versions[ch] = next;
    newVersions[ch] = next;
    if (v === CONSUMED) delete cp.channel_values[ch];
    else cp.channel_values[ch] = v;
  }
  for (const [node, chans] of Object.entries(seen)) {
    cp.versions_seen[node] ??= {};
    for (const ch of chans) cp.versions_seen[node][ch] = prev.channel_versions[ch] ?? cp.channel_versions[ch];
  }
  const next = await saver.put(cfg, cp, { source, step, parents, ...extra }, newVersions);
  return [next, cp];
}

const human = new HumanMessage({ id: "msg-1", content: "Bonjour ! J'ai été débité deux fois 🙁 — commande n°42 (注文)" });
const ai = new AIMessage({
  id: "msg-2",
  content: "",
  tool_calls: [{ id: "call_1", name: "lookup_order", args: { order_id: 42, fields: ["amount", "status"] } }],
});
const tool = new ToolMessage({ id: "msg-3", tool_call_id: "call_1", content: '{"amount": 42.5, "status": "charged_twice"}' });
const answer = new AIMessage({ id: "msg-4", content: "Je vous rembourse 42,50 € — merci de votre patience." });

await main(async (register) => {
  const saver = register(openSaver(schema));
  await saver.setup();

  // Thread 1: a support conversation.
  const thread = `${prefix}graph`;
  const root = { configurable: { thread_id: thread, checkpoint_ns: "" } };
  const user = { id: "u-1", name: "Zoë Ångström", prefs: { lang: "fr", tz: "Europe/Paris", vip: true } };

  const empty = emptyCheckpoint();
  const [c0, cp0] = await advance(saver, root, empty, {
    step: -1,
    source: "input",
    updates: { __start__: { messages: [human], user } },
    extra: { user_id: "u-1", run_id: "run-1", tags: ["support", "fr"] },
  });
  await saver.putWrites(c0, [["messages", [human]], ["user", user], ["branch:to:agent", null]], "task-start");

  const [c1, cp1] = await advance(saver, c0, cp0, {
    step: 0,
    source: "loop",
    updates: { __start__: CONSUMED, messages: [human], user, "branch:to:agent": null },
    seen: { __start__: ["__start__"] },
    extra: { user_id: "u-1", run_id: "run-1" },
  });
  await saver.putWrites(c1, [["messages", [ai]], ["branch:to:tools", null]], "task-agent");
  await saver.putWrites(c1, [[INTERRUPT, [{ id: "intr-1", value: { question: "Rembourser 42,50 € ?", amount: 42.5 } }]]], "task-tools");
  await saver.putWrites(c1, [[ERROR, new Error("lookup_order: timeout after 30s")]], "task-flaky");

  const scratch = {
    ints: [0, -1, 7, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER],
    floats: [0.1, -2.5e-8, Math.PI, 1e21, 6.02214076e23],
    text: "日本語 — עברית — emoji 👩‍👩‍👧 é\t\n\"quoted\" \\ back\u0001slash",
    nested: { a: { b: { c: [1, [2, [3, { d: null, e: "" }]]] } } },
    empty_object: {},
    empty_array: [],
    flags: [true, false, null],
    tags: new Set(["refund", "vip"]),
    lookup: new Map([["amount", 42.5], [2, "two"]]),
    raw: new Uint8Array([0, 1, 127, 128, 254, 255]),
    missing: undefined,
  };
  const [c2, cp2] = await advance(saver, c1, cp1, {
    step: 1,
    source: "loop",
    updates: {
      messages: [human, ai, tool],
      "branch:to:agent": CONSUMED,
      scratch,
      attachment: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]),
    },
    seen: { agent: ["branch:to:agent", "messages", "user"] },
    extra: { user_id: "u-1", run_id: "run-1" },
  });
  await saver.putWrites(c2, [["messages", [answer]], ["scratch", { done: true }]], "task-answer");

  // A subgraph run under the tools node: its own namespace.
  const ns = "tools:5d4b7e52-1b1c-4c9a-9d7e-2f0a3c1e8b61";
  const sub = { configurable: { thread_id: thread, checkpoint_ns: ns } };
  const [s0] = await advance(saver, sub, emptyCheckpoint(), {
    step: 0,
    source: "loop",
    updates: { query: { order_id: 42 }, status: "looking up" },
    parents: { "": c1.configurable.checkpoint_id },
  });
  await saver.putWrites(s0, [["status", "found"], ["result", { amount: 42.5, currency: "EUR" }]], "task-sub");

  // Thread 2: v1 checkpoints with pending sends on the parent.
  const sends = `${prefix}sends`;
  const sroot = { configurable: { thread_id: sends, checkpoint_ns: "" } };
  const p = { v: 1, id: uuid6(0), ts: new Date().toISOString(), channel_values: { topic: "colours" }, channel_versions: { topic: 2, results: 1 }, versions_seen: {}, pending_sends: [] };
  const pc = await saver.put(sroot, p, { source: "loop", step: 0, parents: {} }, { topic: 2, results: 1 });
  // Send packets as JS serializes them ({node, args}).
  const send = (node, args) => ({ lg_name: "Send", node, args });
  await saver.putWrites(pc, [[TASKS, send("paint", { colour: "rouge" })], [TASKS, send("paint", { colour: "vert" })]], "task-fanout-1");
  await saver.putWrites(pc, [[TASKS, send("paint", { colour: "bleu" })]], "task-fanout-2");
  const c = { ...copyCheckpoint(p), v: 1, id: uuid6(1), ts: new Date().toISOString(), pending_sends: [] };
  const cc = await saver.put(pc, c, { source: "loop", step: 1, parents: {} }, {});

  const id = (cfg) => cfg.configurable.checkpoint_id;
  return {
    threads: {
      [thread]: { input: id(c0), step0: id(c1), step1: id(c2), child_ns: ns, child: id(s0) },
      [sends]: { parent: id(pc), child: id(cc) },
    },
    tuples: {
      [thread]: await listThread(saver, thread),
      [sends]: await listThread(saver, sends),
    },
  };
});
