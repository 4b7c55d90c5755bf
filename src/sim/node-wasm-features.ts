/**
 * WebAssembly features the core's kernels use that Node 20 has only behind a V8 flag: relaxed SIMD (its fused
 * multiply-add makes the sparse Cholesky's dense kernel 15-40 % faster, see math/dense-kernel.ts). Browsers since
 * 2023 and Node 22 run it as they are. Importing this module turns the flag on when the kernel's module with
 * fused multiply-adds does not validate, before any kernel is compiled; the library's and the command line's entry
 * points do. It changes nothing where the feature is already on, or where the engine does not know the flag.
 */
import { setFlagsFromString } from 'node:v8';
import { fusedKernelValidates } from '../math/dense-kernel.js';

if (!fusedKernelValidates()) setFlagsFromString('--experimental-wasm-relaxed-simd');
