// A process's cancellation state, kept in the process's LangL object itself.
//
// Why there: a delay checks the reason and adds and removes a hook, so these
// fields are touched on every LangL operation. As the process record's own
// fields, or as a separate object the record also pointed at, 10 000
// processes x 100 virtual delays took 700-930 ms; held by the LangL object
// alone, 390-490 ms (measured interleaved, three rounds each). Most likely
// memory locality: the state then sits in the LangL object's cache lines
// instead of in an object the garbage collector places elsewhere.
//
// The fields are `#` fields of the LangL class itself, and the operations
// module functions rather than methods, so that a script, which holds its
// `lang`, can reach neither; `signal` is the one public member and is part of
// LangL. (A worker's LangL keeps just a reason and a signal: worker_lang.ts.)
// The AbortController behind it is created only when somebody asks for the
// signal: most processes never do.
import type { ProcessCancelledError } from "../errors.ts";

/**
 * Something pending that a cancellation must call off at once (a delay).
 * Cheaper than an abort listener per operation.
 */
export interface CancelHook {
  cancelled(reason: ProcessCancelledError): void;
}

/**
 * What few processes need: a name, the controller behind `signal`, and hooks
 * beyond the first. One field of every LangL object instead of three (each
 * process allocates one LangL object, so its fields are paid on every fork).
 */
export class RareCancellation {
  name: string | undefined = undefined;
  controller: AbortController | undefined = undefined;
  moreHooks: Set<CancelHook> | undefined = undefined;
}

/**
 * A process's LangL object, which holds its cancellation state in `#` fields
 * of its own class (LangInterpreter). Not in a base class: V8 builds an
 * instance slowly when a base class has fields to initialise, and `#` fields
 * always do; a LangInterpreter took 27-28 ns to build as a subclass of a
 * class holding these fields, 9-11 ns holding them itself (2 M in a loop;
 * BENCHMARKS.md, "forkAll after 8626bf8"). Also the lock holder of the lock
 * graph (_lock_graph.ts): the process's id and name.
 */
export interface Cancellation {
  /** The process id (0 for an evalLang script). */
  readonly processId: number;
  /** Aborted with the cancellation's reason once the process is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * Reads and writes of the state's fields, given once by the class that
 * holds them (holdCancellationState): only its own code can reach `#`
 * fields, and a script, which holds its `lang`, must reach none of them.
 */
export interface CancellationFields {
  reason(cancellation: Cancellation): ProcessCancelledError | undefined;
  setReason(cancellation: Cancellation, reason: ProcessCancelledError): void;
  /** A process usually has at most one pending delay: one slot, then a Set. */
  hook(cancellation: Cancellation): CancelHook | number | undefined;
  setHook(cancellation: Cancellation, hook: CancelHook | number | undefined): void;
  rare(cancellation: Cancellation): RareCancellation | undefined;
  setRare(cancellation: Cancellation, rare: RareCancellation): void;
}

let fields: CancellationFields;

/** Called once, by the class that holds the state. */
export function holdCancellationState(holder: CancellationFields): void {
  fields = holder;
}

/** The initial value of the state's rare part: none without a name. */
export function initialRare(name: string | undefined): RareCancellation | undefined {
  if (name === undefined) return undefined;
  const rare = new RareCancellation();
  rare.name = name;
  return rare;
}

function rareOf(cancellation: Cancellation): RareCancellation {
  let rare = fields.rare(cancellation);
  if (rare === undefined) fields.setRare(cancellation, rare = new RareCancellation());
  return rare;
}

/** The `signal` of a LangL object; its AbortController is made on the first ask. */
export function cancellationSignal(cancellation: Cancellation): AbortSignal {
  const rare = rareOf(cancellation);
  if (rare.controller === undefined) {
    rare.controller = new AbortController();
    const reason = fields.reason(cancellation);
    if (reason !== undefined) rare.controller.abort(reason);
  }
  return rare.controller.signal;
}

/** The error a cancelled process's operations reject with; undefined while not cancelled. */
export function cancellationReason(cancellation: Cancellation): ProcessCancelledError | undefined {
  return fields.reason(cancellation);
}

/** Requests cancellation and calls the hooks; false if it was already requested. */
export function requestCancellation(
  cancellation: Cancellation,
  reason: ProcessCancelledError,
): boolean {
  if (fields.reason(cancellation) !== undefined) return false;
  fields.setReason(cancellation, reason);
  const rare = fields.rare(cancellation);
  rare?.controller?.abort(reason);
  const first = fields.hook(cancellation);
  const hook = typeof first === "number" ? findPlaced(cancellation, first) : first;
  const more = rare?.moreHooks;
  fields.setHook(cancellation, undefined);
  if (more !== undefined) rare!.moreHooks = undefined;
  hook?.cancelled(reason);
  if (more !== undefined) { for (const other of more) other.cancelled(reason); }
  return true;
}

/** Calls `hook.cancelled` on cancellation, unless removed first. */
export function addCancelHook(cancellation: Cancellation, hook: CancelHook): void {
  if (fields.hook(cancellation) === undefined) fields.setHook(cancellation, hook);
  else (rareOf(cancellation).moreHooks ??= new Set()).add(hook);
}

/** Forgets a hook whose operation ended on its own (a delay that fired). */
export function removeCancelHook(cancellation: Cancellation, hook: CancelHook): void {
  if (fields.hook(cancellation) === hook) fields.setHook(cancellation, undefined);
  else fields.rare(cancellation)?.moreHooks?.delete(hook);
}

/**
 * Takes the hook's first slot by a number, a place from which `findPlaced`
 * finds the hook again (a delay's place on the virtual clock); false if the
 * slot is taken (then use addCancelHook). A LangL object lives long and is in
 * V8's old generation: writing it a pointer to each new delay cost about as
 * much as the rest of a virtual delay, writing it a small integer nothing.
 */
export function addPlacedHook(cancellation: Cancellation, place: number): boolean {
  if (fields.hook(cancellation) !== undefined) return false;
  fields.setHook(cancellation, place);
  return true;
}

/** Forgets a hook taken by addPlacedHook. */
export function removePlacedHook(cancellation: Cancellation, place: number): void {
  if (fields.hook(cancellation) === place) fields.setHook(cancellation, undefined);
}

let findPlaced: (cancellation: Cancellation, place: number) => CancelHook | undefined = () =>
  undefined;

/** How places given to addPlacedHook are turned back into hooks (the interpreter's delays). */
export function setPlacedHookFinder(
  find: (cancellation: Cancellation, place: number) => CancelHook | undefined,
): void {
  findPlaced = find;
}

/** The process's name, if it has one (a lock holder's, for its label). */
export function holderName(cancellation: Cancellation): string | undefined {
  return fields.rare(cancellation)?.name;
}

/** Throws the cancellation's reason if it was requested. */
export function throwIfCancelled(cancellation: Cancellation): void {
  const reason = cancellationReason(cancellation);
  if (reason !== undefined) throw reason;
}
