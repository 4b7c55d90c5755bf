/**
 * The dense inner kernel of the supernodal Cholesky: C -= A B^T on rows of one row-major buffer.
 *
 * Nearly all flops of a sparse Cholesky on a 3D mesh happen in dense frontal matrices, so their speed sets the
 * factorization time (supernodal dense kernels are what make CHOLMOD 3-10x faster than a
 * column-by-column code, measured on the same matrices). Plain JS register-blocked loops reach about 2-2.5 GFlop/s here; the same 4x2 tile
 * in WebAssembly SIMD (f64x2) reaches about 6-8 GFlop/s, so the kernel is a tiny WebAssembly module written
 * byte by byte below (no toolchain needed), with the JS loops as a fallback where WebAssembly SIMD is missing.
 * The module also does the other loops of the factorization and solve that touch every entry: the multifrontal
 * extend-add (an indexed scatter), the column scaling of the panel factorization, and the triangular solves and
 * scattering / gathering mat-vecs of the forward and backward substitutions. All data lives in the module's memory: callers keep their dense arrays in `data` and their
 * index maps in `ints`, and take both again after `allocate`, since growing replaces them.
 *
 * Where the engine has WebAssembly's relaxed SIMD (browsers since 2023, Node 22; Node 20 behind a flag that
 * sim/node-wasm-features.ts sets), the update's products and sums are fused multiply-adds: 15-40 % more GFlop/s on
 * this machine's cores (AMD EPYC, FMA3). Relaxed SIMD lets an engine round a * b + c once (fused) or twice, as its
 * hardware does, so a factor may differ in its last bits between machines; on one machine it is always the same.
 */

/** The dense kernels, fastest first: WebAssembly SIMD with fused multiply-adds (relaxed SIMD), without, plain JS. */
export const DENSE_KERNEL_KINDS = ['wasm-simd-fma', 'wasm-simd', 'js'] as const;
export type DenseKernelKind = (typeof DENSE_KERNEL_KINDS)[number];

export interface DenseKernel {
  readonly kind: DenseKernelKind;
  /** Dense work memory (valid until the next `allocate`). */
  readonly data: Float64Array;
  /** Integer work memory, for index maps the kernels read (valid until the next `allocate`). */
  readonly ints: Int32Array;
  /** Sizes `ints` and `data` to at least the given lengths; contents are lost when they grow. */
  allocate(ints: number, doubles: number): void;
  /**
   * For i < nr, j < nc: data[c + i*sc + j] -= sum_{q < p} data[a + i*sab + q] * data[b + j*sab + q].
   * Offsets and strides in doubles; A and B rows share the stride sab, C has its own stride sc.
   */
  update(a: number, b: number, c: number, sab: number, sc: number, p: number, nr: number, nc: number): void;
  /**
   * Multifrontal extend-add of a child's update matrix (rc x rc at `src`, lower triangle read) into its parent's
   * front: entry (a, b), b <= a, lands on local row ra = ints[rel + a] and column cb = ints[rel + b], that is on
   * data[panel + ra*k + cb] when cb < k (the panel, stride k) or else on data[upd + (ra-k)*r + cb-k] (the
   * parent's own r x r update matrix). Indices come in node triples: rc and k are multiples of 3, and
   * ints[rel + 3t + 1] and ints[rel + 3t + 2] follow ints[rel + 3t].
   */
  extendAdd(src: number, rc: number, rel: number, panel: number, upd: number, k: number, r: number): void;
  /** The same memory as `data` seen as float32 (valid until the next `allocate`): a compact copy of a factor. */
  readonly floats: Float32Array;
  /** floats[to + i] = data[from + i] for i < count, rounded (the ranges must not overlap). */
  toFloats(from: number, count: number, to: number): void;
  // The solve kernels read the factor L from `data`, or with single = true from `floats` (l and a then index
  // floats); vectors are always data, and sums are formed in float64.
  /**
   * Forward substitution with the lower triangle of a k x k row-major block (stride k) at l: y = L^-1 y, y being
   * data[y ... y + k).
   */
  triangularSolve(l: number, k: number, y: number, single?: boolean): void;
  /** Backward substitution with the same block transposed: y = L^-T y. */
  triangularSolveTransposed(l: number, k: number, y: number, single?: boolean): void;
  /**
   * For i < nr: data[y + ints[idx + i]] -= sum_{q < nc} A[a + i*sa + q] * data[x + q]  (a mat-vec whose rows
   * land on scattered entries: the forward solve's update of the rows below a supernode).
   */
  gemvScatter(a: number, sa: number, x: number, nr: number, nc: number, y: number, idx: number, single?: boolean): void;
  /**
   * For q < nc: data[out + q] -= sum_{i < nr} A[a + i*sa + q] * data[y + ints[idx + i]]  (a transposed mat-vec
   * on gathered entries: the backward solve's update from the rows below a supernode).
   */
  gatherGemvTransposed(a: number, sa: number, y: number, idx: number, nr: number, nc: number, out: number, single?: boolean): void;
  /** data[x + i*stride] *= factor for i < count (a column of a row-major panel). */
  scaleStrided(x: number, stride: number, count: number, factor: number): void;
  /**
   * Finishes two adjacent columns of a Cholesky panel below their 2x2 diagonal block: for i < count, with
   * o = x + i*stride: data[o] *= inv0, then data[o+1] = (data[o+1] - data[o] * l10) * inv1.
   */
  finishColumnPair(x: number, stride: number, count: number, inv0: number, l10: number, inv1: number): void;
}

/**
 * Creates the fastest kernel this engine runs, or one of the given kind (tests and benchmarks compare them), or
 * null when the engine lacks that kind.
 */
export function createDenseKernel(): DenseKernel;
export function createDenseKernel(kind: DenseKernelKind): DenseKernel | null;
export function createDenseKernel(kind?: DenseKernelKind): DenseKernel | null {
  if (kind === 'js') return new JsKernel();
  if (kind !== undefined) return tryCreateWasmKernel(kind === 'wasm-simd-fma');
  return tryCreateWasmKernel(true) ?? tryCreateWasmKernel(false) ?? new JsKernel();
}

// ---------------------------------------------------------------------------------------------------------------
// JS fallback

class JsKernel implements DenseKernel {
  readonly kind = 'js' as const;
  data = new Float64Array(1024);
  ints = new Int32Array(1024);

  allocate(ints: number, doubles: number): void {
    if (this.ints.length < ints) this.ints = new Int32Array(ints);
    if (this.data.length < doubles) this.data = new Float64Array(doubles);
  }

