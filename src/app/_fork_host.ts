// The part of a scope that forkAll, forkAllSettled and forkStream see: kept
// apart so that a batch depends on this contract, not on Scope.
import type { RuntimeCore } from "../runtime/core.ts";
import type { ProcessOwner, ProcessRecord } from "./process.ts";

/** Something in a scope that must react when the scope is cancelled. */
export interface ScopeDependent {
  scopeCancelled(reason: unknown): void;
  /** Its running processes, which the scope does not keep itself (a batch's items). */
  liveProcesses?(): readonly ProcessRecord[];
}

/** What a batch needs from its scope, which owns its items (admitItem). */
export interface ForkHost extends ProcessOwner {
  readonly core: RuntimeCore;
  addDependent(dependent: ScopeDependent): void;
  removeDependent(dependent: ScopeDependent): void;
  workStarted(): void;
  workEnded(): void;
  closedError(): Error;
  /** A failure a batch marked observed but could not deliver after all. */
  failureHandedBack(record: ProcessRecord): void;
}
