// Shared helpers of the interop scripts: opening JS LangGraph's PostgresSaver
// and printing checkpoint tuples as JSON the Go tests compare with what
// memvault reads.
//
// The connection comes from the standard libpq environment variables
// (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE), which node-postgres reads;
// the schema is the script's first argument.

import pg from "pg";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

// serde is the serializer PostgresSaver uses by default; views of values are
// made with it, so they show exactly what JS writes to (and reads from) rows.
export const serde = new JsonPlusSerializer();

// openSaver returns a PostgresSaver on schema, over a pool configured from
// the environment.
export function openSaver(schema) {
  if (!schema) {
    throw new Error("usage: node <script>.mjs SCHEMA ... (connection from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE)");
  }
  const pool = new pg.Pool({ max: 2 });
  return new PostgresSaver(pool, undefined, { schema });
}

function base64(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

// describe renders a value as JS holds it after reading, so a test can tell
// which classes JS revived: plain JSON stays as it is; anything else becomes
// an object with one "$kind" key.
export function describe(v) {
  if (v === undefined) return { $undefined: true };
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : { $number: String(v) };
  if (typeof v === "bigint") return { $bigint: v.toString() };
  if (Array.isArray(v)) return v.map(describe);
  if (v instanceof Uint8Array) return { $bytes: base64(v) };
  if (v instanceof Set) return { $set: [...v].map(describe) };
  if (v instanceof Map) return { $map: [...v].map(([k, e]) => [describe(k), describe(e)]) };
  if (v instanceof Error) return { $error: v.message };
  if (v instanceof RegExp) return { $regexp: [v.source, v.flags] };
  if (v instanceof Date) return { $date: v.toISOString() };
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    // A class instance, e.g. a LangChain message revived from lc:1 JSON.
    const fields = {};
    for (const [k, e] of Object.entries(typeof v.toJSON === "function" ? v.toJSON() : v)) fields[k] = describe(e);
    return { $class: v.constructor?.name ?? "?", fields };
  }
  const out = {};
  for (const [k, e] of Object.entries(v)) out[k] = describe(e);
  return out;
}

// valueView is how a value travels to the Go test: the (type, data) pair JS
// writes for it (data as JSON text for "json", base64 for "bytes") and the
// description of the value itself.
export async function valueView(v) {
  const [type, data] = await serde.dumpsTyped(v);
  const view = { type };
  if (type === "json") view.json = new TextDecoder().decode(data);
  else view.base64 = base64(data);
  view.js = describe(v);
  return view;
}

// tupleView renders a CheckpointTuple.
export async function tupleView(t) {
  const cp = t.checkpoint;
  const values = {};
  for (const [ch, v] of Object.entries(cp.channel_values ?? {})) values[ch] = await valueView(v);
  const writes = [];
  for (const [task, ch, v] of t.pendingWrites ?? []) writes.push([task, ch, await valueView(v)]);
  return {
    config: t.config.configurable,
    parent_checkpoint_id: t.parentConfig?.configurable?.checkpoint_id ?? null,
    checkpoint: {
      v: cp.v,
      id: cp.id,
      ts: cp.ts,
      channel_versions: cp.channel_versions,
      versions_seen: cp.versions_seen,
    },
    channel_values: values,
    metadata: t.metadata,
    pending_writes: writes,
  };
}

// listThread returns the views of every checkpoint of a thread, all
// namespaces, newest first (PostgresSaver.list without checkpoint_ns).
export async function listThread(saver, threadId) {
  const out = [];
  for await (const t of saver.list({ configurable: { thread_id: threadId } })) out.push(await tupleView(t));
  return out;
}

// main runs fn, prints its result as one line of JSON and exits non-zero on
// error (with the error on stderr), always closing the pool.
export async function main(fn) {
  let saver;
  try {
    const result = await fn((s) => (saver = s));
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (e) {
    process.stderr.write(`${e?.stack ?? e}\n`);
    process.exitCode = 1;
  } finally {
    await saver?.end();
  }
}
