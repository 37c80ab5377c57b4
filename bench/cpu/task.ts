// The CPU-bound task of the "cpu" bench section: FNV-1a over a 64 KB buffer,
// `rounds` times. The same function runs inline, in procpool's workers and in
// the peers' worker threads.
const BUFFER = new Uint8Array(64 * 1024).map((_, i) => (i * 31) & 0xff);

export function hash(rounds: number): number {
  let h = 0x811c9dc5;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < BUFFER.length; i++) h = Math.imul(h ^ BUFFER[i], 0x01000193);
  }
  return h >>> 0;
}

/** procpool's worker entry: (input, lang). */
export function hashTask(rounds: number): number {
  return hash(rounds);
}

/** The tiny task: overhead only. */
export function tiny(n: number): number {
  return n + 1;
}

/** A script that spins until stopped by force. */
export function spin(): never {
  while (true) { /* runaway */ }
}

export default hash;
