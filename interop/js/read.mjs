// read.mjs SCHEMA THREAD [--setup] [--continue]
//
// With --setup it first runs PostgresSaver.setup() (on tables memvault set
// up, that must find nothing to do). It then reads THREAD with JS LangGraph's PostgresSaver and prints one JSON line:
//
//	{"tuples": [tuple views, all namespaces, newest first (list)],
//	 "latest": tuple view of getTuple on the root namespace (or null),
//	 "continued": null | {"config": {...}, "tuple": tuple view}}
//
// With --continue it then carries the thread on as a JS graph step would:
// a checkpoint derived from the latest one (copyCheckpoint, a new uuid6,
// getNextVersion on the integer versions of the channels it updates:
// "messages" gets one more AIMessage, "counter" is incremented), whose
// parent is the latest checkpoint, followed by pending writes against it
// (a message and an __interrupt__). It prints the new checkpoint as JS
// reads it back.

import { copyCheckpoint, uuid6, INTERRUPT } from "@langchain/langgraph-checkpoint";
import { AIMessage } from "@langchain/core/messages";
import { openSaver, listThread, tupleView, main } from "./lib.mjs";

const args = process.argv.slice(2);
const cont = args.includes("--continue");
const setup = args.includes("--setup");
const [schema, thread] = args.filter((a) => !a.startsWith("--"));

await main(async (register) => {
  const saver = register(openSaver(schema));
  if (!thread) throw new Error("usage: node read.mjs SCHEMA THREAD [--setup] [--continue]");
  if (setup) await saver.setup();
  const root = { configurable: { thread_id: thread, checkpoint_ns: "" } };

  const tuples = await listThread(saver, thread);
  const latest = await saver.getTuple(root);
  const out = { tuples, latest: latest ? await tupleView(latest) : null, continued: null };
  if (!cont) return out;
  if (!latest) throw new Error(`thread ${thread} has no checkpoint to continue`);

  const prev = latest.checkpoint;
  const cp = copyCheckpoint(prev);
  const step = (latest.metadata?.step ?? -1) + 1;
  cp.id = uuid6(step);
  cp.ts = new Date().toISOString();
  const updates = {
    messages: [...(Array.isArray(prev.channel_values.messages) ? prev.channel_values.messages : []),
      new AIMessage({ id: "js-continued", content: "Suite écrite par JS ✅" })],
    counter: (typeof prev.channel_values.counter === "number" ? prev.channel_values.counter : 0) + 1,
  };
  const newVersions = {};
  for (const [ch, v] of Object.entries(updates)) {
    // Throws "Please override this method to use string versions." when
    // the stored version is not an integer.
    const next = saver.getNextVersion(prev.channel_versions[ch]);
    cp.channel_versions[ch] = next;
    newVersions[ch] = next;
    cp.channel_values[ch] = v;
  }
  if (prev.channel_versions.messages !== undefined) {
    cp.versions_seen.agent = { ...(cp.versions_seen.agent ?? {}), messages: prev.channel_versions.messages };
  }
  const cfg = await saver.put(latest.config, cp, { source: "loop", step, parents: {}, writer: "js" }, newVersions);
  await saver.putWrites(cfg, [
    ["messages", [new AIMessage({ id: "js-pending", content: "en attente" })]],
    [INTERRUPT, [{ id: "js-intr", value: { question: "Continuer ?" } }]],
  ], "task-js");
  out.continued = { config: cfg.configurable, tuple: await tupleView(await saver.getTuple(cfg)) };
  return out;
});
