// The entry module of a "thread" worker (a Web Worker). Its first message
// brings the two rings of its lane; batches come through the ring or, when
// the ring cannot carry them, as messages, and leave the same way.
import type { ToWorker } from "./protocol.ts";
import { type LaneInit, LaneReceiver, LaneSender, type Sequenced } from "./_lane.ts";
import { FrameRing } from "./_ring.ts";
import { WorkerLoop } from "./worker_loop.ts";

interface WorkerScope {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent<LaneInit | Sequenced<ToWorker>>) => void) | null;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;
let sender: LaneSender<unknown> | undefined;
const loop = new WorkerLoop({ post: (batch) => sender!.send(batch) });
const receiver = new LaneReceiver<ToWorker>(loop.receive);
scope.onmessage = (event) => {
  const data = event.data;
  if ("rings" in data) {
    const [fromRuntime, toRuntime] = data.rings.map((buffer) => new FrameRing(buffer));
    sender = new LaneSender(toRuntime, (batch) => scope.postMessage(batch));
    fromRuntime.listen(() => serve(fromRuntime));
  } else receiver.receive(data);
};
/**
 * How long a worker whose run ended waits for the next frame blocked
 * (Atomics.wait) rather than in its event loop: waking a thread blocked so
 * costs the runtime and the worker a few µs, waking an event loop tens. A
 * script's leftovers (a timer it did not await) wait that long at most.
 */
const BLOCKED_WAIT_MS = 2;

/**
 * Runs what the ring holds; then, with nothing left to run, waits blocked for
 * more, for BLOCKED_WAIT_MS in all before it goes back to its event loop.
 */
function serve(ring: FrameRing): void {
  const until = performance.now() + BLOCKED_WAIT_MS;
  for (;;) {
    const seen = ring.bell;
    receiver.drain(ring);
    // The result of a run that ended now goes at once, not after the wait.
    loop.outbox.flush();
    const left = until - performance.now();
    if (!loop.waiting || left <= 0) return;
    if (!ring.waitSync(seen, left) || !ring.pending) return;
  }
}

// Deno tells the parent nothing when a worker closes itself: say it first.
const close = scope.close.bind(scope);
scope.close = () => {
  loop.closing();
  close();
};
