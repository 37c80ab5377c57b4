// The errors of a capacity shared by several runtimes through a lease store.
import { ProcessCancelledError } from "./process.ts";

/**
 * A process's lease on a shared capacity could not be renewed before the
 * runtime's local deadline (the store unreachable, or the lease reclaimed), so
 * the process was cancelled: the fleet-wide limit holds only if it stops. It
 * is a {@linkcode ProcessCancelledError}, not a failure.
 *
 * @example
 * ```ts
 * import { LeaseLostError, ProcessCancelledError } from "@procpool/procpool";
 * const error = new LeaseLostError("partner-api", 10_000);
 * console.assert(error instanceof ProcessCancelledError && error.key === "partner-api");
 * ```
 */
export class LeaseLostError extends ProcessCancelledError {
  /** The shared capacity's key. */
  readonly key: string;
  /** The lease time-to-live that passed without a renewal, in milliseconds. */
  readonly leaseMs: number;
  /** Creates the error for a lease on `key` not renewed within `leaseMs`. */
  constructor(key: string, leaseMs: number, message?: string) {
    super(
      message ??
        `the lease on shared capacity ${JSON.stringify(key)} could not be renewed within ` +
          `leaseMs ${leaseMs}; the process was cancelled so the fleet's limit holds`,
    );
    this.name = "LeaseLostError";
    this.key = key;
    this.leaseMs = leaseMs;
  }
}

/**
 * This runtime's `limit` for a shared capacity differs from the one the store
 * remembers for that key (set by a runtime that still holds or waits for a
 * lease). Give every runtime on one key the same limit. Also raised while
 * runtimes of an older procpool version use the key: every runtime on one key
 * must run the same version.
 *
 * @example
 * ```ts
 * import { CapacityMismatchError } from "@procpool/procpool";
 * const error = new CapacityMismatchError("partner-api", 8, 50);
 * console.assert(error.limit === 8 && error.storedLimit === 50);
 * ```
 */
export class CapacityMismatchError extends Error {
  /** The shared capacity's key. */
  readonly key: string;
  /** This runtime's limit. */
  readonly limit: number;
  /** The limit the store holds for the key (-1 when an older version's runtimes did not say). */
  readonly storedLimit: number;
  /** Creates the error for `key`, where this runtime says `limit` and the store `storedLimit`. */
  constructor(key: string, limit: number, storedLimit: number, message?: string) {
    const said = `shared capacity ${JSON.stringify(key)} has limit ${limit} here but ` +
      `${storedLimit} in the store, set by runtimes still using it; give every runtime on one ` +
      "key the same limit";
    super(message ?? said);
    this.name = "CapacityMismatchError";
    this.key = key;
    this.limit = limit;
    this.storedLimit = storedLimit;
  }
}
