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
// Its operations are module functions rather than methods, so that a script,
// which holds its `lang`, cannot reach them; `signal` is the one public member
// and is part of LangL. The AbortController behind it is created only when
// somebody asks for the signal: most processes never do.
import type { ProcessCancelledError } from "../errors.ts";

/**
 * Something pending that a cancellation must call off at once (a delay).
 * Cheaper than an abort listener per operation.
 */
export interface CancelHook {
  cancelled(reason: ProcessCancelledError): void;
}

/** The error a cancelled process's operations reject with; undefined while not cancelled. */
export let cancellationReason: (cancellation: Cancellation) => ProcessCancelledError | undefined;

/** Requests cancellation and calls the hooks; false if it was already requested. */
export let requestCancellation: (
  cancellation: Cancellation,
  reason: ProcessCancelledError,
) => boolean;

/** Calls `hook.cancelled` on cancellation, unless removed first. */
export let addCancelHook: (cancellation: Cancellation, hook: CancelHook) => void;

/** Forgets a hook whose operation ended on its own (a delay that fired). */
export let removeCancelHook: (cancellation: Cancellation, hook: CancelHook) => void;

/**
 * Takes the hook's first slot by a number, a place from which `findPlaced`
 * finds the hook again (a delay's place on the virtual clock); false if the
 * slot is taken (then use addCancelHook). A LangL object lives long and is in
 * V8's old generation: writing it a pointer to each new delay cost about as
 * much as the rest of a virtual delay, writing it a small integer nothing.
 */
export let addPlacedHook: (cancellation: Cancellation, place: number) => boolean;

/** Forgets a hook taken by addPlacedHook. */
export let removePlacedHook: (cancellation: Cancellation, place: number) => void;

let findPlaced: (cancellation: Cancellation, place: number) => CancelHook | undefined = () =>
  undefined;

/** How places given to addPlacedHook are turned back into hooks (the interpreter's delays). */
export function setPlacedHookFinder(
  find: (cancellation: Cancellation, place: number) => CancelHook | undefined,
): void {
  findPlaced = find;
}

/**
 * What few processes need: a name, the controller behind `signal`, and hooks
 * beyond the first. One field of every LangL object instead of three (each
 * process allocates one LangL object, so its fields are paid on every fork).
 */
class RareCancellation {
  name: string | undefined = undefined;
  controller: AbortController | undefined = undefined;
  moreHooks: Set<CancelHook> | undefined = undefined;
}

/** The process's name, if it has one (a lock holder's, for its label). */
export let holderName: (cancellation: Cancellation) => string | undefined;

/**
 * Also the lock holder of the lock graph (_lock_graph.ts): the process's id
 * and name.
 */
export abstract class Cancellation {
  /** The process id (0 for an evalLang script). */
  abstract readonly processId: number;
  #reason: ProcessCancelledError | undefined = undefined;
  // A process usually has at most one pending delay: one slot, then a Set.
  // The slot holds a hook, or the place of one (addPlacedHook).
  #hook: CancelHook | number | undefined = undefined;
  #rare: RareCancellation | undefined = undefined;

  constructor(name: string | undefined) {
    if (name !== undefined) (this.#rare = new RareCancellation()).name = name;
  }

  /** Aborted with the cancellation's reason once the process is cancelled. */
  get signal(): AbortSignal {
    const rare = this.#rare ??= new RareCancellation();
    if (rare.controller === undefined) {
      rare.controller = new AbortController();
      if (this.#reason !== undefined) rare.controller.abort(this.#reason);
    }
    return rare.controller.signal;
  }

  static {
    holderName = (cancellation) => cancellation.#rare?.name;
    cancellationReason = (cancellation) => cancellation.#reason;

    requestCancellation = (cancellation, reason) => {
      if (cancellation.#reason !== undefined) return false;
      cancellation.#reason = reason;
      const rare = cancellation.#rare;
      rare?.controller?.abort(reason);
      const first = cancellation.#hook;
      const hook = typeof first === "number" ? findPlaced(cancellation, first) : first;
      const more = rare?.moreHooks;
      cancellation.#hook = undefined;
      if (more !== undefined) rare!.moreHooks = undefined;
      hook?.cancelled(reason);
      if (more !== undefined) { for (const other of more) other.cancelled(reason); }
      return true;
    };

    addCancelHook = (cancellation, hook) => {
      if (cancellation.#hook === undefined) cancellation.#hook = hook;
      else (((cancellation.#rare ??= new RareCancellation()).moreHooks) ??= new Set()).add(hook);
    };

    removeCancelHook = (cancellation, hook) => {
      if (cancellation.#hook === hook) cancellation.#hook = undefined;
      else cancellation.#rare?.moreHooks?.delete(hook);
    };

    addPlacedHook = (cancellation, place) => {
      if (cancellation.#hook !== undefined) return false;
      cancellation.#hook = place;
      return true;
    };

    removePlacedHook = (cancellation, place) => {
      if (cancellation.#hook === place) cancellation.#hook = undefined;
    };
  }
}

/** Throws the cancellation's reason if it was requested. */
export function throwIfCancelled(cancellation: Cancellation): void {
  const reason = cancellationReason(cancellation);
  if (reason !== undefined) throw reason;
}
