// Bad input that used to reach the engine's own messages: methods called
// without their object, revoked Proxies shown in a message, a backoff that
// cannot grow (the table runner is in _bad_input.ts).
import { backoff } from "../mod.ts";
import { caseTable, fn, runTable } from "./_bad_input.ts";

const { cases, add } = caseTable();
const T = TypeError, R = RangeError;
const BIND = ".bind(";

// Not "Cannot read properties of undefined (reading 'LangInterpreter')": a
// TypeError that says how to call the method.
add("process", true, T)(
  "detached lang.delay",
  (e) => {
    const { delay } = e.lang;
    return delay(1);
  },
  "lang.delay",
  BIND,
);
add("process", true, T)(
  "detached lang.readVar",
  (e) => {
    const { readVar } = e.lang;
    return readVar(e.v);
  },
  "lang.readVar",
  BIND,
);
add("process", false, T)(
  "detached lang.getRandomInt",
  (e) => {
    const { getRandomInt } = e.lang;
    return getRandomInt(1, 2);
  },
  "lang.getRandomInt",
  BIND,
);
add("process", false, T)(
  "detached lang.logInfo",
  (e) => {
    const { logInfo } = e.lang;
    return logInfo("x");
  },
  "lang.logInfo",
  BIND,
);
add("evalLang", false, T)(
  "detached lang.now",
  (e) => {
    const { now } = e.lang;
    return now();
  },
  "lang.now",
  BIND,
);
add("app", true, T)(
  "detached app.forkProcess",
  (e) => {
    const { forkProcess } = e.app;
    return forkProcess(fn);
  },
  "app.forkProcess",
  BIND,
);
add("app", false, T)(
  "detached app.tryForkProcess",
  (e) => {
    const { tryForkProcess } = e.app;
    return tryForkProcess(fn);
  },
  "app.tryForkProcess",
  BIND,
);
add("app", true, T)(
  "detached app.awaitResult",
  (e) => {
    const { awaitResult } = e.app;
    return awaitResult(e.handle);
  },
  "app.awaitResult",
  BIND,
);
add("app", false, T)(
  "detached app.newVar",
  (e) => {
    const { newVar } = e.app;
    return newVar(0);
  },
  "app.newVar",
  BIND,
);
add("app", false, T)(
  "detached handle.cancel",
  (e) => {
    const { cancel } = e.handle;
    return cancel();
  },
  "handle.cancel",
  BIND,
);
add("top", true, T)(
  "detached runtime.runApp",
  (e) => {
    const { runApp } = e.rt;
    return runApp(fn);
  },
  "runtime.runApp",
  BIND,
);
add("top", false, T)(
  "detached runtime.stats",
  (e) => {
    const { stats } = e.rt;
    return stats();
  },
  "runtime.stats",
  BIND,
);
add("top", true, T)(
  "detached runtime[Symbol.asyncDispose]",
  (e) => {
    const dispose = e.rt[Symbol.asyncDispose];
    return dispose();
  },
  "runtime[Symbol.asyncDispose]",
  BIND,
);

// show() is total: a revoked Proxy is described, not an engine error about it.
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
add("app", true, T)(
  "forkProcess(revoked Proxy)",
  (e) => e.app.forkProcess(revoked()),
  "forkProcess process",
  "a revoked Proxy",
);
add("app", true, T)(
  "awaitResult(revoked Proxy)",
  (e) => e.app.awaitResult(revoked()),
  "awaitResult handle",
  "a revoked Proxy",
);
add("process", false, T)(
  "logInfo(revoked Proxy)",
  (e) => e.lang.logInfo(revoked()),
  "logInfo message",
  "a revoked Proxy",
);

// initialMs 0 never grows, and 0 · 2^1024 is NaN: the 1 025th sleep was NaN ms.
add("top", false, R)(
  "backoff initialMs 0",
  () => backoff({ initialMs: 0 }),
  "backoff initialMs",
  "0",
);

Deno.test("detached methods, revoked Proxies and a backoff that cannot grow get named errors", async () => {
  await runTable(cases);
});
