// The payload of a frame on a "process" worker's pipes: a tag byte, then the
// batch as JSON text when JSON carries it exactly (most batches; node:v8's
// serialize costs tens of µs per batch under Deno), else V8-serialised (the
// structured clone algorithm).
import { deserialize, serialize } from "node:v8";
import { batchJson } from "./_json_exact.ts";
import type { Batch } from "./protocol.ts";

const V8 = 0;
const JSON_TEXT = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Throws (DataCloneError) if a value cannot be serialised. */
export function encodeBatch(batch: Batch<unknown>): Uint8Array {
  const json = batchJson(batch);
  if (json !== undefined) {
    const text = encoder.encode(json);
    const bytes = new Uint8Array(1 + text.length);
    bytes[0] = JSON_TEXT;
    bytes.set(text, 1);
    return bytes;
  }
  const v8 = serialize(batch);
  const bytes = new Uint8Array(1 + v8.length);
  bytes[0] = V8;
  bytes.set(v8, 1);
  return bytes;
}

export function decodeBatch<M>(payload: Uint8Array): Batch<M> {
  const body = payload.subarray(1);
  return (payload[0] === JSON_TEXT ? JSON.parse(decoder.decode(body)) : deserialize(body)) as Batch<
    M
  >;
}
