// Seeded random streams. The generator is pure-rand's xoroshiro128+ (small,
// fast, well tested). Each stream's 128-bit state is derived from
// (seed, stream id) by an invertible function, so distinct pairs can never
// share a state: process N draws the same numbers whatever order the
// scheduler ran the processes in, and two different seeds never draw alike.
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

const TWO_32 = 0x1_0000_0000;
/** Round keys of the two Feistel permutations: seed half, then stream half. */
const SEED_KEYS = [0x9e3779b9, 0x7f4a7c15, 0xf39cc060, 0x5ced1cb1];
const STREAM_KEYS = [0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1];

/** A safe integer's 64-bit two's complement, as [low, high] 32-bit words. */
function words64(value: number): [number, number] {
  return [value >>> 0, Math.floor(value / TWO_32) >>> 0];
}

/** A four-round Feistel network over 64 bits: a bijection, mixing both halves. */
function permute(lo: number, hi: number, keys: readonly number[]): [number, number] {
  for (const key of keys) [lo, hi] = [hi, (lo ^ fmix32(hi ^ key)) >>> 0];
  return [lo, hi];
}

function unpermute(lo: number, hi: number, keys: readonly number[]): [number, number] {
  for (let r = keys.length - 1; r >= 0; r--) [lo, hi] = [(hi ^ fmix32(lo ^ keys[r])) >>> 0, lo];
  return [lo, hi];
}

/**
 * The generator state for (seed, stream id): `a = P(seed)` and
 * `b = Q(streamId ^ a)`, for two permutations P and Q. Given (a, b), the seed
 * is P⁻¹(a) and the stream id Q⁻¹(b) ^ a, so the map is injective (see
 * {@linkcode seedOfState}). It is never all zero, as xoroshiro requires:
 * `a` is zero only for P⁻¹(0), which is not a safe integer (tested).
 */
export function stateFor(seed: number, streamId: number): number[] {
  const [a0, a1] = permute(...words64(seed), SEED_KEYS);
  const [i0, i1] = words64(streamId);
  const [b0, b1] = permute(i0 ^ a0, i1 ^ a1, STREAM_KEYS);
  return [a0 | 0, a1 | 0, b0 | 0, b1 | 0];
}

/** The inverse of {@linkcode stateFor}, as 64-bit words: [seed lo, seed hi, id lo, id hi]. */
export function seedOfState(state: readonly number[]): number[] {
  const [a0, a1, b0, b1] = state.map((word) => word >>> 0);
  const [s0, s1] = unpermute(a0, a1, SEED_KEYS);
  const [x0, x1] = unpermute(b0, b1, STREAM_KEYS);
  return [s0, s1, (x0 ^ a0) >>> 0, (x1 ^ a1) >>> 0];
}

/** One independent stream of random numbers. */
export class RandomStream {
  readonly #generator: Generator;

  /** `seed` and `streamId` are safe integers (validated at the boundary). */
  constructor(seed: number, streamId: number) {
    this.#generator = xoroshiro128plusFromState(stateFor(seed, streamId));
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
