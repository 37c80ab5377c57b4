// What a process, an awaitResult and a scope must have ended with, given what
// the run recorded (API.md points 4 and 5).
import {
  type AppL,
  ProcessCancelledError,
  ProcessFailedError,
  type ProcessHandle,
  ScopeClosedError,
} from "../mod.ts";
import { type Run, type ScopeModel, violate, type World } from "./_program_world.ts";

/** What the status of a stopped run must be (see API.md point 4). */
export function statusOf(run: Run): "succeeded" | "failed" | "cancelled" {
  // A body that threw before cancellation was requested failed, even if a
  // cancel arrived before procpool saw the throw.
  if (run.returned) return "succeeded";
  return run.requestedAtEnd ? "cancelled" : "failed";
}

/** An error the scope's own cancellation explains: ScopeClosedError with the reason. */
export function closedByScope(app: AppL, error: unknown): boolean {
  return error instanceof ScopeClosedError && app.signal.aborted &&
    error.cause === app.signal.reason;
}

/** Checks what awaitResult delivered against how the process ended. */
export function checkOutcome(
  w: World,
  sm: ScopeModel,
  h: ProcessHandle<unknown>,
  run: Run,
  got: { value?: unknown; error?: unknown },
): void {
  const who = `awaitResult(process ${h.id})`;
  if (h.status === "running") return violate(w, `${who} resumed while the process is running`);
  if (h.status !== statusOf(run)) {
    violate(w, `${who}: status ${h.status}, expected ${statusOf(run)}`);
  }
  if (!("error" in got)) {
    if (h.status !== "succeeded" || got.value !== run.value) {
      violate(w, `${who} resolved, status ${h.status}`);
    }
  } else if (got.error instanceof ProcessFailedError) {
    sm.observed.add(got.error.processId);
    if (h.status !== "failed" || got.error.cause !== run.thrown || got.error.processId !== h.id) {
      violate(w, `${who}: unexpected ${got.error.message} (status ${h.status})`);
    }
  } else if (got.error instanceof ProcessCancelledError) {
    if (h.status !== "cancelled" || got.error !== run.lang.signal.reason) {
      violate(w, `${who}: unexpected ${got.error.name} (status ${h.status})`);
    }
  } else violate(w, `${who} rejected with ${got.error}`);
}

/** Checks how a scope ended against API.md point 5. */
export function verifyScope(
  w: World,
  sm: ScopeModel,
  outcome: { value?: unknown; error?: unknown },
): void {
  const who = `scope ${sm.label}`;
  if (sm.runs.some((r) => !r.ended)) violate(w, `${who} ended before its processes stopped`);
  for (const g of sm.groups) {
    if (g.atReject !== undefined && g.runs.length > g.atReject) {
      violate(w, `${who}: forkAll started items after it rejected`);
    }
  }
  const failed = sm.runs.filter((r) => statusOf(r) === "failed");
  const ids = (errors: unknown[]) =>
    errors.map((e) => (e as ProcessFailedError).processId).sort().join();
  const error = outcome.error;
  if (sm.failFast && failed.length > 0) {
    if (!(error instanceof ProcessFailedError && failed.some((r) => r.id === error.processId))) {
      violate(w, `${who} (failFast, ${failed.length} failed) ended with ${error ?? "a value"}`);
    }
    return;
  }
  if (sm.bodyError !== undefined) {
    if (error !== sm.bodyError) {
      violate(w, `${who}: its body threw, it ended with ${error ?? "a value"}`);
    }
    return;
  }
  const unobserved = failed.filter((r) => !sm.observed.has(r.id));
  const expected = unobserved.map((r) => r.id).sort().join();
  if (unobserved.length === 0) {
    if (outcome.value !== sm.token) {
      violate(w, `${who} should have returned its value, got ${error}`);
    }
  } else if (unobserved.length === 1) {
    if (!(error instanceof ProcessFailedError) || ids([error]) !== expected) {
      violate(
        w,
        `${who} should reject with process ${expected}'s failure, got ${error ?? "a value"}`,
      );
    }
  } else if (!(error instanceof AggregateError) || ids(error.errors) !== expected) {
    violate(w, `${who} should reject with failures ${expected}, got ${error ?? "a value"}`);
  }
}
