// Validation of RuntimeOptions at the constructor. User-supplied services (a
// clock, a logger) are checked for their shape here, once, so that a missing
// method is a TypeError at `new Runtime` rather than a crash in the middle of
// some later fork.
import {
  received,
  requireNumber,
  requireObject,
  requirePositiveInteger,
  show,
} from "../_validate.ts";
import type { Clock } from "./clock.ts";
import type { RuntimeLogger, RuntimeOptions } from "./options.ts";
import { isWaitPolicy } from "./wait_policy.ts";
import { TimelineRecorder } from "./timeline.ts";
import { backendOf } from "./shared/shared_capacity.ts";

const LOGGER_METHODS = ["isEnabledFor", "debug", "info", "warn", "error"] as const;

export function checkRuntimeOptions(options: RuntimeOptions): void {
  requireObject("Runtime options", options);
  const { maxProcesses, wait, clock, seed, logger, recorder, workers, shared } = options;
  requirePositiveInteger("maxProcesses", maxProcesses);
  if (workers !== undefined) requirePositiveInteger("workers", workers);
  if (wait !== undefined && !isWaitPolicy(wait)) {
    throw new TypeError(`wait must be made by fifo() or backoff(), got ${received(wait)}`);
  }
  if (clock !== undefined) checkClock(clock);
  if (seed !== undefined) checkSeed(seed);
  if (logger !== undefined) checkLogger(logger);
  if (recorder !== undefined && !(recorder instanceof TimelineRecorder)) {
    throw new TypeError(`recorder must be a TimelineRecorder, got ${received(recorder)}`);
  }
  if (shared !== undefined && backendOf(shared) === undefined) {
    throw new TypeError(
      `shared must be made by redisCapacity() from "@procpool/procpool/redis", got ${
        received(shared)
      }`,
    );
  }
}

function checkClock(clock: Clock): void {
  if (
    clock === null || typeof clock !== "object" || typeof clock.now !== "function" ||
    typeof clock.sleep !== "function"
  ) {
    throw new TypeError(
      `clock must be an object with now() and sleep(ms, signal), got ${received(clock)}`,
    );
  }
}

/**
 * Only safe integers: each one seeds different streams (see random.ts), while
 * a fraction or a number past 2^53 would have to be rounded onto another seed.
 */
function checkSeed(seed: number): void {
  requireNumber("seed", seed);
  if (!Number.isSafeInteger(seed)) {
    throw new RangeError(
      `seed must be a safe integer (at most 2^53 - 1 in magnitude), got ${show(seed)}`,
    );
  }
}

function checkLogger(logger: RuntimeLogger): void {
  if (logger === null || typeof logger !== "object") {
    throw new TypeError(`logger must be a LogTape Logger, got ${received(logger)}`);
  }
  const missing = LOGGER_METHODS.filter((method) => typeof logger[method] !== "function");
  if (missing.length > 0) {
    throw new TypeError(
      `logger must be a LogTape Logger with methods ${LOGGER_METHODS.join(", ")}; ` +
        `got an object without ${missing.join(", ")}`,
    );
  }
}
