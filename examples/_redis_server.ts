/**
 * A private redis-server for the fleet example and the tests: a free loopback
 * port, a temp dir, no persistence (`--save "" --appendonly no`). Nothing
 * depends on a pre-started service or a fixed port. It needs `redis-server` on
 * the PATH (Debian: `apt-get install redis-server`; `.ci/run` installs it when
 * it is missing).
 *
 * @module
 */

/** How long a fresh server may take to answer PING on a busy machine. */
const START_TIMEOUT_MS = 10_000;

/** A running private server; `stop()` (or `await using`) ends it and removes its dir. */
export interface RedisServer extends AsyncDisposable {
  readonly port: number;
  /** Kills the server with SIGKILL (no shutdown work), keeping its port and dir for `restart`. */
  kill(): Promise<void>;
  /** Starts the server again on the same port, empty (nothing was persisted). */
  restart(): Promise<void>;
  /** Stops the server and removes its dir. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a private redis-server and resolves once it answers PING. */
export async function startRedisServer(): Promise<RedisServer> {
  const dir = await Deno.makeTempDir({ prefix: "procpool-redis-" });
  try {
    for (let attempt = 1;; attempt++) {
      const port = freePort();
      const child = spawn(port, dir);
      if (await answers(port, child)) return new PrivateServer(port, dir, child);
      await stopChild(child);
      // Another program took the port between our probe and the server's bind.
      if (attempt === 3) throw new Error(`redis-server did not start; see ${dir}/redis.log`);
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
}

class PrivateServer implements RedisServer {
  #child: Deno.ChildProcess | undefined;
  #stopped = false;

  constructor(readonly port: number, readonly dir: string, child: Deno.ChildProcess) {
    this.#child = child;
  }

  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child) await stopChild(child, "SIGKILL");
  }

  async restart(): Promise<void> {
    await this.kill();
    const child = spawn(this.port, this.dir);
    this.#child = child;
    if (!await answers(this.port, child)) {
      throw new Error(`redis-server did not restart on port ${this.port}`);
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const child = this.#child;
    this.#child = undefined;
    if (child) await stopChild(child);
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

function spawn(port: number, dir: string): Deno.ChildProcess {
  return new Deno.Command("redis-server", {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--logfile",
      `${dir}/redis.log`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

async function stopChild(child: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM"): Promise<void> {
  try {
    child.kill(signal);
  } catch {
    // Already exited.
  }
  await child.status;
}

/** Polls with PING until the server answers, it exits, or START_TIMEOUT_MS passes. */
async function answers(port: number, child: Deno.ChildProcess): Promise<boolean> {
  let exited = false;
  child.status.then(() => exited = true);
  const giveUp = Date.now() + START_TIMEOUT_MS;
  while (!exited && Date.now() < giveUp) {
    if (await ping(port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

async function ping(port: number): Promise<boolean> {
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode("PING\r\n"));
    const buffer = new Uint8Array(64);
    const n = await conn.read(buffer);
    return n !== null && new TextDecoder().decode(buffer.subarray(0, n)).startsWith("+PONG");
  } catch {
    return false;
  } finally {
    conn?.close();
  }
}
