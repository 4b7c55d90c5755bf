/**
 * WebAssembly features the core's kernels use that Node 20 has only behind a V8 flag: relaxed SIMD (its fused
 * multiply-add makes the sparse Cholesky's dense kernel 15-40 % faster, see math/dense-kernel.ts). Browsers since
 * 2023 and Node 22 run it as they are. Importing this module turns the flag on where the engine has relaxed SIMD
 * but does not enable it, before any kernel is compiled; the library's and the command line's entry points do. It
 * changes nothing where the feature is already on, or where the engine does not know the flag.
 */
import { setFlagsFromString } from 'node:v8';

/** A module with one function that uses f64x2.relaxed_madd: valid only where relaxed SIMD is on. */
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x06, 0x01, 0x60, 0x01, 0x7b, 0x01, 0x7b, // type: (v128) -> v128
  0x03, 0x02, 0x01, 0x00, // one function of that type
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x00, 0x20, 0x00, 0xfd, 0x87, 0x02, 0x0b, // madd(x, x, x)
]);

/** True when the engine validates relaxed SIMD. */
export function relaxedSimdEnabled(): boolean {
  return typeof WebAssembly !== 'undefined' && WebAssembly.validate(RELAXED_SIMD_PROBE);
}

if (!relaxedSimdEnabled()) setFlagsFromString('--experimental-wasm-relaxed-simd');
