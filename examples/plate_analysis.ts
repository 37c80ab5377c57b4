/**
 * The astronomer's photographic plates, analysed in worker scripts: the
 * CPU-bound part of the observatory. Each plate (a grey-scale image) is
 * smoothed, its stars counted and the result fingerprinted; the same work
 * runs in worker threads through `app.forkWorker` (see
 * `plate_analysis_main.ts`), or on the runtime's own thread.
 *
 * @module
 */
import type { LangL } from "../mod.ts";

/** One plate: `size`×`size` pixels, one byte each. */
export interface Plate {
  readonly id: number;
  readonly size: number;
  readonly pixels: Uint8Array;
}

/** What the analysis finds on a plate. */
export interface PlateReport {
  readonly id: number;
  readonly stars: number;
  readonly fingerprint: number;
}

/** A plate of noise with a few bright stars, the same for the same id. */
export function exposePlate(id: number, size: number): Plate {
  const pixels = new Uint8Array(size * size);
  let state = (id * 2654435761) >>> 0 || 1;
  for (let i = 0; i < pixels.length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    pixels[i] = (state & 0xff) < 2 ? 255 : (state >>> 8) & 0x3f;
  }
  return { id, size, pixels };
}

/** Pure CPU work: `passes` 3×3 box blurs, a star count and an FNV-1a fingerprint. */
export function analyse(plate: Plate, passes: number): PlateReport {
  const { size } = plate;
  let source = plate.pixels.slice(); // the blur writes into both buffers
  let target = new Uint8Array(source.length);
  for (let pass = 0; pass < passes; pass++) {
    for (let y = 1; y < size - 1; y++) {
      for (let x = 1; x < size - 1; x++) {
        let sum = 0;
        for (let dy = -1; dy <= 1; dy++) {
          const row = (y + dy) * size + x;
          sum += source[row - 1] + source[row] + source[row + 1];
        }
        target[y * size + x] = (sum / 9) | 0;
      }
    }
    [source, target] = [target, source];
  }
  let stars = 0;
  let fingerprint = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    if (source[i] > 40) stars++;
    fingerprint = Math.imul(fingerprint ^ source[i], 0x01000193) >>> 0;
  }
  return { id: plate.id, stars, fingerprint };
}

/** The worker script: `forkWorker(url, { plate, passes }, { export: "analysePlate" })`. */
export function analysePlate(
  input: { plate: Plate; passes: number },
  lang: LangL,
): PlateReport {
  const report = analyse(input.plate, input.passes);
  lang.logDebug("plate {id}: {stars} stars", { id: report.id, stars: report.stars });
  return report;
}
