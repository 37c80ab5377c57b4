/**
 * The named errors procpool reports. Each one says what happened and, where it
 * helps, what to do instead.
 *
 * @module
 */
export {
  AwaitTimeoutError,
  ProcessCancelledError,
  ProcessFailedError,
  ProcessTimeoutError,
  WorkerCrashedError,
} from "./errors/process.ts";
export { NestedForkError, RuntimeDisposedError, ScopeClosedError } from "./errors/usage.ts";
export { CapacityMismatchError, LeaseLostError } from "./errors/shared_capacity.ts";
export { DeadlockError } from "./errors/deadlock.ts";
