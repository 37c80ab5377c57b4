// Seeded random streams. The generator is pure-rand's xoroshiro128+ (small,
// fast, well tested); each stream's 128-bit state is derived from
// (seed, stream id) with murmur3's 32-bit finaliser, so process N draws the
// same numbers whatever order the scheduler ran the processes in.
import { xoroshiro128plusFromState } from "pure-rand/xoroshiro128plus";
import { uniformInt } from "pure-rand/uniform-int";
import { uniformFloat64 } from "pure-rand/uniform-float64";

type Generator = ReturnType<typeof xoroshiro128plusFromState>;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** One independent stream of random numbers. */
export class RandomStream {
  readonly #generator: Generator;

  constructor(seed: number, streamId: number) {
    // Split both numbers into 32-bit halves so that large seeds and ids
    // still give distinct states.
    const seedLo = seed >>> 0, seedHi = Math.floor(seed / 0x1_0000_0000) >>> 0;
    const idLo = streamId >>> 0, idHi = Math.floor(streamId / 0x1_0000_0000) >>> 0;
    let h = fmix32(seedLo ^ 0x9e3779b9);
    const words: number[] = [];
    for (const part of [seedHi, idLo, idHi, 0x5bd1e995]) {
      h = fmix32(h ^ part ^ Math.imul(words.length + 1, 0x27d4eb2d));
      words.push(h | 0);
    }
    // xoroshiro must not start from the all-zero state.
    if (!words.some((w) => w !== 0)) words[0] = 1;
    this.#generator = xoroshiro128plusFromState(words);
  }

  /** A float in [0, 1). */
  next(): number {
    return uniformFloat64(this.#generator);
  }

  /** An integer in [min, max], both inclusive; bounds already validated. */
  int(min: number, max: number): number {
    return uniformInt(this.#generator, min, max);
  }
}

/** A seed for a runtime that was given none. */
export function randomSeed(): number {
  const words = crypto.getRandomValues(new Uint32Array(2));
  // 53 bits: a safe integer, so it can be printed and passed back as `seed`.
  return (words[0] & 0x1f_ffff) * 0x1_0000_0000 + words[1];
}
