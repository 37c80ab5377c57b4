// The entry module of a "thread" worker (a Web Worker).
import type { Batch, ToWorker } from "./protocol.ts";
import { WorkerLoop } from "./worker_loop.ts";

interface WorkerScope {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent<Batch<ToWorker>>) => void) | null;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;
const loop = new WorkerLoop({ post: (batch) => scope.postMessage(batch) });
scope.onmessage = (event) => loop.receive(event.data);
// Deno tells the parent nothing when a worker closes itself: say it first.
const close = scope.close.bind(scope);
scope.close = () => {
  loop.closing();
  close();
};
