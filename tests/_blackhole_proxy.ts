// A loopback TCP proxy that can simulate a network partition without touching
// the network: `cut()` stops forwarding in both directions while every socket
// stays open (no FIN, no RST: the bytes just vanish, as behind a dead link),
// and `heal()` resumes.
//
// What happens to the bytes sent during a cut is the caller's choice. By
// default they are held and delivered on heal, in order, as TCP would once its
// retransmissions get through after a short partition. With
// `cut({ discard: true })` they are dropped for good, like a link whose
// connections never recover; those streams are then out of step, and only new
// connections work after the heal.

/** Options of {@linkcode BlackholeProxy.cut}. */
export interface CutOptions {
  /** Drop the bytes sent during the cut instead of delivering them on heal. */
  discard?: boolean;
}

/** One direction of one proxied connection. */
class Direction {
  #held: Uint8Array[] = [];
  #writing: Promise<void> = Promise.resolve();

  constructor(
    readonly proxy: BlackholeProxy,
    readonly to: Deno.Conn,
    readonly upstream = false,
  ) {}

  /** Forwards, holds or drops one chunk, depending on the proxy's state. */
  push(chunk: Uint8Array): void {
    this.proxy.lastTrafficAt = performance.now();
    const cutBefore = this.proxy.cutBefore;
    if (this.upstream && cutBefore?.(new TextDecoder().decode(chunk))) {
      this.proxy.cutBefore = undefined;
      this.proxy.cut({ discard: true });
    }
    if (!this.proxy.isCut) return this.#send(chunk);
    if (!this.proxy.discards) this.#held.push(chunk);
  }

  /** Sends what was held during the cut, ahead of anything read later. */
  flush(): void {
    for (const chunk of this.#held.splice(0)) this.#send(chunk);
  }

  /** Resolves when every queued write has been attempted. */
  drained(): Promise<void> {
    return this.#writing;
  }

  #send(chunk: Uint8Array): void {
    this.#writing = this.#writing.then(async () => {
      try {
        for (let done = 0; done < chunk.length;) done += await this.to.write(chunk.subarray(done));
      } catch {
        // The peer is gone; the reading side notices and closes the pair.
      }
    });
  }
}

/** A proxy from a loopback port of its own to `127.0.0.1:targetPort`. */
export class BlackholeProxy implements AsyncDisposable {
  readonly port: number;
  /**
   * `performance.now()` when a chunk last arrived from either side (forwarded
   * or not): a test that must cut between two exchanges waits for a quiet moment.
   */
  lastTrafficAt = 0;
  /**
   * When set, a chunk from a client for which it returns true is not
   * forwarded: the proxy cuts, dropping bytes, just before it (once).
   */
  cutBefore: ((text: string) => boolean) | undefined = undefined;
  /** Connections accepted so far. */
  accepted = 0;
  #listener: Deno.TcpListener;
  #conns = new Set<Deno.Conn>();
  #directions = new Set<Direction>();
  #tasks = new Set<Promise<void>>();
  #cut = false;
  #discard = false;
  #closed = false;
  #accepting: Promise<void>;

  constructor(readonly targetPort: number) {
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = this.#listener.addr.port;
    this.#accepting = this.#accept();
  }

  /** True while forwarding is stopped. */
  get isCut(): boolean {
    return this.#cut;
  }

  /** True while a cut drops its bytes. */
  get discards(): boolean {
    return this.#discard;
  }

  /** Stops forwarding in both directions, on open and new connections alike. */
  cut(options: CutOptions = {}): void {
    this.#cut = true;
    this.#discard = options.discard ?? false;
  }

  /** Resumes forwarding (first delivering the held bytes, unless the cut discarded them). */
  heal(): void {
    this.#cut = false;
    for (const direction of this.#directions) direction.flush();
  }

  /** Closes every open connection (as a server restart would) but keeps accepting new ones. */
  dropConnections(): void {
    for (const conn of this.#conns) closeQuietly(conn);
  }

  /** Closes the listener and every connection, and waits for the pumps to end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener.close();
    await this.#accepting;
    for (const conn of this.#conns) closeQuietly(conn);
    await Promise.all(this.#tasks);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #accept(): Promise<void> {
    while (true) {
      let client: Deno.Conn;
      try {
        client = await this.#listener.accept();
      } catch {
        return; // The listener was closed.
      }
      this.accepted++;
      this.#track(this.#serve(client));
    }
  }

  async #serve(client: Deno.Conn): Promise<void> {
    this.#conns.add(client);
    let upstream: Deno.Conn;
    try {
      upstream = await Deno.connect({ hostname: "127.0.0.1", port: this.targetPort });
    } catch {
      this.#conns.delete(client);
      closeQuietly(client);
      return;
    }
    this.#conns.add(upstream);
    if (this.#closed) closeQuietly(upstream);
    const toUpstream = new Direction(this, upstream, true);
    const toClient = new Direction(this, client);
    this.#directions.add(toUpstream).add(toClient);
    // Either side ending ends the pair: this proxy never half-closes.
    await Promise.race([pump(client, toUpstream), pump(upstream, toClient)]);
    await Promise.all([toUpstream.drained(), toClient.drained()]);
    for (const conn of [client, upstream]) {
      this.#conns.delete(conn);
      closeQuietly(conn);
    }
    await Promise.allSettled([pumpEnded(client), pumpEnded(upstream)]);
    this.#directions.delete(toUpstream);
    this.#directions.delete(toClient);
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }
}

const pumps = new WeakMap<Deno.Conn, Promise<void>>();

/** Reads `from` until it ends, pushing each chunk into `direction`. */
function pump(from: Deno.Conn, direction: Direction): Promise<void> {
  const done = (async () => {
    const buffer = new Uint8Array(64 * 1024);
    while (true) {
      let n: number | null;
      try {
        n = await from.read(buffer);
      } catch {
        return;
      }
      if (n === null) return;
      direction.push(buffer.slice(0, n));
    }
  })();
  pumps.set(from, done);
  return done;
}

function pumpEnded(conn: Deno.Conn): Promise<void> {
  return pumps.get(conn) ?? Promise.resolve();
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
