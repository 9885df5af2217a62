// write.mjs DATABASE THREAD
//
// JS LangGraph's MongoDBSaver sets up its indexes and writes THREAD as a
// JS graph that stops at an interrupt does: an input checkpoint, a loop
// step with LangChain messages, pending writes of a finished task and of
// the interrupted one (__interrupt__, idx -3), integer versions. Prints
// JS's own reading of the thread (list, newest first) as one JSON line.

import { copyCheckpoint, emptyCheckpoint, uuid6, INTERRUPT } from "@langchain/langgraph-checkpoint";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { listThread, main } from "./lib.mjs";

const thread = process.argv[3] ?? "js-thread";

async function advance(saver, cfg, prev, step, source, updates) {
  const cp = copyCheckpoint(prev);
  cp.id = uuid6(step);
  cp.ts = new Date().toISOString();
  const newVersions = {};
  for (const [ch, v] of Object.entries(updates)) {
    const next = saver.getNextVersion(cp.channel_versions[ch]);
    cp.channel_versions[ch] = next;
    newVersions[ch] = next;
    cp.channel_values[ch] = v;
    cp.versions_seen.agent ??= {};
    cp.versions_seen.agent[ch] = next;
  }
  const next = await saver.put(cfg, cp, { source, step, parents: {}, user_id: "u-1" }, newVersions);
  return [next, cp];
}

await main(async (saver) => {
  const errs = await saver.setup();
  if (errs.length > 0) throw new Error(`setup: ${errs.join("; ")}`);
  const root = { configurable: { thread_id: thread, checkpoint_ns: "" } };
  const human = new HumanMessage({ id: "m-1", content: "Refund order 42, please — déjà payé 🙁" });
  const [c0, cp0] = await advance(saver, root, emptyCheckpoint(), -1, "input", { __start__: { messages: [human] } });
  await saver.putWrites(c0, [["messages", [human]], ["branch:to:agent", null]], "task-start");
  const ai = new AIMessage({ id: "m-2", content: "Checking order 42." });
  const [c1] = await advance(saver, c0, cp0, 0, "loop", { messages: [human, ai], count: 1 });
  await saver.putWrites(c1, [["messages", [new AIMessage({ id: "m-3", content: "Found it." })]]], "task-agent");
  await saver.putWrites(c1, [[INTERRUPT, [{ value: { question: "approve refund of 42.50?" }, id: "int-1" }]]], "task-review");
  return await listThread(saver, thread);
});
