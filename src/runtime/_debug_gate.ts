// Whether the runtime's logger takes debug records, asked once per process.
//
// LogTape's `isEnabledFor` walks the category tree and reads its
// context-local storage on every call; at one call per process start it was
// measured as the largest single cost of a fifo hand-off after the guard (the
// hand-off p99 fell from 120-255 µs to 50-130 µs without it). Its answer can
// change only when LogTape is configured again (`configure()` and `reset()`
// replace the object `getConfig()` returns), or with the async context when a
// configuration has `contextLocalStorage` (scoped configs, category
// prefixes). So for a genuine LogTape logger under a configuration without
// context-local storage (its own, or another LogTape copy's on the shared
// logger tree), the answer is kept until `getConfig()` changes; any
// other logger is asked every time. (A configuration object changed in place
// and passed to `configure()` again keeps its identity and is not noticed;
// the README says so.)
import { getConfig, getLogger } from "@logtape/logtape";
import type { RuntimeLogger } from "./options.ts";

/** LogTape's own `isEnabledFor` implementations (a plain logger and a `with()` one). */
const LOGTAPE_CHECKS: ReadonlySet<unknown> = new Set([
  getLogger([]).isEnabledFor,
  getLogger([]).with({}).isEnabledFor,
]);

const NOT_ASKED = Symbol("not asked");

export class DebugGate {
  readonly #logger: RuntimeLogger;
  readonly #cacheable: boolean;
  #config: unknown = NOT_ASKED;
  #enabled = false;

  constructor(logger: RuntimeLogger) {
    this.#logger = logger;
    this.#cacheable = LOGTAPE_CHECKS.has(logger.isEnabledFor);
    // Asked once now (LogTape's check has no side effect), so that the first
    // process of each runtime finds the answer kept: asked by the first fork,
    // in admission code V8 had optimised without that path, the first ask
    // deoptimised the admission at every new runtime (a benchmark's run).
    this.refresh();
  }

  /**
   * Asks again, whatever is kept: called when the runtime is made and at
   * every `runApp`, outside any process's path. An application can configure
   * through another copy of LogTape than procpool's (an app's
   * LogTape from JSR next to procpool's npm one): the logger tree is
   * shared, so `isEnabledFor` follows it, but `getConfig()` here does not.
   */
  refresh(): void {
    if (this.#cacheable) this.#ask(getConfig());
  }

  /** `logger.isEnabledFor("debug")`, answered from the last call when it cannot have changed. */
  enabled(): boolean {
    if (!this.#cacheable) return this.#logger.isEnabledFor("debug");
    const config = getConfig();
    return config === this.#config ? this.#enabled : this.#ask(config);
  }

  #ask(config: ReturnType<typeof getConfig>): boolean {
    const enabled = this.#logger.isEnabledFor("debug");
    // Another copy's configuration is not in `config`, but its
    // `contextLocalStorage` is on the shared tree's root.
    const contextFree = (config === null || config.contextLocalStorage === undefined) &&
      (getLogger([]) as { contextLocalStorage?: unknown }).contextLocalStorage === undefined;
    this.#config = contextFree ? config : NOT_ASKED;
    this.#enabled = enabled;
    return enabled;
  }
}
