// The partition proxy itself: it forwards, a cut stops every byte without
// closing anything, and a heal resumes (delivering or dropping what was held).
import { assertEquals } from "@std/assert";
import { BlackholeProxy } from "./_blackhole_proxy.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An echo server on loopback; the test closes it. */
function echoServer(): { port: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const serving = (async () => {
    const tasks: Promise<void>[] = [];
    for await (const conn of listener) {
      conns.add(conn);
      tasks.push(conn.readable.pipeTo(conn.writable).catch(() => {}));
    }
    await Promise.all(tasks);
  })();
  return {
    port: listener.addr.port,
    async close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed by the pipe already */ }
      }
      await serving;
    },
  };
}

/** The next bytes from `conn`, or "nothing" if none arrive within `ms` (the read stays pending). */
function nextOrNothing(
  read: Promise<string>,
  ms: number,
): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const nothing = new Promise<string>((resolve) =>
    timer = setTimeout(() => resolve("nothing"), ms)
  );
  return Promise.race([read, nothing]).finally(() => clearTimeout(timer));
}

async function readText(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(1024);
  const n = await conn.read(buffer);
  return n === null ? "EOF" : decoder.decode(buffer.subarray(0, n));
}

Deno.test("blackhole proxy", async (t) => {
  const echo = echoServer();
  const proxy = new BlackholeProxy(echo.port);
  try {
    await t.step("forwards both ways while healed", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
      await conn.write(encoder.encode("a"));
      assertEquals(await readText(conn), "a");
      conn.close();
    });

    await t.step(
      "a cut delivers nothing and closes nothing; heal delivers what was held",
      async () => {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
        proxy.cut();
        await conn.write(encoder.encode("b"));
        const read = readText(conn);
        // Neither the echo nor an end of stream (FIN/RST) comes through the cut.
        assertEquals(await nextOrNothing(read, 30), "nothing");
        proxy.heal();
        assertEquals(await read, "b");
        conn.close();
      },
    );

    await t.step("a discarding cut drops its bytes; later bytes flow after heal", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
      proxy.cut({ discard: true });
      await conn.write(encoder.encode("c"));
      const read = readText(conn);
      assertEquals(await nextOrNothing(read, 30), "nothing");
      proxy.heal();
      await conn.write(encoder.encode("d"));
      assertEquals(await read, "d");
      conn.close();
    });

    await t.step("connections opened during a cut wait for the heal", async () => {
      proxy.cut();
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
      await conn.write(encoder.encode("e"));
      const read = readText(conn);
      assertEquals(await nextOrNothing(read, 30), "nothing");
      proxy.heal();
      assertEquals(await read, "e");
      conn.close();
    });
  } finally {
    await proxy.close();
    await echo.close();
  }
});
