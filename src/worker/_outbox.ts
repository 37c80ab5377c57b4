// Batching: every message queued during one synchronous stretch leaves in
// one post, up to `maxBatch` messages (a script logging in a loop sends its
// logs in batches the runtime takes one by one, its event loop turning in
// between). A batch that cannot be posted (a value structured clone
// refuses) is posted message by message, and each refused message is handed
// to `refused`, which decides what goes instead.

export class Outbox<M> {
  #queue: M[] = [];
  #scheduled = false;
  /** While refused messages are posted one by one: what `refused` pushes goes in their place. */
  #retrying = false;

  constructor(
    readonly post: (messages: M[]) => void,
    readonly refused: (message: M, error: unknown) => void,
    readonly maxBatch: number = Infinity,
  ) {}

  /** The message queued last, while it can still be amended. */
  get last(): M | undefined {
    return this.#queue.at(-1);
  }

  push(message: M): void {
    if (this.#queue.push(message) >= this.maxBatch && !this.#retrying) {
      this.flush();
      return;
    }
    if (!this.#scheduled && !this.#retrying) {
      this.#scheduled = true;
      queueMicrotask(this.flush);
    }
  }

  /** Sends what is queued now. */
  readonly flush = (): void => {
    this.#scheduled = false;
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    try {
      this.post(queue);
    } catch {
      // No flush from inside `refused` (a full batch would flush from push):
      // with a channel that always fails, that recursed until the stack ran out.
      this.#retrying = true;
      try {
        for (const message of queue) {
          try {
            this.post([message]);
          } catch (error) {
            this.refused(message, error);
            this.#postInstead();
          }
        }
      } finally {
        this.#retrying = false;
      }
    }
  };

  /**
   * What `refused` queued instead goes out now, in the refused message's
   * place (a later message may depend on it: a worker's write to the variable
   * whose newVar was refused), once: it is plain data, so a post that fails
   * again fails for another reason (a broken channel), which is thrown rather
   * than refused forever.
   */
  #postInstead(): void {
    const instead = this.#queue;
    if (instead.length === 0) return;
    this.#queue = [];
    this.post(instead);
  }
}
