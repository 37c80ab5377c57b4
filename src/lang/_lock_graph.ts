// Who waits for which variable's lock, so that a wait that would close a
// cycle (A waits for a variable held by B, which waits for one held by A,
// directly or through others) is refused at once with DeadlockError instead
// of hanging both processes forever (API.md rule 12).
//
// The graph is per process, like the re-entry rule: a process is one node,
// whatever number of LangL operations it runs at once. Its edges are the lock
// waits it has now; each leads to the process holding that lock. The check
// runs only when a lock is contended (the uncontended path never touches the
// graph), and walks from the holder: in a program of sequential processes the
// holder is usually running, not waiting, and the walk ends at once.
import { DeadlockError } from "../errors.ts";
import { processLabel } from "../errors/_process_label.ts";
import { type Cancellation, holderName } from "./cancellation.ts";

/** A variable's lock, as the graph sees it. */
export interface GraphLock {
  readonly id: number;
  readonly holder: LockHolder | undefined;
}

/**
 * The locks each holder waits for now: one lock, or a Set of several. Kept
 * here rather than on the holder, which is every process's LangL object: only
 * a contended lock ever adds an entry, and the entry goes when the wait ends,
 * so the objects every delay touches stay small. Weak, so that a process left
 * waiting forever (a stuck program abandoned by its test) is not kept alive.
 */
const waits = new WeakMap<LockHolder, GraphLock | Set<GraphLock>>();

/** Records that `holder` waits for `lock`. */
export function addLockWait(holder: LockHolder, lock: GraphLock): void {
  const current = waits.get(holder);
  if (current === undefined) waits.set(holder, lock);
  else if (current instanceof Set) current.add(lock);
  else waits.set(holder, new Set([current, lock]));
}

/** Records that `holder` no longer waits for `lock`. */
export function removeLockWait(holder: LockHolder, lock: GraphLock): void {
  const current = waits.get(holder);
  if (current === lock) waits.delete(holder);
  else if (current instanceof Set) {
    current.delete(lock);
    if (current.size === 0) waits.delete(holder);
  }
}

/** Whether `holder` waits for any lock now. */
function isWaiting(holder: LockHolder): boolean {
  return waits.has(holder);
}

/** The locks `holder` waits for now. */
export function lockWaitsOf(holder: LockHolder): GraphLock[] {
  const current = waits.get(holder);
  if (current === undefined) return [];
  return current instanceof Set ? [...current] : [current];
}

/**
 * A party that can hold and wait for variables' locks: a process's (or an
 * evalLang script's) LangL object, as the Cancellation it also is (no base
 * class of its own: each level is one more constructor per process, and a
 * slow one if it has fields). Its waits are kept in the graph's own table.
 */
export type LockHolder = Cancellation;

/** "process 3 (name)", or "an evalLang script". */
export function holderLabel(holder: LockHolder): string {
  if (holder.processId === 0) return "an evalLang script";
  return processLabel(holder.processId, holderName(holder));
}

/** One step of a cycle: `holder` waits for `lock`, held by the next step's holder. */
interface Step {
  readonly holder: LockHolder;
  readonly lock: GraphLock;
}

/**
 * The DeadlockError for `waiter` waiting for `lock`, if that wait would close a
 * cycle; else undefined.
 */
export function deadlockFor(waiter: LockHolder, lock: GraphLock): DeadlockError | undefined {
  const first = lock.holder;
  // The common case, allocation-free: the holder is running, not waiting.
  if (first === undefined || (first !== waiter && !isWaiting(first))) return undefined;
  const path: Step[] = [{ holder: waiter, lock }];
  if (first === waiter) return errorFor(path);
  const visited = new Set<LockHolder>([first]);
  // Depth first; a node's remaining locks are kept on an explicit stack so a
  // long chain of waiting processes cannot overflow the call stack.
  const pending: { holder: LockHolder; locks: GraphLock[]; depth: number }[] = [];
  pending.push({ holder: first, locks: lockWaitsOf(first), depth: 1 });
  while (pending.length > 0) {
    const top = pending[pending.length - 1];
    const next = top.locks.pop();
    if (next === undefined) {
      pending.pop();
      continue;
    }
    path.length = top.depth;
    path.push({ holder: top.holder, lock: next });
    const holder = next.holder;
    if (holder === waiter) return errorFor(path);
    if (holder === undefined || visited.has(holder)) continue;
    visited.add(holder);
    pending.push({ holder, locks: lockWaitsOf(holder), depth: top.depth + 1 });
  }
  return undefined;
}

function errorFor(path: Step[]): DeadlockError {
  const cycle = path.map(({ holder, lock }) => ({
    processId: holder.processId,
    varId: lock.id,
  }));
  const [closing, ...rest] = path;
  let message = `deadlock: ${
    holderLabel(closing.holder)
  } would wait for SharedVar ${closing.lock.id}`;
  for (const step of rest) {
    message += `, held by ${holderLabel(step.holder)}, which waits for SharedVar ${step.lock.id}`;
  }
  message += `, held by ${holderLabel(closing.holder)} itself. ` +
    "Its wait was refused; lock variables in one order (atomically([a, b], ...) does that)";
  return new DeadlockError(message, cycle);
}