  update(a: number, b: number, c: number, sab: number, sc: number, p: number, nr: number, nc: number): void {
    const F = this.data;
    const ncEven = nc & ~1;
    const nr4 = nr & ~3;
    for (let i = 0; i < nr4; i += 4) {
      const a0 = a + i * sab;
      const a1 = a0 + sab;
      const a2 = a1 + sab;
      const a3 = a2 + sab;
      const c0 = c + i * sc;
      for (let j = 0; j < ncEven; j += 2) {
        const b0 = b + j * sab;
        const b1 = b0 + sab;
        let s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0, s30 = 0, s31 = 0;
        for (let q = 0; q < p; q++) {
          const x0 = F[b0 + q];
          const x1 = F[b1 + q];
          const y0 = F[a0 + q];
          s00 += y0 * x0;
          s01 += y0 * x1;
          const y1 = F[a1 + q];
          s10 += y1 * x0;
          s11 += y1 * x1;
          const y2 = F[a2 + q];
          s20 += y2 * x0;
          s21 += y2 * x1;
          const y3 = F[a3 + q];
          s30 += y3 * x0;
          s31 += y3 * x1;
        }
        const o = c0 + j;
        F[o] -= s00;
        F[o + 1] -= s01;
        F[o + sc] -= s10;
        F[o + sc + 1] -= s11;
        F[o + 2 * sc] -= s20;
        F[o + 2 * sc + 1] -= s21;
        F[o + 3 * sc] -= s30;
        F[o + 3 * sc + 1] -= s31;
      }
      for (let j = ncEven; j < nc; j++) {
        const b0 = b + j * sab;
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (let q = 0; q < p; q++) {
          const x0 = F[b0 + q];
          s0 += F[a0 + q] * x0;
          s1 += F[a1 + q] * x0;
          s2 += F[a2 + q] * x0;
          s3 += F[a3 + q] * x0;
        }
        const o = c0 + j;
        F[o] -= s0;
        F[o + sc] -= s1;
        F[o + 2 * sc] -= s2;
        F[o + 3 * sc] -= s3;
      }
    }
    for (let i = nr4; i < nr; i++) {
      const a0 = a + i * sab;
      const c0 = c + i * sc;
      for (let j = 0; j < nc; j++) {
        const b0 = b + j * sab;
        let s0 = 0;
        for (let q = 0; q < p; q++) s0 += F[a0 + q] * F[b0 + q];
        F[c0 + j] -= s0;
      }
    }
  }

  extendAdd(src: number, rc: number, rel: number, panel: number, upd: number, k: number, r: number): void {
    const D = this.data;
    const R = this.ints;
    for (let a = 0; a < rc; a++) {
      const ra = R[rel + a];
      const rowP = panel + ra * k;
      const rowU = upd + (ra - k) * r - k;
      const from = src + a * rc;
      for (let b = 0; b <= a; b++) {
        const cb = R[rel + b];
        D[(cb < k ? rowP : rowU) + cb] += D[from + b];
      }
    }
  }

  get floats(): Float32Array {
    return new Float32Array(this.data.buffer, this.data.byteOffset, 2 * this.data.length);
  }

  toFloats(from: number, count: number, to: number): void {
    const D = this.data;
    const F = this.floats;
    for (let i = 0; i < count; i++) F[to + i] = D[from + i];
  }

  triangularSolve(l: number, k: number, y: number, single = false): void {
    const L = single ? this.floats : this.data;
    const D = this.data;
    for (let j = 0; j < k; j++) {
      const row = l + j * k;
      let sum = D[y + j];
      for (let q = 0; q < j; q++) sum -= L[row + q] * D[y + q];
      D[y + j] = sum / L[row + j];
    }
  }

  triangularSolveTransposed(l: number, k: number, y: number, single = false): void {
    const L = single ? this.floats : this.data;
    const D = this.data;
    for (let j = k - 1; j >= 0; j--) {
      const row = l + j * k;
      const yj = D[y + j] / L[row + j];
      D[y + j] = yj;
      for (let q = 0; q < j; q++) D[y + q] -= L[row + q] * yj;
    }
  }

  gemvScatter(a: number, sa: number, x: number, nr: number, nc: number, y: number, idx: number, single = false): void {
    const L = single ? this.floats : this.data;
    const D = this.data;
    const R = this.ints;
    for (let i = 0; i < nr; i++) {
      const row = a + i * sa;
      let sum = 0;
      for (let q = 0; q < nc; q++) sum += L[row + q] * D[x + q];
      D[y + R[idx + i]] -= sum;
    }
  }

  gatherGemvTransposed(a: number, sa: number, y: number, idx: number, nr: number, nc: number, out: number, single = false): void {
    const L = single ? this.floats : this.data;
    const D = this.data;
    const R = this.ints;
    for (let i = 0; i < nr; i++) {
      const gi = D[y + R[idx + i]];
      const row = a + i * sa;
      for (let q = 0; q < nc; q++) D[out + q] -= L[row + q] * gi;
    }
  }

  scaleStrided(x: number, stride: number, count: number, factor: number): void {
    const D = this.data;
    for (let i = 0, o = x; i < count; i++, o += stride) D[o] *= factor;
  }

