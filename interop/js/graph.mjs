// graph.mjs SCHEMA THREAD start|resume
//
// Runs a real JS LangGraph StateGraph (@langchain/langgraph) with
// PostgresSaver in SCHEMA as its checkpointer:
//
//	START -> agent -> lookup (a compiled subgraph: its own checkpoint
//	namespace) -> review (interrupt(): waits for approval) -> END
//
// "start" invokes the graph on THREAD with a user message; it stops at the
// interrupt. "resume" invokes it with Command({resume: true}), which only
// works when the saver gives back the interrupted checkpoint and its pending
// writes exactly (task ids are hashes of the checkpoint id, the namespace and
// the node). Either prints one JSON line:
//
//	{"interrupts": [...], "next": [...], "values": {channel: value view},
//	 "tuples": [tuple views of the thread, all namespaces, newest first]}

import { Annotation, Command, END, START, StateGraph, interrupt, messagesStateReducer } from "@langchain/langgraph";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { openSaver, listThread, valueView, main } from "./lib.mjs";

const [schema, thread, mode] = process.argv.slice(2);

const State = Annotation.Root({
  messages: Annotation({ reducer: messagesStateReducer, default: () => [] }),
  counter: Annotation({ reducer: (a, b) => a + b, default: () => 0 }),
  order: Annotation(),
  approved: Annotation(),
});

const lookup = new StateGraph(State)
  .addNode("fetch", async (s) => ({
    order: { id: 42, amount: 42.5, currency: "EUR", items: ["clavier", "souris"], charged: [true, true] },
    messages: [new AIMessage({ id: "lookup-1", content: "Commande 42 : débitée deux fois (2 × 42,50 €)." })],
    counter: 1,
  }))
  .addEdge(START, "fetch")
  .addEdge("fetch", END)
  .compile();

function build(checkpointer) {
  return new StateGraph(State)
    .addNode("agent", async () => ({
      messages: [new AIMessage({ id: "agent-1", content: "Je vérifie votre commande 🔎" })],
      counter: 1,
    }))
    .addNode("lookup", lookup)
    .addNode("review", async (s) => {
      const ok = interrupt({ question: `Rembourser ${s.order?.amount} € ?`, order: s.order?.id });
      return {
        approved: ok,
        messages: [new AIMessage({ id: "review-1", content: ok ? "Remboursement effectué ✅" : "Remboursement refusé." })],
        counter: 1,
      };
    })
    .addEdge(START, "agent")
    .addEdge("agent", "lookup")
    .addEdge("lookup", "review")
    .addEdge("review", END)
    .compile({ checkpointer });
}

await main(async (register) => {
  const saver = register(openSaver(schema));
  if (!thread || (mode !== "start" && mode !== "resume")) throw new Error("usage: node graph.mjs SCHEMA THREAD start|resume");
  if (mode === "start") await saver.setup();
  const graph = build(saver);
  const config = { configurable: { thread_id: thread } };
  const input = mode === "start"
    ? { messages: [new HumanMessage({ id: "user-1", content: "J'ai été débité deux fois pour la commande 42 😠" })] }
    : new Command({ resume: true });
  await graph.invoke(input, config);

  const state = await graph.getState(config);
  const values = {};
  for (const [k, v] of Object.entries(state.values)) values[k] = await valueView(v);
  return {
    interrupts: (state.tasks ?? []).flatMap((t) => t.interrupts ?? []).map((i) => i.value),
    next: state.next,
    values,
    tuples: await listThread(saver, thread),
  };
});
