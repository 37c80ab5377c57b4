// examples/service.ts, the README's long-lived service: a real Deno.serve on
// 127.0.0.1 port 0, driven with fetch. One runApp for the server's life;
// failures of background jobs reach onFailure as they happen; forkProcess
// waiting for a slot holds the client back; disposal drains the jobs.
import { assert, assertEquals } from "@std/assert";
import type { ProcessFailedError } from "../mod.ts";
import { startService } from "../examples/service.ts";

async function json(response: Promise<Response>): Promise<[number, unknown]> {
  const r = await response;
  return [r.status, await r.json()];
}

Deno.test("the long-lived service example", async (t) => {
  const failures: ProcessFailedError[] = [];
  const service = await startService({
    maxProcesses: 1,
    onFailure: (error) => failures.push(error),
  });
  const post = (query: string) => json(fetch(`${service.url}/jobs?${query}`, { method: "POST" }));
  const stats = async () => (await json(fetch(`${service.url}/stats`)))[1] as { waiting: number };

  await t.step("a request scope answers with its results", async () => {
    assertEquals(await json(fetch(`${service.url}/squares?n=5`)), [200, [0, 1, 4, 9, 16]]);
  });

  await t.step("a failed background job is reported as it happens", async () => {
    assertEquals(await post("ms=0&fail"), [202, { id: 6 }]);
    for (let i = 0; i < 100 && failures.length === 0; i++) await stats();
    assertEquals(failures.map((error) => error.processId), [6]);
    assertEquals(service.stats().failed, 1);
  });

  await t.step("with every slot busy, a fork holds its request back", async () => {
    assertEquals(await post("ms=40"), [202, { id: 7 }]);
    const queued = post("ms=0");
    let waiting = 0;
    for (let i = 0; i < 100 && waiting === 0; i++) waiting = (await stats()).waiting;
    assertEquals(waiting, 1);
    assertEquals(await queued, [202, { id: 8 }]);
  });

  await t.step("shutdown drains the jobs and keeps no failure for the end", async () => {
    assertEquals(await post("ms=20"), [202, { id: 9 }]);
    await service[Symbol.asyncDispose]();
    const { active, started, succeeded, failed } = service.stats();
    assertEquals({ active, started, succeeded, failed }, {
      active: 0,
      started: 9,
      succeeded: 8,
      failed: 1,
    });
    assert(failures.length === 1);
  });
});
