// Walking a sparse array (a[2 ** 27] = 1) by its length costs seconds, and
// near 2 ** 32 it hangs; the walks over values that cross to or from a
// worker switch to its own keys once they have met this many holes.

/** Holes a walk meets before it walks the array's own keys instead of its length. */
export const SPARSE_HOLES = 1024;

/**
 * The array's own element indices from `from` on, in order, read from its
 * own keys (the named keys after them are not indices and end the walk).
 */
export function* ownIndicesFrom(array: readonly unknown[], from: number): Generator<number> {
  for (const key of Object.keys(array)) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || String(index) !== key) return;
    if (index >= from) yield index;
  }
}

/**
 * Calls `f` with each own element index of `array`, in order: by its length,
 * and once it has met SPARSE_HOLES holes, by its own keys.
 */
export function forEachOwnIndex(array: readonly unknown[], f: (index: number) => void): void {
  let holes = 0;
  for (let i = 0; i < array.length; i++) {
    if (Object.hasOwn(array, i)) f(i);
    else if (++holes > SPARSE_HOLES) {
      for (const index of ownIndicesFrom(array, i + 1)) f(index);
      return;
    }
  }
}
