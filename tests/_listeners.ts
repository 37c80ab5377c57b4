// Counts the abort listeners a signal holds, so tests can check that
// procpool removes every listener it adds.

/**
 * Wraps `signal` and returns the set of its abort listeners registered and
 * not removed yet. With `clearOnAbort`, an abort empties the set, as the
 * platform drops once-listeners when it fires them.
 */
export function trackListeners(signal: AbortSignal, clearOnAbort = false): Set<unknown> {
  const live = new Set<unknown>();
  // Registered first, so it runs first.
  if (clearOnAbort) signal.addEventListener("abort", () => live.clear());
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  Object.assign(signal, {
    addEventListener(type: string, listener: EventListener, options?: AddEventListenerOptions) {
      if (type === "abort") live.add(listener);
      add(type, listener, options);
    },
    removeEventListener(type: string, listener: EventListener, options?: EventListenerOptions) {
      if (type === "abort") live.delete(listener);
      remove(type, listener, options);
    },
  });
  return live;
}
