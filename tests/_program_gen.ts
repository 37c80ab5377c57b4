// The random programs of the interleaving properties: what a program is and
// the fast-check arbitraries that generate one.
import fc from "fast-check";

export type Op =
  | { k: "step" }
  | { k: "delay"; ms: number }
  | { k: "incr" }
  | { k: "transfer"; from: number; to: number; amount: number }
  | { k: "audit" }
  | { k: "io" };

/** A process body: its LangL ops, how it ends, whether it shrugs off cancellation. */
export interface BodySpec {
  ops: Op[];
  end: "return" | "throw";
  swallow: boolean;
  sync: boolean;
}

export interface ForkOpts {
  timeoutMs?: number;
  signal?: number;
}

export type Action =
  | { k: "fork"; body: BodySpec; wait: boolean; opts: ForkOpts }
  | { k: "try"; body: BodySpec; opts: ForkOpts }
  | { k: "all"; bodies: BodySpec[]; lazy: boolean; wait: boolean; opts: ForkOpts }
  | { k: "await"; target: number; timeoutMs?: number; signal?: number }
  | { k: "cancel"; target: number; dispose: boolean }
  | { k: "dispose" }
  | { k: "abort"; signal: number }
  | { k: "step" }
  | { k: "eval"; body: BodySpec }
  | { k: "throw" }
  | { k: "scope"; failFast: boolean; actions: Action[] };

export interface Program {
  max: number;
  policy: "fifo" | "backoff";
  seed: number;
  failFast: boolean;
  actions: Action[];
}

export const ACCOUNTS = 3;
export const SIGNALS = 2;

/** Relative weights of the action kinds; a property can favour some. */
export type Weights = Partial<Record<Action["k"], number>>;

const DEFAULT_WEIGHTS: Record<Action["k"], number> = {
  step: 4,
  fork: 12,
  try: 4,
  all: 4,
  await: 8,
  cancel: 4,
  abort: 2,
  dispose: 1,
  eval: 2,
  throw: 1,
  scope: 2,
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ k: "step" as const }),
  fc.record({ k: fc.constant("delay" as const), ms: fc.integer({ min: 0, max: 4 }) }),
  fc.constant({ k: "incr" as const }),
  fc.record({
    k: fc.constant("transfer" as const),
    from: fc.nat(ACCOUNTS - 1),
    to: fc.nat(ACCOUNTS - 1),
    amount: fc.integer({ min: 1, max: 9 }),
  }),
  fc.constant({ k: "audit" as const }),
  fc.constant({ k: "io" as const }),
);

export const bodyArb: fc.Arbitrary<BodySpec> = fc.record({
  ops: fc.array(opArb, { maxLength: 4 }),
  end: fc.oneof(
    { arbitrary: fc.constant("return" as const), weight: 2 },
    fc.constant("throw" as const),
  ),
  swallow: fc.boolean(),
  sync: fc.boolean(),
});

const optsArb: fc.Arbitrary<ForkOpts> = fc.record({
  timeoutMs: fc.integer({ min: 0, max: 6 }),
  signal: fc.nat(SIGNALS - 1),
}, { requiredKeys: [] });

export function programArb(weights: Weights = {}, size = 24): fc.Arbitrary<Program> {
  const w = (k: Action["k"]) => weights[k] ?? DEFAULT_WEIGHTS[k];
  const leaf: fc.Arbitrary<Action>[] = [];
  const weighted: { arbitrary: fc.Arbitrary<Action>; weight: number }[] = [];
  const add = (k: Action["k"], weight: number, arbitrary: fc.Arbitrary<Action>) => {
    if (weight > 0) weighted.push({ arbitrary, weight });
    if (k === "step") leaf.push(arbitrary);
  };
  const tree = fc.letrec<{ action: Action; actions: Action[] }>((tie) => {
    add("step", w("step"), fc.constant({ k: "step" }));
    add(
      "fork",
      w("fork"),
      fc.record({ k: fc.constant("fork"), body: bodyArb, wait: fc.boolean(), opts: optsArb }),
    );
    add("try", w("try"), fc.record({ k: fc.constant("try"), body: bodyArb, opts: optsArb }));
    add(
      "all",
      w("all"),
      fc.record({
        k: fc.constant("all"),
        bodies: fc.array(bodyArb, { minLength: 1, maxLength: 4 }),
        lazy: fc.boolean(),
        wait: fc.boolean(),
        opts: optsArb,
      }),
    );
    add(
      "await",
      w("await"),
      fc.record({
        k: fc.constant("await"),
        target: fc.nat(7),
        timeoutMs: fc.integer({ min: 0, max: 6 }),
        signal: fc.nat(SIGNALS - 1),
      }, { requiredKeys: ["k", "target"] }),
    );
    add(
      "cancel",
      w("cancel"),
      fc.record({ k: fc.constant("cancel"), target: fc.nat(7), dispose: fc.boolean() }),
    );
    add("dispose", w("dispose"), fc.constant({ k: "dispose" }));
    add(
      "abort",
      w("abort"),
      fc.record({ k: fc.constant("abort"), signal: fc.nat(SIGNALS - 1) }),
    );
    add("eval", w("eval"), fc.record({ k: fc.constant("eval"), body: bodyArb }));
    add("throw", w("throw"), fc.constant({ k: "throw" }));
    add(
      "scope",
      w("scope"),
      fc.record({
        k: fc.constant("scope"),
        failFast: fc.boolean(),
        actions: tie("actions") as fc.Arbitrary<Action[]>,
      }),
    );
    return {
      action: fc.oneof(
        { maxDepth: 2, depthIdentifier: "scope" },
        { arbitrary: leaf[0], weight: 1 },
        ...weighted,
      ),
      actions: fc.array(tie("action") as fc.Arbitrary<Action>, { maxLength: size, size: "medium" }),
    };
  });
  return fc.record({
    max: fc.integer({ min: 1, max: 5 }),
    policy: fc.constantFrom("fifo" as const, "backoff" as const),
    seed: fc.nat(),
    failFast: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, fc.constant(true)),
    actions: fc.array(tree.action, { minLength: 3, maxLength: size, size: "medium" }),
  });
}