  finishColumnPair(x: number, stride: number, count: number, inv0: number, l10: number, inv1: number): void {
    const D = this.data;
    for (let i = 0, o = x; i < count; i++, o += stride) {
      const a = D[o] * inv0;
      D[o] = a;
      D[o + 1] = (D[o + 1] - a * l10) * inv1;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// WebAssembly SIMD kernel, assembled here

type WasmTile = (a: number, b: number, c: number, sab: number, sc: number, p: number, nr: number, nc: number) => void;

type SolveFunction = (l: number, k: number, sk: number, y: number) => void;
type DemoteFunction = (src: number, count: number, dst: number) => void;
type ScatterFunction = (a: number, sa: number, b: number, c: number, d: number, e: number, f: number) => void;

interface WasmExports {
  t42: WasmTile;
  t41: WasmTile;
  t12: WasmTile;
  t11: WasmTile;
  extendAdd: (src: number, rc: number, rel: number, panel: number, upd: number, k: number, r: number) => void;
  trsv: SolveFunction;
  trsvT: SolveFunction;
  gemvScatter: ScatterFunction;
  gatherGemvT: ScatterFunction;
  trsv32: SolveFunction;
  trsvT32: SolveFunction;
  gemvScatter32: ScatterFunction;
  gatherGemvT32: ScatterFunction;
  demote: DemoteFunction;
  scale: (x: number, stride: number, count: number, factor: number) => void;
  pair: (x: number, stride: number, count: number, inv0: number, l10: number, inv1: number) => void;
}

const MAX_BYTES = 4 * 1024 ** 3 - 65536;

class WasmKernel implements DenseKernel {
  data: Float64Array;
  ints: Int32Array;
  floats: Float32Array;
  /** Byte address of data[0]: the ints come first. */
  private base = 0;

  constructor(
    readonly kind: 'wasm-simd-fma' | 'wasm-simd',
    private readonly memory: WebAssembly.Memory,
    private readonly fn: WasmExports,
  ) {
    this.ints = new Int32Array(memory.buffer, 0, 0);
    this.data = new Float64Array(memory.buffer, 0);
    this.floats = new Float32Array(memory.buffer, 0);
  }

  allocate(ints: number, doubles: number): void {
    const base = Math.ceil((4 * Math.max(ints, this.ints.length)) / 16) * 16;
    const bytes = base + 8 * doubles;
    if (bytes > MAX_BYTES) {
      throw new Error(`DenseKernel: ${(bytes / 1024 ** 3).toFixed(1)} GiB exceed WebAssembly's 4 GiB memory`);
    }
    const have = this.memory.buffer.byteLength;
    if (have < bytes) {
      const want = Math.min(Math.max(bytes, Math.floor(1.25 * have)), MAX_BYTES);
      this.memory.grow(Math.ceil((want - have) / 65536));
    }
    this.base = base;
    this.ints = new Int32Array(this.memory.buffer, 0, base / 4);
    this.data = new Float64Array(this.memory.buffer, base);
    this.floats = new Float32Array(this.memory.buffer, base);
  }

  update(a: number, b: number, c: number, sab: number, sc: number, p: number, nr: number, nc: number): void {
    if (nr <= 0 || nc <= 0) return;
    const { t42, t41, t12, t11 } = this.fn;
    const o = this.base;
    const ncEven = nc & ~1;
    const nr4 = nr & ~3;
    const sab8 = sab * 8;
    const sc8 = sc * 8;
    if (nr4 > 0) {
      if (ncEven > 0) t42(o + a * 8, o + b * 8, o + c * 8, sab8, sc8, p, nr4, ncEven);
      if (ncEven < nc) t41(o + a * 8, o + (b + ncEven * sab) * 8, o + (c + ncEven) * 8, sab8, sc8, p, nr4, 1);
    }
    if (nr4 < nr) {
      const a1 = a + nr4 * sab;
      const c1 = c + nr4 * sc;
      if (ncEven > 0) t12(o + a1 * 8, o + b * 8, o + c1 * 8, sab8, sc8, p, nr - nr4, ncEven);
      if (ncEven < nc) t11(o + a1 * 8, o + (b + ncEven * sab) * 8, o + (c1 + ncEven) * 8, sab8, sc8, p, nr - nr4, 1);
    }
  }

  extendAdd(src: number, rc: number, rel: number, panel: number, upd: number, k: number, r: number): void {
    const o = this.base;
    this.fn.extendAdd(o + 8 * src, rc, 4 * rel, o + 8 * panel, o + 8 * upd, k, r);
  }

  toFloats(from: number, count: number, to: number): void {
    const o = this.base;
    if (count > 0) this.fn.demote(o + 8 * from, count, o + 4 * to);
  }

  triangularSolve(l: number, k: number, y: number, single = false): void {
    const o = this.base;
    if (single) this.fn.trsv32(o + 4 * l, k, 4 * k, o + 8 * y);
    else this.fn.trsv(o + 8 * l, k, 8 * k, o + 8 * y);
  }

  triangularSolveTransposed(l: number, k: number, y: number, single = false): void {
    const o = this.base;
    if (single) this.fn.trsvT32(o + 4 * l, k, 4 * k, o + 8 * y);
    else this.fn.trsvT(o + 8 * l, k, 8 * k, o + 8 * y);
  }

  gemvScatter(a: number, sa: number, x: number, nr: number, nc: number, y: number, idx: number, single = false): void {
    if (nr <= 0 || nc <= 0) return;
    const o = this.base;
    if (single) this.fn.gemvScatter32(o + 4 * a, 4 * sa, o + 8 * x, nr, nc, o + 8 * y, 4 * idx);
    else this.fn.gemvScatter(o + 8 * a, 8 * sa, o + 8 * x, nr, nc, o + 8 * y, 4 * idx);
  }

  gatherGemvTransposed(a: number, sa: number, y: number, idx: number, nr: number, nc: number, out: number, single = false): void {
    if (nr <= 0 || nc <= 0) return;
    const o = this.base;
    if (single) this.fn.gatherGemvT32(o + 4 * a, 4 * sa, o + 8 * y, 4 * idx, nr, nc, o + 8 * out);
    else this.fn.gatherGemvT(o + 8 * a, 8 * sa, o + 8 * y, 4 * idx, nr, nc, o + 8 * out);
  }

  scaleStrided(x: number, stride: number, count: number, factor: number): void {
    if (count > 0) this.fn.scale(this.base + 8 * x, 8 * stride, count, factor);
  }

  finishColumnPair(x: number, stride: number, count: number, inv0: number, l10: number, inv1: number): void {
    if (count > 0) this.fn.pair(this.base + 8 * x, 8 * stride, count, inv0, l10, inv1);
  }
}

/**
 * Whether this engine validates the kernel module with fused multiply-adds (relaxed SIMD), checked without
 * compiling or caching anything: a host may turn the feature on first (sim/node-wasm-features.ts).
 */
export function fusedKernelValidates(): boolean {
  return typeof WebAssembly !== 'undefined' && WebAssembly.validate(moduleBytes(true));
}

/** The two modules' bytes, assembled once (a first assembly takes about 20 ms). */
const assembledModules = new Map<boolean, Uint8Array<ArrayBuffer>>();

function moduleBytes(fused: boolean): Uint8Array<ArrayBuffer> {
  let bytes = assembledModules.get(fused);
  if (!bytes) {
    bytes = assembleModule(fused);
    assembledModules.set(fused, bytes);
  }
  return bytes;
}

// compiled once per process; the optimizing tier's code is shared by every instance
/** The compiled modules, with and without fused multiply-adds (null: the engine refuses it); compiled once. */
const wasmModules = new Map<boolean, WebAssembly.Module | null>();
const warmedUp = new Set<boolean>();

function tryCreateWasmKernel(fused: boolean): DenseKernel | null {
  try {
    if (!wasmModules.has(fused)) {
      wasmModules.set(fused, null);
      if (typeof WebAssembly === 'undefined') return null;
      const bytes = moduleBytes(fused);
      if (!WebAssembly.validate(bytes)) return null;
      wasmModules.set(fused, new WebAssembly.Module(bytes));
    }
    const module = wasmModules.get(fused);
    if (!module) return null;
    const memory = new WebAssembly.Memory({ initial: 16, maximum: 65536 });
    const instance = new WebAssembly.Instance(module, { env: { mem: memory } });
    const kernel = new WasmKernel(fused ? 'wasm-simd-fma' : 'wasm-simd', memory, instance.exports as unknown as WasmExports);
    if (!warmedUp.has(fused)) {
      warmUp(kernel);
      warmedUp.add(fused);
    }
    return kernel;
  } catch {
    return null;
  }
}

/** A few hundred small calls, so the engine's optimizing tier compiles the kernels before real work (once). */
function warmUp(k: DenseKernel): void {
  const n = 48;
  const f = 6 * n * n; // a float32 block after the doubles
  k.allocate(n, 4 * n * n);
  k.data.fill(0.001, 0, 3 * n * n);
  k.floats.fill(0.001, f, f + n * n);
  for (let i = 0; i < n; i++) {
    k.data[i * n + i] = 1; // unit diagonals: the triangular solves stay finite
    k.floats[f + i * n + i] = 1;
  }
  for (let i = 0; i < n; i++) k.ints[i] = i;
  for (let rep = 0; rep < 100; rep++) {
    k.update(0, 0, n * n, n, n, n, n - 1, n - 1);
    k.update(0, 0, n * n, n, n, n - 1, n - 2, n - 2);
    k.extendAdd(2 * n * n, n - 8, 0, 0, n * n, 4, n);
    k.triangularSolve(0, n, 2 * n * n);
    k.triangularSolveTransposed(0, n, 2 * n * n);
    k.gemvScatter(0, n, n * n, n, n - 1, 2 * n * n, 0);
    k.gatherGemvTransposed(0, n, 2 * n * n, 0, n, n - 1, n * n);
    k.triangularSolve(f, n, 2 * n * n, true);
    k.triangularSolveTransposed(f, n, 2 * n * n, true);
    k.gemvScatter(f, n, n * n, n, n - 1, 2 * n * n, 0, true);
    k.gatherGemvTransposed(f, n, 2 * n * n, 0, n, n - 1, n * n, true);
    k.toFloats(0, 2 * n - 1, f + n * n);
    k.scaleStrided(0, n, n, 1.0001);
    k.finishColumnPair(0, n, n, 1.0001, 0.001, 0.9999);
  }
  k.allocate(0, 0);
  k.data.fill(0, 0, 4 * n * n);
}

// Minimal WebAssembly binary writer: just what the kernel needs.
const I32 = 0x7f;
const F64 = 0x7c;
const V128 = 0x7b;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const name = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (ch) => ch.charCodeAt(0))];
const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (v: number) => [0x41, ...sleb(v)],
  add: [0x6a],
  sub: [0x6b],
  mul: [0x6c],
  and: [0x71],
  shl: [0x74],
  shrU: [0x76],
  remU: [0x70],
  geS: [0x4e],
  gtS: [0x4a],
  ltS: [0x48],
  select: [0x1b],
  i32load: [0x28, 2, 0],
  blockLoop: [0x02, 0x40, 0x03, 0x40], // block { loop {
  endLoop: [0x0b, 0x0b],
  brIf: (depth: number) => [0x0d, depth],
  br: (depth: number) => [0x0c, depth],
  ifVoid: [0x04, 0x40],
  else: [0x05],
  end: [0x0b],
  f64load: (offset: number) => [0x2b, 3, ...uleb(offset)],
  f64store: (offset: number) => [0x39, 3, ...uleb(offset)],
  f64add: [0xa0],
  f64sub: [0xa1],
  f64mul: [0xa2],
  f64div: [0xa3],
  simd: (code: number) => [0xfd, ...uleb(code)],
};
const v128load = [...op.simd(0x00), 4, 0];
const v128loadAt = (offset: number): number[] => [...op.simd(0x00), 4, ...uleb(offset)];
const i32loadAt = (offset: number): number[] => [0x28, 2, ...uleb(offset)];
const v128load64zero = [...op.simd(0x5d), 3, 0];
const v128zero = [...op.simd(0x0c), ...new Array<number>(16).fill(0)];
const v128store = [...op.simd(0x0b), 4, 0];
const f64x2splat = op.simd(0x14);
const f64x2add = op.simd(0xf0);
const f64x2sub = op.simd(0xf1);
const f64x2mul = op.simd(0xf2);
/** Relaxed SIMD's a * b + c: one fused multiply-add where the hardware has it (x86 FMA3, ARM), else a mul and an add. */
const f64x2relaxedMadd = op.simd(0x107);
/** c - a * b, fused likewise. */
const f64x2relaxedNmadd = op.simd(0x108);
const f64x2promote = op.simd(0x5f); // f64x2.promote_low_f32x4
const extractLane = (lane: number) => [...op.simd(0x21), lane];
/** i8x16.shuffle of two f64x2: (a[0], b[0]) and (a[1], b[1]). */
const lowLanes = [...op.simd(0x0d), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const highLanes = [...op.simd(0x0d), 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];

/**
 * One tile function: R rows x C columns per tile, accumulating f64x2 partial dot products along q (two q at a
 * time, an odd last q loaded with a zero upper lane), summed horizontally at the end of the tile.
 * Params (bytes except p, nr, nc): a, b, c, sab, sc, p, nr, nc; nr must be a multiple of R and nc of C (1 or 2).
 */
function tileFunction(R: number, C: 1 | 2, fused: boolean): number[] {
  const [A, B, Cp, SAB, SC, P, NR, NC, I, J, Q] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const ROW = 11; // R row pointers
  const COL = ROW + R; // C column pointers
  const PEVEN = COL + C;
  const CROW = PEVEN + 1;
  const nI32 = CROW + 1 - 8;
  const ACC = CROW + 1; // R*C v128 accumulators
  const X = ACC + R * C; // C loaded b vectors
  const Y = X + C; // one loaded a vector
  const nV128 = R * C + C + 1;
  const code: number[] = [];
  const emit = (...parts: number[][]): void => {
    for (const part of parts) for (const x of part) code.push(x);
  };
  const dotStep = (load: number[]): void => {
    for (let c = 0; c < C; c++) emit(op.get(COL + c), op.get(Q), op.add, load, op.set(X + c));
    for (let r = 0; r < R; r++) {
      emit(op.get(ROW + r), op.get(Q), op.add, load, op.set(Y));
      for (let c = 0; c < C; c++) {
        const acc = ACC + r * C + c;
        emit(accumulate(fused, acc, op.get(Y), op.get(X + c)));
      }
    }
  };
  emit(op.get(P), op.i32(-2), op.and, op.set(PEVEN));
  emit(op.i32(0), op.set(I));
  emit(op.blockLoop); // rows
  emit(op.get(I), op.get(NR), op.geS, op.brIf(1));
  emit(op.get(A), op.get(I), op.get(SAB), op.mul, op.add, op.set(ROW));
  for (let r = 1; r < R; r++) emit(op.get(ROW + r - 1), op.get(SAB), op.add, op.set(ROW + r));
  emit(op.get(Cp), op.get(I), op.get(SC), op.mul, op.add, op.set(CROW));
  emit(op.i32(0), op.set(J));
  emit(op.blockLoop); // columns
  emit(op.get(J), op.get(NC), op.geS, op.brIf(1));
  emit(op.get(B), op.get(J), op.get(SAB), op.mul, op.add, op.set(COL));
  for (let c = 1; c < C; c++) emit(op.get(COL + c - 1), op.get(SAB), op.add, op.set(COL + c));
  for (let t = 0; t < R * C; t++) emit(v128zero, op.set(ACC + t));
  emit(op.i32(0), op.set(Q)); // Q counts bytes
  emit(op.blockLoop); // q pairs
  emit(op.get(Q), op.get(PEVEN), op.i32(3), op.shl, op.geS, op.brIf(1));
  dotStep(v128load);
  emit(op.get(Q), op.i32(16), op.add, op.set(Q), op.br(0));
  emit(op.endLoop);
  emit(op.get(P), op.i32(1), op.and, op.ifVoid);
  dotStep(v128load64zero);
  emit(op.end);
  for (let r = 0; r < R; r++) {
    // address of C[i + r][j]; Q is free now
    emit(op.get(CROW), op.get(SC), op.i32(r), op.mul, op.add, op.get(J), op.i32(3), op.shl, op.add, op.tee(Q));
    const acc0 = ACC + r * C;
    if (C === 2) {
      // both columns' sums in one vector: (lane 0 of each accumulator) + (lane 1 of each), then one subtraction
      const acc1 = acc0 + 1;
      emit(op.get(Q), v128load, op.get(acc0), op.get(acc1), lowLanes, op.get(acc0), op.get(acc1), highLanes, f64x2add);
      emit(f64x2sub, v128store);
    } else {
      emit(op.get(Q), op.f64load(0), laneSum(acc0), op.f64sub, op.f64store(0));
    }
  }
  emit(op.get(J), op.i32(C), op.add, op.set(J), op.br(0));
  emit(op.endLoop);
  emit(op.get(I), op.i32(R), op.add, op.set(I), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  const locals = vector([
    [...uleb(nI32), I32],
    [...uleb(nV128), V128],
  ]);
  const body = [...locals, ...code];
  return [...uleb(body.length), ...body];
}

/** Encodes a function body from its locals (count, type) and code. */
function functionBody(locals: Array<[number, number]>, code: number[]): number[] {
  const body = [...vector(locals.map(([count, type]) => [...uleb(count), type])), ...code];
  return [...uleb(body.length), ...body];
}

/**
 * extendAdd(src, rc, rel, panel, upd, k, r): see DenseKernel.extendAdd (addresses in bytes). Rows and columns come
 * in node triples (three consecutive relative indices, all in the panel or all in the update matrix), so a row's
 * columns before its own triple go by triples: one index and one target choice, an f64x2 and an f64 add each.
 */
function extendAddFunction(): number[] {
  const [SRC, RC, REL, PANEL, UPD, K, R] = [0, 1, 2, 3, 4, 5, 6];
  const [A, B, RA, ROWP, ROWU, FROM, CB, DST, BEND] = [7, 8, 9, 10, 11, 12, 13, 14, 15];
  const c: number[] = [];
  const emit = (...parts: number[][]): void => {
    for (const part of parts) for (const x of part) c.push(x);
  };
  // DST = (cb < k ? rowP : rowU) + 8 cb, cb = rel[b]
  const target = [
    ...op.get(REL), ...op.get(B), ...op.i32(2), ...op.shl, ...op.add, ...op.i32load, ...op.set(CB),
    ...op.get(ROWP), ...op.get(ROWU), ...op.get(CB), ...op.get(K), ...op.ltS, ...op.select, ...op.get(CB), ...op.i32(3), ...op.shl, ...op.add,
  ];
  const source = (offset: number): number[] => [...op.get(FROM), ...op.get(B), ...op.i32(3), ...op.shl, ...op.add, ...op.f64load(offset)];
  emit(op.i32(0), op.set(A));
  emit(op.blockLoop);
  emit(op.get(A), op.get(RC), op.geS, op.brIf(1));
  emit(op.get(REL), op.get(A), op.i32(2), op.shl, op.add, op.i32load, op.set(RA));
  emit(op.get(PANEL), op.get(RA), op.get(K), op.mul, op.i32(3), op.shl, op.add, op.set(ROWP));
  emit(op.get(UPD), op.get(RA), op.get(K), op.sub, op.get(R), op.mul, op.get(K), op.sub, op.i32(3), op.shl, op.add, op.set(ROWU));
  emit(op.get(SRC), op.get(A), op.get(RC), op.mul, op.i32(3), op.shl, op.add, op.set(FROM));
  emit(op.get(A), op.get(A), op.i32(3), op.remU, op.sub, op.set(BEND));
  emit(op.i32(0), op.set(B));
  emit(op.blockLoop); // whole triples before the row's own
  emit(op.get(B), op.get(BEND), op.geS, op.brIf(1));
  emit(target, op.tee(DST), op.get(DST), v128load);
  emit(op.get(FROM), op.get(B), op.i32(3), op.shl, op.add, v128load, f64x2add, v128store);
  emit(op.get(DST), op.get(DST), op.f64load(16), source(16), op.f64add, op.f64store(16));
  emit(op.get(B), op.i32(3), op.add, op.set(B), op.br(0));
  emit(op.endLoop);
  emit(op.blockLoop); // the row's own triple, up to the diagonal
  emit(op.get(B), op.get(A), op.gtS, op.brIf(1));
  emit(target, op.tee(DST), op.get(DST), op.f64load(0), source(0), op.f64add, op.f64store(0));
  emit(op.get(B), op.i32(1), op.add, op.set(B), op.br(0));
  emit(op.endLoop);
  emit(op.get(A), op.i32(1), op.add, op.set(A), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  return functionBody([[9, I32]], c);
}

/** Emits wasm code parts into one array. */
function codeBuffer(): { code: number[]; emit: (...parts: number[][]) => void } {
  const code: number[] = [];
  return {
    code,
    emit: (...parts: number[][]): void => {
      for (const part of parts) for (const x of part) code.push(x);
    },
  };
}

/**
 * How the solve functions read L: float64, or a float32 copy (loaded and promoted, so the sums stay in float64).
 * `offset` turns a byte offset into y (8 bytes an entry) into the byte offset of the same column in a row of L.
 */
interface FactorPrecision {
  offset: number[];
  /** Two entries of L as an f64x2, from the address on the stack plus `at` bytes (of y). */
  load2: (at: number) => number[];
  /** One entry as an f64. */
  load1: number[];
  /** log2 of the bytes of an entry. */
  shift: number;
}

const FLOAT64_FACTOR: FactorPrecision = { offset: [], load2: (at) => v128loadAt(at), load1: op.f64load(0), shift: 3 };
const FLOAT32_FACTOR: FactorPrecision = {
  offset: [...op.i32(1), ...op.shrU],
  load2: (at) => [...op.simd(0x5d), 3, ...uleb(at / 2), ...f64x2promote],
  load1: [0x2a, 2, 0, 0xbb], // f32.load, f64.promote_f32
  shift: 2,
};

/** acc += a * b on f64x2 (a and b: code pushing one v128 each), fused where the module has relaxed SIMD. */
function accumulate(fused: boolean, acc: number, a: number[], b: number[]): number[] {
  return fused
    ? [...a, ...b, ...op.get(acc), ...f64x2relaxedMadd, ...op.set(acc)]
    : [...op.get(acc), ...a, ...b, ...f64x2mul, ...f64x2add, ...op.set(acc)];
}

/** acc -= a * b on f64x2, as accumulate. */
function deduct(fused: boolean, acc: number, a: number[], b: number[]): number[] {
  return fused
    ? [...a, ...b, ...op.get(acc), ...f64x2relaxedNmadd, ...op.set(acc)]
    : [...op.get(acc), ...a, ...b, ...f64x2mul, ...f64x2sub, ...op.set(acc)];
}

/** Byte address of L's entry in the row at local `row` and the column at y byte offset local `q`, plus `extra` bytes. */
function factorAddress(f: FactorPrecision, row: number, q: number, extra = 0): number[] {
  return [...op.get(row), ...op.get(q), ...f.offset, ...op.add, ...(extra ? [...op.i32(extra), ...op.add] : [])];
}

/** The two lanes of a v128 local added, as an f64. */
const laneSum = (v: number): number[] => [...op.get(v), ...extractLane(0), ...op.get(v), ...extractLane(1), ...op.f64add];

/**
 * trsv(l, k, sk, y): y = L^-1 y by rows, two rows at a time: their dot products with the solved part of y share
 * its loads (an even length, as rows pair up from 0), then the 2x2 triangle. See DenseKernel.triangularSolve.
 */
function triangularSolveFunction(f: FactorPrecision, fused: boolean): number[] {
  const [L, K, SK, Y] = [0, 1, 2, 3];
  const [J, ROW0, ROW1, Q, QEND, ADDR] = [4, 5, 6, 7, 8, 9];
  const [ACC0, ACC1, YV] = [10, 11, 12];
  const [Y0] = [13];
  const { code, emit } = codeBuffer();
  const at = (row: number, extra = 0): number[] => factorAddress(f, row, Q, extra);
  const dots = (two: boolean): void => {
    emit(op.blockLoop);
    emit(op.get(Q), op.get(QEND), op.geS, op.brIf(1));
    emit(op.get(Y), op.get(Q), op.add, v128load, op.set(YV));
    emit(accumulate(fused, ACC0, [...at(ROW0), ...f.load2(0)], op.get(YV)));
    if (two) emit(accumulate(fused, ACC1, [...at(ROW1), ...f.load2(0)], op.get(YV)));
    emit(op.get(Q), op.i32(16), op.add, op.set(Q), op.br(0));
    emit(op.endLoop);
  };
  emit(op.i32(0), op.set(J));
  emit(op.blockLoop);
  emit(op.get(J), op.get(K), op.geS, op.brIf(1));
  emit(op.get(L), op.get(J), op.get(SK), op.mul, op.add, op.tee(ROW0), op.get(SK), op.add, op.set(ROW1));
  emit(v128zero, op.set(ACC0), v128zero, op.set(ACC1));
  emit(op.get(J), op.i32(3), op.shl, op.set(QEND), op.i32(0), op.set(Q));
  emit(op.get(Y), op.get(J), op.i32(3), op.shl, op.add, op.set(ADDR));
  emit(op.get(J), op.i32(1), op.add, op.get(K), op.ltS, op.ifVoid);
  dots(true);
  // Q = 8 j: y[j] = (y[j] - dot0) / L[j][j], then y[j+1] = (y[j+1] - dot1 - L[j+1][j] y[j]) / L[j+1][j+1]
  emit(op.get(ADDR), op.get(ADDR), op.f64load(0), laneSum(ACC0), op.f64sub, at(ROW0), f.load1, op.f64div, op.tee(Y0), op.f64store(0));
  emit(op.get(ADDR), op.get(ADDR), op.f64load(8), laneSum(ACC1), op.f64sub, at(ROW1), f.load1, op.get(Y0), op.f64mul, op.f64sub);
  emit(at(ROW1, 1 << f.shift), f.load1, op.f64div, op.f64store(8));
  emit(op.else);
  dots(false);
  emit(op.get(ADDR), op.get(ADDR), op.f64load(0), laneSum(ACC0), op.f64sub, at(ROW0), f.load1, op.f64div, op.f64store(0));
  emit(op.end);
  emit(op.get(J), op.i32(2), op.add, op.set(J), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  return functionBody([[6, I32], [3, V128], [1, F64]], code);
}

/**
 * trsvT(l, k, sk, y): y = L^-T y, last row first, two rows at a time: solve their 2x2 triangle, then one pass of
 * y[q] -= L[j][q] y[j] + L[j-1][q] y[j-1] over q < j - 1 (one load and store of y for two rows). See
 * DenseKernel.triangularSolveTransposed.
 */
function triangularSolveTransposedFunction(f: FactorPrecision, fused: boolean): number[] {
  const [L, K, SK, Y] = [0, 1, 2, 3];
  const [J, ROW0, ROW1, Q, QEND2, ADDR] = [4, 5, 6, 7, 8, 9];
  const [YJ, YI] = [10, 11];
  const [SPLAT1, SPLAT0, V] = [12, 13, 14];
  const { code, emit } = codeBuffer();
  const at = (row: number): number[] => factorAddress(f, row, Q);
  /** L[row][col] as an f64, col a local holding a column index. */
  const entry = (row: number, col: number[]): number[] => [...op.get(row), ...col, ...op.i32(f.shift), ...op.shl, ...op.add, ...f.load1];
  const colJ = op.get(J);
  const colI = [...op.get(J), ...op.i32(1), ...op.sub];
  emit(op.get(K), op.i32(1), op.sub, op.set(J));
  emit(op.blockLoop);
  emit(op.get(J), op.i32(0), op.ltS, op.brIf(1));
  emit(op.get(L), op.get(J), op.get(SK), op.mul, op.add, op.tee(ROW1), op.get(SK), op.sub, op.set(ROW0));
  // y[j] /= L[j][j]
  emit(op.get(Y), op.get(J), op.i32(3), op.shl, op.add, op.tee(ADDR));
  emit(op.get(ADDR), op.f64load(0), entry(ROW1, colJ), op.f64div, op.tee(YJ), op.f64store(0));
  emit(op.get(J), op.i32(1), op.geS, op.ifVoid);
  // y[j-1] = (y[j-1] - L[j][j-1] y[j]) / L[j-1][j-1]
  emit(op.get(ADDR), op.i32(8), op.sub, op.tee(ADDR), op.get(ADDR), op.f64load(0), entry(ROW1, colI), op.get(YJ), op.f64mul, op.f64sub);
  emit(entry(ROW0, colI), op.f64div, op.tee(YI), op.f64store(0));
  emit(op.get(YJ), f64x2splat, op.set(SPLAT1), op.get(YI), f64x2splat, op.set(SPLAT0));
  emit(op.get(J), op.i32(1), op.sub, op.i32(-2), op.and, op.i32(3), op.shl, op.set(QEND2));
  emit(op.i32(0), op.set(Q));
  emit(op.blockLoop);
  emit(op.get(Q), op.get(QEND2), op.geS, op.brIf(1));
  emit(op.get(Y), op.get(Q), op.add, op.tee(ADDR), v128load, op.set(V));
  emit(deduct(fused, V, [...at(ROW1), ...f.load2(0)], op.get(SPLAT1)));
  emit(deduct(fused, V, [...at(ROW0), ...f.load2(0)], op.get(SPLAT0)));
  emit(op.get(ADDR), op.get(V), v128store);
  emit(op.get(Q), op.i32(16), op.add, op.set(Q), op.br(0));
  emit(op.endLoop);
  // an odd j - 1 leaves one entry
  emit(op.get(J), op.i32(1), op.sub, op.i32(1), op.and, op.ifVoid);
  emit(op.get(Y), op.get(Q), op.add, op.tee(ADDR), op.get(ADDR), op.f64load(0));
  emit(at(ROW1), f.load1, op.get(YJ), op.f64mul, op.f64sub, at(ROW0), f.load1, op.get(YI), op.f64mul, op.f64sub, op.f64store(0));
  emit(op.end);
  emit(op.end);
  emit(op.get(J), op.i32(2), op.sub, op.set(J), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  return functionBody([[6, I32], [2, F64], [3, V128]], code);
}

/** Rows of a mat-vec kernel: rows(4) while four are left, then rows(1) for the rest (local I counts them). */
function byRowQuads(emit: (...parts: number[][]) => void, I: number, NR: number, rows: (count: number) => void): void {
  emit(op.i32(0), op.set(I));
  emit(op.blockLoop);
  emit(op.get(I), op.i32(3), op.add, op.get(NR), op.geS, op.brIf(1));
  rows(4);
  emit(op.get(I), op.i32(4), op.add, op.set(I), op.br(0));
  emit(op.endLoop);
  emit(op.blockLoop);
  emit(op.get(I), op.get(NR), op.geS, op.brIf(1));
  rows(1);
  emit(op.get(I), op.i32(1), op.add, op.set(I), op.br(0));
  emit(op.endLoop);
}

/**
 * gemvScatter(a, sa, x, nr, nc, y, idx): see DenseKernel.gemvScatter (addresses in bytes; the rows' targets are
 * y + 8 ints[i]). Four rows per sweep over x, sharing its loads.
 */
function gemvScatterFunction(f: FactorPrecision, fused: boolean): number[] {
  const [A, SA, X, NR, NC, YB, IDX] = [0, 1, 2, 3, 4, 5, 6];
  const [I, Q, QEND2, ADDR, ROW] = [7, 8, 9, 10, 11]; // ROW ... ROW + 3
  const ACC = 15; // ACC ... ACC + 3
  const XV = 19;
  const S = 20; // S ... S + 3
  const { code, emit } = codeBuffer();
  const at = (row: number): number[] => factorAddress(f, row, Q);
  const rows = (count: number): void => {
    emit(op.get(A), op.get(I), op.get(SA), op.mul, op.add, op.set(ROW));
    for (let r = 1; r < count; r++) emit(op.get(ROW + r - 1), op.get(SA), op.add, op.set(ROW + r));
    for (let r = 0; r < count; r++) emit(v128zero, op.set(ACC + r));
    emit(op.i32(0), op.set(Q));
    emit(op.blockLoop);
    emit(op.get(Q), op.get(QEND2), op.geS, op.brIf(1));
    emit(op.get(X), op.get(Q), op.add, v128load, op.set(XV));
    for (let r = 0; r < count; r++) emit(accumulate(fused, ACC + r, [...at(ROW + r), ...f.load2(0)], op.get(XV)));
    emit(op.get(Q), op.i32(16), op.add, op.set(Q), op.br(0));
    emit(op.endLoop);
    for (let r = 0; r < count; r++) emit(laneSum(ACC + r), op.set(S + r));
    emit(op.get(NC), op.i32(1), op.and, op.ifVoid);
    for (let r = 0; r < count; r++) {
      emit(op.get(S + r), at(ROW + r), f.load1, op.get(X), op.get(Q), op.add, op.f64load(0), op.f64mul, op.f64add, op.set(S + r));
    }
    emit(op.end);
    for (let r = 0; r < count; r++) {
      emit(op.get(YB), op.get(IDX), op.get(I), op.i32(2), op.shl, op.add, i32loadAt(4 * r), op.i32(3), op.shl, op.add, op.tee(ADDR));
      emit(op.get(ADDR), op.f64load(0), op.get(S + r), op.f64sub, op.f64store(0));
    }
  };
  emit(op.get(NC), op.i32(-2), op.and, op.i32(3), op.shl, op.set(QEND2));
  byRowQuads(emit, I, NR, rows);
  emit(op.end);
  return functionBody([[8, I32], [5, V128], [4, F64]], code);
}

/**
 * gatherGemvT(a, sa, y, idx, nr, nc, out): see DenseKernel.gatherGemvTransposed (addresses in bytes). Four rows of
 * A per sweep over out (one load and store of out for four rows).
 */
function gatherGemvTransposedFunction(f: FactorPrecision, fused: boolean): number[] {
  const [A, SA, YB, IDX, NR, NC, OUT] = [0, 1, 2, 3, 4, 5, 6];
  const [I, Q, QEND2, ADDR, ROW] = [7, 8, 9, 10, 11]; // ROW ... ROW + 3
  const G = 15; // G ... G + 3: the rows' gathered y, splat
  const V = 19;
  const { code, emit } = codeBuffer();
  const at = (row: number): number[] => factorAddress(f, row, Q);
  const rows = (count: number): void => {
    emit(op.get(A), op.get(I), op.get(SA), op.mul, op.add, op.set(ROW));
    for (let r = 1; r < count; r++) emit(op.get(ROW + r - 1), op.get(SA), op.add, op.set(ROW + r));
    for (let r = 0; r < count; r++) {
      emit(op.get(YB), op.get(IDX), op.get(I), op.i32(2), op.shl, op.add, i32loadAt(4 * r), op.i32(3), op.shl, op.add);
      emit(op.f64load(0), f64x2splat, op.set(G + r));
    }
    emit(op.i32(0), op.set(Q));
    emit(op.blockLoop);
    emit(op.get(Q), op.get(QEND2), op.geS, op.brIf(1));
    emit(op.get(OUT), op.get(Q), op.add, op.tee(ADDR), v128load, op.set(V));
    for (let r = 0; r < count; r++) emit(deduct(fused, V, [...at(ROW + r), ...f.load2(0)], op.get(G + r)));
    emit(op.get(ADDR), op.get(V), v128store);
    emit(op.get(Q), op.i32(16), op.add, op.set(Q), op.br(0));
    emit(op.endLoop);
    emit(op.get(NC), op.i32(1), op.and, op.ifVoid);
    emit(op.get(OUT), op.get(Q), op.add, op.tee(ADDR), op.get(ADDR), op.f64load(0));
    for (let r = 0; r < count; r++) emit(at(ROW + r), f.load1, op.get(G + r), extractLane(0), op.f64mul, op.f64sub);
    emit(op.f64store(0));
    emit(op.end);
  };
  emit(op.get(NC), op.i32(-2), op.and, op.i32(3), op.shl, op.set(QEND2));
  byRowQuads(emit, I, NR, rows);
  emit(op.end);
  return functionBody([[8, I32], [5, V128]], code);
}

/** demote(src, count, dst): float32 copies of count doubles, two per step (addresses in bytes). */
function demoteFunction(): number[] {
  const [SRC, COUNT, DST] = [0, 1, 2];
  const [END] = [3];
  const { code, emit } = codeBuffer();
  emit(op.get(SRC), op.get(COUNT), op.i32(-2), op.and, op.i32(3), op.shl, op.add, op.set(END));
  emit(op.blockLoop);
  emit(op.get(SRC), op.get(END), op.geS, op.brIf(1));
  emit(op.get(DST), op.get(SRC), v128load, op.simd(0x5e), [...op.simd(0x5b), 3, 0, 0]); // f32x4.demote_f64x2_zero, v128.store64_lane 0
  emit(op.get(SRC), op.i32(16), op.add, op.set(SRC), op.get(DST), op.i32(8), op.add, op.set(DST), op.br(0));
  emit(op.endLoop);
  emit(op.get(COUNT), op.i32(1), op.and, op.ifVoid);
  emit(op.get(DST), op.get(SRC), op.f64load(0), [0xb6], [0x38, 2, 0]); // f32.demote_f64, f32.store
  emit(op.end);
  emit(op.end);
  return functionBody([[1, I32]], code);
}

/** scale(x, stride, count, factor): x[i*stride] *= factor (addresses in bytes). */
function scaleFunction(): number[] {
  const [X, STRIDE, COUNT, FACTOR] = [0, 1, 2, 3];
  const I = 4;
  const c: number[] = [];
  const emit = (...parts: number[][]): void => {
    for (const part of parts) for (const x of part) c.push(x);
  };
  emit(op.i32(0), op.set(I));
  emit(op.blockLoop);
  emit(op.get(I), op.get(COUNT), op.geS, op.brIf(1));
  emit(op.get(X), op.get(X), op.f64load(0), op.get(FACTOR), op.f64mul, op.f64store(0));
  emit(op.get(X), op.get(STRIDE), op.add, op.set(X));
  emit(op.get(I), op.i32(1), op.add, op.set(I), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  return functionBody([[1, I32]], c);
}

/** pair(x, stride, count, inv0, l10, inv1): see DenseKernel.finishColumnPair (addresses in bytes). */
function pairFunction(): number[] {
  const [X, STRIDE, COUNT, INV0, L10, INV1] = [0, 1, 2, 3, 4, 5];
  const I = 6;
  const A = 7; // f64
  const c: number[] = [];
  const emit = (...parts: number[][]): void => {
    for (const part of parts) for (const x of part) c.push(x);
  };
  emit(op.i32(0), op.set(I));
  emit(op.blockLoop);
  emit(op.get(I), op.get(COUNT), op.geS, op.brIf(1));
  emit(op.get(X), op.get(X), op.f64load(0), op.get(INV0), op.f64mul, op.tee(A), op.f64store(0));
  emit(op.get(X), op.get(X), op.f64load(8), op.get(A), op.get(L10), op.f64mul, op.f64sub);
  emit(op.get(INV1), op.f64mul, op.f64store(8));
  emit(op.get(X), op.get(STRIDE), op.add, op.set(X));
  emit(op.get(I), op.i32(1), op.add, op.set(I), op.br(0));
  emit(op.endLoop);
  emit(op.end);
  return functionBody([[1, I32], [1, F64]], c);
}

function assembleModule(fused: boolean): Uint8Array<ArrayBuffer> {
  const signature = (params: number) => [0x60, ...vector(new Array<number[]>(params).fill([I32])), ...vector([])];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vector([
      signature(8), signature(7), signature(6),
      [0x60, ...vector([[I32], [I32], [I32], [F64]]), ...vector([])],
      [0x60, ...vector([[I32], [I32], [I32], [F64], [F64], [F64]]), ...vector([])],
      signature(4), signature(3),
    ])),
    ...section(2, vector([[...name('env'), ...name('mem'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vector([uleb(0), uleb(0), uleb(0), uleb(0), uleb(1), uleb(3), uleb(4), uleb(5), uleb(5), uleb(1), uleb(1), uleb(5), uleb(5), uleb(1), uleb(1), uleb(6)])),
    ...section(7, vector([
      [...name('t42'), 0x00, ...uleb(0)],
      [...name('t41'), 0x00, ...uleb(1)],
      [...name('t12'), 0x00, ...uleb(2)],
      [...name('t11'), 0x00, ...uleb(3)],
      [...name('extendAdd'), 0x00, ...uleb(4)],
      [...name('scale'), 0x00, ...uleb(5)],
      [...name('pair'), 0x00, ...uleb(6)],
      [...name('trsv'), 0x00, ...uleb(7)],
      [...name('trsvT'), 0x00, ...uleb(8)],
      [...name('gemvScatter'), 0x00, ...uleb(9)],
      [...name('gatherGemvT'), 0x00, ...uleb(10)],
      [...name('trsv32'), 0x00, ...uleb(11)],
      [...name('trsvT32'), 0x00, ...uleb(12)],
      [...name('gemvScatter32'), 0x00, ...uleb(13)],
      [...name('gatherGemvT32'), 0x00, ...uleb(14)],
      [...name('demote'), 0x00, ...uleb(15)],
    ])),
    ...section(10, vector([
      tileFunction(4, 2, fused), tileFunction(4, 1, fused), tileFunction(1, 2, fused), tileFunction(1, 1, fused),
      extendAddFunction(), scaleFunction(), pairFunction(),
      ...[FLOAT64_FACTOR, FLOAT32_FACTOR].flatMap((f) => [
        triangularSolveFunction(f, fused), triangularSolveTransposedFunction(f, fused), gemvScatterFunction(f, fused),
        gatherGemvTransposedFunction(f, fused),
      ]),
      demoteFunction(),
    ])),
  ];
  return new Uint8Array(bytes);
}
