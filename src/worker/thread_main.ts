// The entry module of a "thread" worker (a Web Worker). Its first message
// brings the two rings of its lane; batches come through the ring or, when
// the ring cannot carry them, as messages, and leave the same way.
import type { ToWorker } from "./protocol.ts";
import { type LaneInit, LaneReceiver, LaneSender, type Sequenced } from "./_lane.ts";
import { FrameRing } from "./_ring.ts";
import { serve, type Served } from "./_serve.ts";
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
let received = 0;
scope.onmessage = (event) => {
  const data = event.data;
  if ("rings" in data) {
    const [fromRuntime, toRuntime] = data.rings.map((buffer) => new FrameRing(buffer));
    sender = new LaneSender(toRuntime, (batch) => scope.postMessage(batch), true);
    const served: Served = {
      drain: () => receiver.drain(fromRuntime),
      flush: loop.outbox.flush,
      get waiting() {
        return loop.waiting;
      },
      get received() {
        return received;
      },
    };
    fromRuntime.listen(() => serve(fromRuntime, served));
  } else {
    // Kept in Int32 range, as the ring's count of posted batches is (it wraps).
    received = (received + 1) | 0;
    receiver.receive(data);
  }
};
// Deno tells the parent nothing when a worker closes itself: say it first.
const close = scope.close.bind(scope);
scope.close = () => {
  loop.closing();
  close();
};
