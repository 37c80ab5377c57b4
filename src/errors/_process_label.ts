// How every message names a process, in one place so that errors, the lock
// graph and the stuck report agree.

/** "process 3", or "process 3 (name)" for a named one. */
export function processLabel(processId: number, name: string | undefined): string {
  return name === undefined ? `process ${processId}` : `process ${processId} (${name})`;
}
