// What the lease manager is given (its options, a logger) and what it asks
// of a fork waiting for a lease.
import { QueueNode } from "../../_linked_queue.ts";
import type { Clock } from "../clock.ts";
import type { Lease } from "./_lease_entry.ts";

/** Where the manager reports store outages (a LogTape logger fits). */
export interface LeaseLogger {
  warn(message: string, properties?: Record<string, unknown>): void;
  info(message: string, properties?: Record<string, unknown>): void;
}

/** A fork waiting for a lease; it sits in the manager's FIFO queue. */
export abstract class LeaseWaiter extends QueueNode {
  /** Runs once, with the lease already this waiter's. */
  abstract leaseGranted(lease: Lease): void;
  /** Runs once instead, when no lease can come (`CapacityMismatchError`, disposal). */
  abstract leaseRefused(error: unknown): void;
}

/**
 * A third of the lease, at most a second: how long a runtime lets pass
 * without hearing from the store (the polling cap, a slow call), so that its
 * wait record stays fresh and an outage shows well before a deadline.
 */
export function thirdOfLeaseMs(leaseMs: number): number {
  return Math.min(1_000, Math.floor(leaseMs / 3));
}

export interface LeaseManagerOptions {
  /** Never hold more leases than this: the runtime's maxProcesses (S4). */
  readonly maxHeld: number;
  /** Names this runtime in the store. Default: a random UUID. */
  readonly holder?: string;
  /** Real time: deadlines must pass as the store's do. Default: performance.now(), which never steps. */
  readonly clock?: Clock;
  /** Jitter source, [0, 1). Default Math.random. */
  readonly random?: () => number;
  readonly logger?: LeaseLogger;
  /** How often held leases are renewed. Default leaseMs / 3. */
  readonly renewEveryMs?: number;
  /**
   * A store call left unanswered this long counts as an outage (one warning),
   * even if the client never fails it. Default: not watched.
   */
  readonly slowCallMs?: number;
  /**
   * Taken off each local deadline, so that a process cancelled at its local
   * deadline has this long to stop before the store's deadline passes and
   * another runtime may take the lease. Default 0 (the runtime sets it).
   */
  readonly stopMarginMs?: number;
  /** How long an unused lease is kept for a local fork while nobody else waits. Default 5. */
  readonly idleKeepMs?: number;
  /** Polling, the fallback for lost notices: the first delay (default 50), doubling. */
  readonly pollMinMs?: number;
  /** The polling cap: default min(1000, leaseMs / 3), so the store's wait record stays fresh. */
  readonly pollMaxMs?: number;
}
