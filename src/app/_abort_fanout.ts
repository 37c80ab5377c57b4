// One abort listener per signal, however many queued forks wait with it or
// running processes were forked with it.
// Deno's EventTarget keeps a signal's listeners in a list that
// removeEventListener scans, so one listener per fork made aborting n queued
// forks that share a signal quadratic (10 000 took 0.7 s, 20 000 took 3.8 s):
// each withdrawn fork removed its own listener from a list of thousands. Here
// the forks of a signal sit in a Set (O(1) to join and to leave), and the one
// listener is removed when the last fork leaves, so none is left behind.

/** A queued fork that waits with a signal, or a process that runs with one. */
export interface AbortMember {
  /** The signal aborted while this member was still in its fan-out. */
  signalAborted(reason: unknown): void;
}

class Fanout {
  readonly members = new Set<AbortMember>();
  readonly onAbort: () => void;

  constructor(readonly signal: AbortSignal) {
    this.onAbort = () => {
      fanouts.delete(signal);
      // A once-listener is dropped when it fires; said here too, for wrappers
      // of the signal that count what was added and removed.
      signal.removeEventListener("abort", this.onAbort);
      // Members that leave while being told find no fan-out and do nothing.
      for (const member of this.members) member.signalAborted(signal.reason);
      this.members.clear();
    };
  }
}

// Keyed weakly: a signal nobody holds any more takes its fan-out with it.
const fanouts = new WeakMap<AbortSignal, Fanout>();

/** Tells `member` when `signal` aborts, until it leaves. The signal must not be aborted yet. */
export function joinAbort(signal: AbortSignal, member: AbortMember): void {
  let fanout = fanouts.get(signal);
  if (fanout === undefined) {
    fanout = new Fanout(signal);
    fanouts.set(signal, fanout);
    signal.addEventListener("abort", fanout.onAbort, { once: true });
  }
  fanout.members.add(member);
}

/** Stops telling `member`; the last member to leave removes the listener. */
export function leaveAbort(signal: AbortSignal, member: AbortMember): void {
  const fanout = fanouts.get(signal);
  if (fanout === undefined || !fanout.members.delete(member)) return;
  if (fanout.members.size === 0) {
    fanouts.delete(signal);
    signal.removeEventListener("abort", fanout.onAbort);
  }
}
