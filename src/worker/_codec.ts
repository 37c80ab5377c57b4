// The payload of a frame on a "process" worker's pipes: a tag byte, then the
// batch as JSON text when JSON carries it exactly (most batches; node:v8's
// serialize costs tens of µs per batch under Deno), else V8-serialised (the
// structured clone algorithm).
import { DefaultDeserializer, DefaultSerializer } from "node:v8";
import { isDataView, isSharedArrayBuffer } from "node:util/types";
import { batchJson } from "./_json_exact.ts";
import type { Batch } from "./protocol.ts";

const V8 = 0;
const JSON_TEXT = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Getter = (this: ArrayBufferView) => unknown;
const getter = (proto: object, key: PropertyKey): Getter =>
  Object.getOwnPropertyDescriptor(proto, key)!.get as Getter;
const typedArray = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayName = getter(typedArray, Symbol.toStringTag);
const PARTS = ["buffer", "byteOffset", "length"];
const typedArrayParts = PARTS.map((key) => getter(typedArray, key));
const dataViewParts = ["buffer", "byteOffset", "byteLength"].map((key) =>
  getter(DataView.prototype, key)
);

type ViewKind = new (buffer: ArrayBuffer, offset: number, length: number) => ArrayBufferView;
const float16 = (globalThis as { Float16Array?: ViewKind }).Float16Array;
/** The kinds of views, by their number in a frame. */
const VIEW_KINDS: readonly ViewKind[] = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  DataView,
  BigInt64Array,
  BigUint64Array,
  ...(float16 === undefined ? [] : [float16]),
];
const KIND_NUMBERS = new Map<string, number>(VIEW_KINDS.map((kind, i) => [kind.name, i]));

const writeHostObject = (DefaultSerializer.prototype as unknown as {
  _writeHostObject(this: DefaultSerializer, view: ArrayBufferView): void;
})._writeHostObject;

/**
 * node:v8's serializer, with views written as structured clone writes them:
 * by their internals (node:v8 asks a view its prototype's questions, so it
 * refused one given Object.prototype and kept a Buffer a Buffer), with their
 * whole buffer and offset (node:v8 sent the viewed bytes alone, and read the
 * view back into the frame's buffer). The buffer is written by V8 itself, so
 * it is written once per frame whoever holds it (views, or the buffer beside
 * them) and stays resizable. A length-tracking view of a resizable buffer
 * still arrives with a fixed length (its current one).
 */
class ViewSerializer extends DefaultSerializer {
  /** A view's shared buffer crosses as a copy (node:v8 refuses a SharedArrayBuffer), one per frame. */
  #copies: Map<SharedArrayBuffer, ArrayBuffer> | undefined;

  _writeHostObject(view: ArrayBufferView): void {
    const name = typedArrayName.call(view) as string | undefined;
    const kind = KIND_NUMBERS.get(name ?? (isDataView(view) ? "DataView" : ""));
    // Not a view: node:v8 says what it is.
    if (kind === undefined) return writeHostObject.call(this, view);
    const [buffer, offset, length] = (name === undefined ? dataViewParts : typedArrayParts).map(
      (part) => part.call(view),
    ) as [ArrayBuffer, number, number];
    this.writeUint32(kind);
    this.writeUint32(offset);
    this.writeUint32(length);
    // The buffer as V8 writes it (resizable, detached refused), once per
    // frame: V8 writes a buffer met again, beside or in another view, as a
    // reference to the first.
    this.writeValue(isSharedArrayBuffer(buffer) ? this.#copyOf(buffer) : buffer);
  }

  #copyOf(shared: SharedArrayBuffer): ArrayBuffer {
    this.#copies ??= new Map();
    let copy = this.#copies.get(shared);
    if (copy === undefined) {
      copy = new ArrayBuffer(shared.byteLength);
      new Uint8Array(copy).set(new Uint8Array(shared));
      this.#copies.set(shared, copy);
    }
    return copy;
  }
}

/** Reads what ViewSerializer wrote. */
class ViewDeserializer extends DefaultDeserializer {
  _readHostObject(): ArrayBufferView {
    const kind = VIEW_KINDS[this.readUint32()];
    const offset = this.readUint32();
    const length = this.readUint32();
    return new kind(this.readValue() as ArrayBuffer, offset, length);
  }
}

function serialize(value: unknown): Uint8Array {
  const serializer = new ViewSerializer();
  serializer.writeHeader();
  serializer.writeValue(value);
  return serializer.releaseBuffer();
}

function deserialize(bytes: Uint8Array): unknown {
  const deserializer = new ViewDeserializer(bytes);
  deserializer.readHeader();
  return deserializer.readValue();
}

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
