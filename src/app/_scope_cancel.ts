// What a scope's cancellation does to everything the scope holds. Cold code:
// it runs once per cancelled scope, so it sits apart from the scope's
// per-process bookkeeping (scope.ts), which keeps the state change itself
// and hands over the private lists this walks.
import type { LinkedQueue } from "../_linked_queue.ts";
import type { QueuedFork } from "./_queued_fork.ts";
import { giveUpOwnerWait } from "./_result_wait.ts";
import type { ScopeDependent } from "./_fork_host.ts";
import type { ForkedRecord } from "./_records.ts";
import type { Scope } from "./scope.ts";

/**
 * Tells what `scope` holds that it was cancelled with `reason`: its queued
 * forks are withdrawn and its awaits given up (with its closedError), then its
 * dependents, its running processes and its child scopes are cancelled.
 */
export function cancelContents(
  scope: Scope,
  reason: unknown,
  running: LinkedQueue<ForkedRecord>,
  dependents: ReadonlySet<ScopeDependent>,
  children: ReadonlySet<Scope>,
): void {
  const closed = () => scope.closedError();
  for (const fork of scope.core.slots.withdrawOwnedBy(scope)) {
    (fork as QueuedFork).withdrawn(closed());
  }
  // Each giveUp unlinks its entry, so the head moves on.
  for (let wait = scope.awaits.peek(); wait; wait = scope.awaits.peek()) {
    wait.giveUp(closed());
  }
  for (const record of running) giveUpOwnerWait(record, closed);
  for (const dependent of [...dependents]) dependent.scopeCancelled(reason);
  // A batch has cancelled its items already (scopeCancelled): for them this is a no-op.
  for (const record of scope.runningProcesses()) record.cancel(reason);
  for (const child of children) child.cancel(reason);
}
