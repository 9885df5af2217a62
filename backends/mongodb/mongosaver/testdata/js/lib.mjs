// Shared helpers of the MongoDB interop scripts: opening JS LangGraph's
// MongoDBSaver on the test server and printing checkpoint tuples as JSON
// the Go test compares with what memvault reads.
//
// The server comes from MONGODB_URI; the database is the script's first
// argument.

import { MongoClient } from "mongodb";
import { MongoDBSaver } from "@langchain/langgraph-checkpoint-mongodb";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

// serde is MongoDBSaver's default serializer; values travel to Go as the
// (type, data) pair it writes for them.
export const serde = new JsonPlusSerializer();

// open returns a connected client and a MongoDBSaver on database dbName.
export async function open(dbName) {
  const uri = process.env.MONGODB_URI;
  if (!uri || !dbName) {
    throw new Error("usage: MONGODB_URI=mongodb://... node <script>.mjs DATABASE ...");
  }
  const client = new MongoClient(uri);
  await client.connect();
  return { client, saver: new MongoDBSaver({ client, dbName }) };
}

async function wire(v) {
  const [type, data] = await serde.dumpsTyped(v);
  return type === "json" ? { type, json: new TextDecoder().decode(data) } : { type, base64: Buffer.from(data).toString("base64") };
}

// tupleView renders a CheckpointTuple: ids, values and pending writes in
// their wire form, metadata as it is.
export async function tupleView(t) {
  const values = {};
  for (const [ch, v] of Object.entries(t.checkpoint.channel_values ?? {})) values[ch] = await wire(v);
  const writes = [];
  for (const [task, ch, v] of t.pendingWrites ?? []) writes.push({ task, channel: ch, value: await wire(v) });
  return {
    id: t.config.configurable.checkpoint_id,
    ns: t.config.configurable.checkpoint_ns,
    parent: t.parentConfig?.configurable?.checkpoint_id ?? null,
    values,
    versions: t.checkpoint.channel_versions,
    metadata: t.metadata,
    writes,
  };
}

// listThread is JS's reading of a thread: MongoDBSaver.list, newest first.
export async function listThread(saver, thread) {
  const out = [];
  for await (const t of saver.list({ configurable: { thread_id: thread } })) out.push(await tupleView(t));
  return out;
}

// main runs fn with the saver and prints its result as one JSON line.
export async function main(fn) {
  const { client, saver } = await open(process.argv[2]);
  try {
    process.stdout.write(JSON.stringify(await fn(saver)) + "\n");
  } finally {
    await client.close();
  }
}
