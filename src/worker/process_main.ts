// The entry module of a "process" worker (a Deno child process). Its stdin
// and stdout carry the channel: frames of a 4-byte little-endian length and a
// batch (see _codec.ts: JSON when JSON carries it exactly, else V8-serialised,
// the structured clone algorithm, as for a Web Worker).
// Console output therefore goes to stderr.
import { Console } from "node:console";
import process from "node:process";
import { frame, FrameReader } from "./_frames.ts";
import type { ToWorker } from "./protocol.ts";
import { decodeBatch, encodeBatch } from "./_codec.ts";
import { WorkerLoop } from "./worker_loop.ts";

globalThis.console = new Console(process.stderr, process.stderr) as unknown as typeof console;

function writeAll(bytes: Uint8Array): void {
  for (let offset = 0; offset < bytes.length;) {
    offset += Deno.stdout.writeSync(bytes.subarray(offset));
  }
}

const loop = new WorkerLoop({ post: (batch) => writeAll(frame(encodeBatch(batch))) });
const reader = new FrameReader((payload) => loop.receive(decodeBatch<ToWorker>(payload)));
for await (const chunk of Deno.stdin.readable) reader.push(chunk);
// The runtime closed the channel: nothing more will come.
Deno.exit(0);
