/**
 * Sparse Cholesky (A = L L^T, the SPD case of LDL^T) for BsrMatrix: supernodal multifrontal with dense kernels.
 *
 * - Ordering on the node graph (ordering.ts: AMD or nested dissection, whichever predicts fewer flops), so each
 *   node's 3 DOFs stay consecutive and form the smallest supernode.
 * - Symbolic analysis once per pattern (cached by `pattern.id`): elimination tree, postorder, column counts,
 *   fundamental supernodes merged by relaxed amalgamation (a few explicit zeros buy much larger dense blocks),
 *   row structures, the assembly and extend-add index maps, and the sizes of all work buffers.
 * - Numeric factorization per call: for each supernode in postorder, assemble its frontal matrix (A's columns plus
 *   the children's update matrices), factor its first k columns with a blocked Crout scheme whose inner products
 *   run in the dense kernel (dense-kernel.ts), keep those k columns as L's panel and pass the Schur complement
 *   up to the parent on a stack.
 * - Solve: permute, forward and backward substitution by supernode panels, permute back.
 * A pivot <= 0 means A is not SPD: the factorization throws and names the column.
 */
import type { BsrMatrix, BsrPattern } from './bsr.js';
import { createDenseKernel, type DenseKernel, type DenseKernelKind } from './dense-kernel.js';
import type { LinearSolveStats, LinearSolver, LinearSolverTiming } from './linear-solver.js';
import { NotPositiveDefiniteError } from './not-positive-definite.js';
import {
  chooseOrdering,
  columnCounts,
  eliminationTree,
  estimateFill,
  graphFromPattern,
  inversePermutation,
  postorder,
  type FillEstimate,
  type OrderingMethod,
} from './ordering.js';

/** Everything the numeric phase needs that depends only on the pattern. */
export interface LdltSymbolic {
  readonly patternId: number;
  readonly nodes: number;
  readonly ordering: OrderingMethod;
  /** Estimates of each ordering tried (exact nnz(L) and flops of the symbolic factorization). */
  readonly orderingEstimates: Partial<Record<OrderingMethod, FillEstimate>>;
  /** perm[k] = original node eliminated k-th (after postordering). */
  readonly perm: Int32Array;
  readonly iperm: Int32Array;
  readonly supernodes: number;
  /** First node column of each supernode, plus an end marker. */
  readonly superStart: Int32Array;
  /** Parent supernode or -1. */
  readonly superParent: Int32Array;
  /** Number of children of each supernode (their updates are on top of the stack when it is assembled). */
  readonly childCount: Int32Array;
  /** Scalar rows of each front (its k columns first, then the rows below), in permuted scalar indices. */
  readonly frontRowStart: Int32Array;
  readonly frontRows: Int32Array;
  /** Offset of each supernode's m x k panel (row-major, stride k) in the factor values. */
  readonly panelStart: Int32Array;
  /** For each supernode, where its update rows land in the parent's front (scalar local indices). */
  readonly relStart: Int32Array;
  readonly relIndex: Int32Array;
  /** For every pattern slot (i, j): the local node row of block A(j, i) in the front of i's supernode, or -1. */
  readonly assemblyRow: Int32Array;
  /** Doubles needed by the factor panels and the stack of update matrices (full r x r squares); largest front. */
  readonly factorSize: number;
  readonly stackSize: number;
  readonly maxFront: number;
  /** Exact nnz(L) (scalar, diagonal included) and flops without amalgamation zeros. */
  readonly nnzL: number;
  readonly flops: number;
  /** Doubles stored for L: the m x k panels, amalgamation zeros and the unused upper side of diagonal blocks included. */
  readonly storedL: number;
}

export interface LdltOptions {
  /** Ordering to use; by default both AMD and nested dissection are computed and the cheaper kept. */
  ordering?: OrderingMethod | 'auto';
  /** Use the plain JS dense kernel even where WebAssembly SIMD exists. */
  forceJsKernel?: boolean;
  /**
   * Relaxed amalgamation: a child supernode merges into its parent while the merged one, of the given width in
   * scalar columns, has at most this fraction of explicit zeros.
   */
  relaxFraction?: (scalarColumns: number) => number;
  /**
   * Also keep a float32 copy of each factor, for solveFactored(b, x, true): a solve then reads half the bytes (it is
   * bound by memory bandwidth), sums still in float64. For a preconditioner (the lagged Cholesky), not an exact solve.
   * The copy is made by the first such solve, so a factor that only serves exact solves never pays for it.
   */
  compactCopy?: boolean;
  /**
   * A ready fill-reducing permutation (perm[k] = node eliminated k-th) instead of computing one; `ordering` then
   * names the method it came from. LdltSolver passes the previous one when a pattern has only grown.
   */
  permutation?: Int32Array;
}

/**
 * CHOLMOD-like relaxed amalgamation rule on scalar columns, a little more generous for small supernodes because
 * per-front overhead in JS is larger than in C.
 */
function defaultRelax(scalarColumns: number): number {
  if (scalarColumns <= 12) return 0.9;
  if (scalarColumns <= 24) return 0.5;
  if (scalarColumns <= 48) return 0.15;
  return 0.05;
}

/** With automatic ordering, both methods are compared on every this many-th analysis; others reuse the winner. */
const ORDERING_RETRY = 16;

/**
 * A changed pattern of the same system (contact blocks came or went) keeps the previous permutation while nnz(L)
 * stays within this factor of what the last fresh ordering gave; past it, the next analysis orders afresh.
 */
const REUSED_FILL_SLACK = 1.15;

/** Blocking of the dense partial factorization (exported for benchmarks that tune it). */
export const ldltTuning = {
  /** Columns per block of the Crout panel factorization. */
  croutBlock: 16,
  /** Inner-product length per kernel call (keeps the B block in L2 cache). */
  qBlock: 384,
  /** Update columns per kernel call. */
  jBlock: 96,
};

/** Symbolic analysis of a pattern for the supernodal Cholesky. */
export function analyzeLdlt(pattern: BsrPattern, options: LdltOptions = {}): LdltSymbolic {
  const n = pattern.n;
  const g = graphFromPattern(pattern);
  const method = options.ordering ?? 'auto';
  const given = options.permutation;
  if (given && (given.length !== n || method === 'auto')) throw new Error('analyzeLdlt: a given permutation needs the node count and the ordering method it came from');
  const choice = given ? { perm: given, method: method as OrderingMethod, estimates: {} } : chooseOrdering(g, method === 'auto' ? ['amd', 'nd'] : [method]);
  // postorder the elimination tree, heaviest child last so it can merge with its parent
  const perm0 = choice.perm;
  const iperm0 = inversePermutation(perm0);
  const parent0 = eliminationTree(g, perm0, iperm0);
  const counts0 = columnCounts(g, perm0, iperm0, parent0);
  const post = postorder(parent0, counts0);
  const ipost = inversePermutation(post);
  const perm = new Int32Array(n);
  const parent = new Int32Array(n);
  const counts = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    perm[k] = perm0[post[k]];
    const p = parent0[post[k]];
    parent[k] = p < 0 ? -1 : ipost[p];
    counts[k] = counts0[post[k]];
  }
  const iperm = inversePermutation(perm);
  const fill = estimateFill(counts);

  // fundamental supernodes: j joins j-1 when j-1 is its only child and their structures nest
  const nChild = new Int32Array(n);
  for (let j = 0; j < n; j++) if (parent[j] >= 0) nChild[parent[j]]++;
  const relax = options.relaxFraction ?? defaultRelax;
  // relaxed amalgamation on the fly: a stack of finished supernodes [first, last], zeros (in node blocks)
  const stFirst: number[] = [];
  const stLast: number[] = [];
  const stZeros: number[] = [];
  const tri = (x: number): number => (x * (x + 1)) / 2;
  let j = 0;
  while (j < n) {
    let last = j;
    while (
      last + 1 < n &&
      parent[last] === last + 1 &&
      nChild[last + 1] === 1 &&
      counts[last] === counts[last + 1] + 1
    ) {
      last++;
    }
    let first = j;
    let zeros = 0;
    const rowsBelow = counts[last] - 1;
    // merge finished children that end right before this supernode
    while (stFirst.length > 0) {
      const t = stFirst.length - 1;
      const cLast = stLast[t];
      if (cLast + 1 !== first || parent[cLast] < first || parent[cLast] > last) break;
      const nc = cLast - stFirst[t] + 1;
      const np = last - first + 1;
      const childRows = counts[cLast] - 1;
      const extra = nc * (np + rowsBelow - childRows);
      const merged = zeros + stZeros[t] + extra;
      const entries = tri(nc + np) + (nc + np) * rowsBelow;
      if (merged > relax(3 * (nc + np)) * entries) break;
      first = stFirst[t];
      zeros = merged;
      stFirst.pop();
      stLast.pop();
      stZeros.pop();
    }
    stFirst.push(first);
    stLast.push(last);
    stZeros.push(zeros);
    j = last + 1;
  }
  const ns = stFirst.length;
  const superStart = new Int32Array(ns + 1);
  for (let s = 0; s < ns; s++) superStart[s] = stFirst[s];
  superStart[ns] = n;
  const superOf = new Int32Array(n);
  for (let s = 0; s < ns; s++) for (let c = superStart[s]; c < superStart[s + 1]; c++) superOf[c] = s;
  const superParent = new Int32Array(ns);
  const childCount = new Int32Array(ns);
  for (let s = 0; s < ns; s++) {
    const p = parent[superStart[s + 1] - 1];
    superParent[s] = p < 0 ? -1 : superOf[p];
    if (p >= 0) childCount[superOf[p]]++;
  }
  // children lists (ascending = postorder)
  const childStart = new Int32Array(ns + 1);
  for (let s = 0; s < ns; s++) childStart[s + 1] = childStart[s] + childCount[s];
  const children = new Int32Array(childStart[ns]);
  {
    const fillPos = childStart.slice(0, ns);
    for (let s = 0; s < ns; s++) if (superParent[s] >= 0) children[fillPos[superParent[s]]++] = s;
  }

  // row structures (node indices below each supernode), sorted: row i lies below supernode s when L(i, c) != 0 for a
  // column c of s, i.e. s is on the path of the supernodal tree from the supernode of some j < i with A(i, j) != 0
  // up to i's own (the row subtree of i); walking rows in order fills every list in order. The list sizes are the
  // column counts of the supernodes' last columns.
  const rowsStart = new Int32Array(ns + 1);
  for (let t = 0; t < ns; t++) rowsStart[t + 1] = rowsStart[t] + counts[superStart[t + 1] - 1] - 1;
  const rowsAll = new Int32Array(rowsStart[ns]);
  const rowsEnd = rowsStart.slice(0, ns);
  const mark = new Int32Array(ns).fill(-1);
  for (let i = 0; i < n; i++) {
    const own = superOf[i];
    const v = perm[i];
    for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
      const j = iperm[g.adj[t]];
      if (j >= i) continue;
      for (let sj = superOf[j]; sj !== own && mark[sj] !== i; sj = superParent[sj]) {
        mark[sj] = i;
        rowsAll[rowsEnd[sj]++] = i;
      }
    }
  }
  const rowsList: Int32Array[] = new Array(ns);
  for (let t = 0; t < ns; t++) {
    if (rowsEnd[t] !== rowsStart[t + 1]) throw new Error('analyzeLdlt: internal error, row structure does not match column counts');
    rowsList[t] = rowsAll.subarray(rowsStart[t], rowsStart[t + 1]);
  }

  // fronts: scalar rows, panel offsets, stack and front sizes
  const frontRowStart = new Int32Array(ns + 1);
  for (let s = 0; s < ns; s++) {
    const k = 3 * (superStart[s + 1] - superStart[s]);
    frontRowStart[s + 1] = frontRowStart[s] + k + 3 * rowsList[s].length;
  }
  const frontRows = new Int32Array(frontRowStart[ns]);
  const panelEnd = new Float64Array(ns + 1);
  let maxFront = 0;
  let stack = 0;
  let stackSize = 0;
  const updateSize = new Float64Array(ns);
  for (let s = 0; s < ns; s++) {
    const f = superStart[s];
    const k = 3 * (superStart[s + 1] - f);
    const rows = rowsList[s];
    const m = k + 3 * rows.length;
    let o = frontRowStart[s];
    for (let t = 0; t < k; t++) frontRows[o++] = 3 * f + t;
    for (let t = 0; t < rows.length; t++) for (let a = 0; a < 3; a++) frontRows[o++] = 3 * rows[t] + a;
    panelEnd[s + 1] = panelEnd[s] + m * k;
    if (m > maxFront) maxFront = m;
    // the update matrix is formed on top of the children's, then moved down over them
    const r = m - k;
    if (stack + r * r > stackSize) stackSize = stack + r * r;
    for (let t = childStart[s]; t < childStart[s + 1]; t++) stack -= updateSize[children[t]];
    updateSize[s] = superParent[s] >= 0 ? r * r : 0;
    stack += updateSize[s];
  }
  // offsets index typed arrays: keep them 32-bit integers (the dense kernel's 4 GiB is checked when it allocates)
  if (panelEnd[ns] + stackSize >= 2 ** 31) {
    throw new Error(`analyzeLdlt: the factor needs ${((panelEnd[ns] + stackSize) / 2 ** 27).toFixed(1)} GiB, more than the dense kernel can address`);
  }
  const panelStart = Int32Array.from(panelEnd);

  // relative indices of each child's update rows in its parent's front, and the assembly map of A's blocks
  const relStart = new Int32Array(ns + 1);
  for (let s = 0; s < ns; s++) relStart[s + 1] = relStart[s] + (superParent[s] >= 0 ? 3 * rowsList[s].length : 0);
  const relIndex = new Int32Array(relStart[ns]);
  const local = new Int32Array(n).fill(-1); // local node index of a permuted node in the current front
  const assemblyRow = new Int32Array(pattern.nnzBlocks).fill(-1);
  const { rowStart, col } = pattern;
  for (let s = 0; s < ns; s++) {
    const f = superStart[s];
    const ncols = superStart[s + 1] - f;
    const rows = rowsList[s];
    for (let c = 0; c < ncols; c++) local[f + c] = c;
    for (let t = 0; t < rows.length; t++) local[rows[t]] = ncols + t;
    for (let t = childStart[s]; t < childStart[s + 1]; t++) {
      const child = children[t];
      const crows = rowsList[child];
      let o = relStart[child];
      for (let q = 0; q < crows.length; q++) {
        const lr = local[crows[q]];
        for (let a = 0; a < 3; a++) relIndex[o++] = 3 * lr + a;
      }
    }
    for (let c = f; c < f + ncols; c++) {
      const v = perm[c];
      for (let slot = rowStart[v]; slot < rowStart[v + 1]; slot++) {
        const r = iperm[col[slot]];
        if (r >= c) assemblyRow[slot] = local[r];
      }
    }
    for (let c = 0; c < ncols; c++) local[f + c] = -1;
    for (let t = 0; t < rows.length; t++) local[rows[t]] = -1;
  }

  return {
    patternId: pattern.id,
    nodes: n,
    ordering: choice.method,
    orderingEstimates: choice.estimates,
    perm,
    iperm,
    supernodes: ns,
    superStart,
    superParent,
    childCount,
    frontRowStart,
    frontRows,
    panelStart,
    relStart,
    relIndex,
    assemblyRow,
    factorSize: panelStart[ns],
    stackSize,
    maxFront,
    nnzL: fill.nnzL,
    flops: fill.flops,
    storedL: panelStart[ns],
  };
}

/**
 * Bytes of kernel memory a factorization needs: the panels, the solve vectors, the update stack, the index maps and
 * with compactCopy the float32 copy of the panels.
 */
export function factorBytes(sym: LdltSymbolic, compactCopy = false): number {
  const doubles = sym.factorSize + 3 * sym.nodes + sym.maxFront + sym.stackSize + (compactCopy ? Math.ceil(sym.factorSize / 2) : 0);
  return 8 * doubles + 4 * (sym.relIndex.length + sym.frontRows.length);
}

/** Supernodal Cholesky solver with symbolic reuse across calls on the same pattern. */
export class LdltSolver implements LinearSolver {
  readonly name = 'ldlt' as const;
  readonly timing: LinearSolverTiming = { analyzeMs: 0, factorMs: 0, solveMs: 0, analyses: 0, factorizations: 0, solves: 0 };
  private symbolic: LdltSymbolic | null = null;
  /** The analysis the kernel memory is laid out for. */
  private allocatedFor: LdltSymbolic | null = null;
  /**
   * Kernel memory: ints = the relative indices; data = the factor panels, then the solve vector (3n), a scratch
   * vector (largest front) and the stack of update matrices.
   */
  private readonly kernel: DenseKernel;
  private solveBase = 0;
  private scratchBase = 0;
  private stackBase = 0;
  /** Where the float32 copy of the panels starts (in doubles; compactCopy only). */
  private compactBase = 0;
  private residualWork = new Float64Array(0);
  private stackOwner = new Int32Array(0);
  private stackOffset = new Int32Array(0);
  /** The analysis of the factor in kernel memory (null when there is none). */
  private factoredWith: LdltSymbolic | null = null;
  /** Whether the float32 copy of the current factor is made (compactCopy; it is made by the first solve that reads it). */
  private compactMade = false;
  /** nnz(L) of the last analysis that computed its ordering, and whether the next one must order afresh. */
  private freshNnzL = 0;
  private reorderNext = false;

  constructor(private readonly options: LdltOptions = {}) {
    this.kernel = options.forceJsKernel ? createDenseKernel('js')! : createDenseKernel();
  }

  /** Kind of dense kernel in use (DENSE_KERNEL_KINDS). */
  get kernelKind(): DenseKernelKind {
    return this.kernel.kind;
  }

  /** The latest symbolic analysis (null before the first). */
  get analysis(): LdltSymbolic | null {
    return this.symbolic;
  }

  /**
   * The analysis of the current factor, which solveFactored uses: a later plan() of another pattern leaves the
   * factor in place (the lagged Cholesky preconditions new patterns with it), only factor() replaces it.
   */
  get factorAnalysis(): LdltSymbolic | null {
    return this.factoredWith;
  }

  /** Runs (or reuses) the symbolic analysis of a pattern and sizes the kernel memory for it. */
  analyze(pattern: BsrPattern): LdltSymbolic {
    const sym = this.plan(pattern);
    if (this.allocatedFor === sym) return sym;
    const t0 = performance.now();
    const compact = this.options.compactCopy ?? false;
    const bytes = factorBytes(sym, compact);
    if (bytes > 2 ** 32) {
      throw new Error(`LdltSolver: the factor needs ${(bytes / 2 ** 30).toFixed(1)} GiB, more than the 4 GiB the dense kernel can address`);
    }
    this.solveBase = sym.factorSize;
    this.scratchBase = this.solveBase + 3 * sym.nodes;
    this.stackBase = this.scratchBase + sym.maxFront;
    this.compactBase = this.stackBase + sym.stackSize;
    this.factoredWith = null; // the memory is laid out anew
    this.kernel.allocate(sym.relIndex.length + sym.frontRows.length, this.compactBase + (compact ? Math.ceil(sym.factorSize / 2) : 0));
    this.kernel.ints.set(sym.relIndex);
    this.kernel.ints.set(sym.frontRows, sym.relIndex.length);
    if (this.stackOwner.length < sym.supernodes) {
      this.stackOwner = new Int32Array(sym.supernodes);
      this.stackOffset = new Int32Array(sym.supernodes);
    }
    this.allocatedFor = sym;
    this.timing.analyzeMs += performance.now() - t0;
    return sym;
  }

  /**
   * The symbolic analysis of a pattern (reused while the pattern stays), without allocating the factor: its
   * predicted flops and memory can decide whether to factor at all (see AutoLinearSolver).
   */
  plan(pattern: BsrPattern): LdltSymbolic {
    if (this.symbolic && this.symbolic.patternId === pattern.id) return this.symbolic;
    const t0 = performance.now();
    // A changed pattern of the same system (contacts came or went) keeps the ordering method that won on the
    // previous one: computing both costs more than the rest of the analysis, and a few new blocks rarely flip the
    // choice. Both are tried again every ORDERING_RETRY analyses, as the contacts may have changed the graph a lot.
    // Between those, the permutation itself is kept, skipping the ordering altogether, while the fill stays near
    // what a fresh ordering gave: contact patterns change by a few blocks near the contacts, grown or pruned.
    const previous = this.symbolic;
    const sameSystem = previous !== null && previous.nodes === pattern.n && (this.options.ordering ?? 'auto') === 'auto';
    const retry = this.timing.analyses % ORDERING_RETRY === 0;
    const reused = sameSystem && !retry && !this.reorderNext;
    const options = reused
      ? { ...this.options, ordering: previous!.ordering, permutation: previous!.perm }
      : sameSystem && !retry
        ? { ...this.options, ordering: previous!.ordering }
        : this.options;
    const sym = analyzeLdlt(pattern, options);
    if (!reused) this.freshNnzL = sym.nnzL;
    this.reorderNext = reused && sym.nnzL > REUSED_FILL_SLACK * this.freshNnzL;
    this.symbolic = sym;
    this.timing.analyzeMs += performance.now() - t0;
    this.timing.analyses++;
    return sym;
  }

  /** Numeric factorization of A (analyzing its pattern first when it changed). */
  factor(A: BsrMatrix): void {
    const sym = this.analyze(A.pattern);
    const t0 = performance.now();
    this.factoredWith = null;
    this.numericFactor(A, sym);
    this.compactMade = false;
    this.factoredWith = sym;
    this.timing.factorMs += performance.now() - t0;
    this.timing.factorizations++;
  }

  /**
   * x = A^-1 b with the current factor; with `compact`, with its float32 copy (compactCopy: an approximate inverse, for
   * preconditioning). b and x may be the same array.
   */
  solveFactored(b: Float64Array, x: Float64Array, compact = false): void {
    const sym = this.factoredWith;
    if (!sym) throw new Error('LdltSolver: solveFactored called before factor');
    if (compact && !this.options.compactCopy) throw new Error('LdltSolver: a compact solve needs the compactCopy option');
    if (compact && !this.compactMade) {
      // made on first use: a factor of a pattern that changes at once (contact) only serves its exact solve
      const t0 = performance.now();
      this.kernel.toFloats(0, sym.factorSize, 2 * this.compactBase);
      this.compactMade = true;
      this.timing.factorMs += performance.now() - t0;
    }
    const F = compact ? 2 * this.compactBase : 0; // where the panels are read: the doubles, or the float32 copy
    const t0 = performance.now();
    const kernel = this.kernel;
    const D = kernel.data;
    const Y = this.solveBase; // y lives in kernel memory so the kernels can read it
    const R = sym.relIndex.length; // the front rows follow the relative indices in the kernel's ints
    const { perm, supernodes, superStart, frontRowStart, panelStart } = sym;
    const n = sym.nodes;
    for (let c = 0; c < n; c++) {
      const o = 3 * perm[c];
      D[Y + 3 * c] = b[o];
      D[Y + 3 * c + 1] = b[o + 1];
      D[Y + 3 * c + 2] = b[o + 2];
    }
    // forward: L y = b by panels: the diagonal block's triangle, then y_below -= L21 y_block (scattered)
    for (let s = 0; s < supernodes; s++) {
      const ys = Y + 3 * superStart[s];
      const k = 3 * (superStart[s + 1] - superStart[s]);
      const r0 = frontRowStart[s] + k;
      const P = F + panelStart[s];
      kernel.triangularSolve(P, k, ys, compact);
      kernel.gemvScatter(P + k * k, k, ys, frontRowStart[s + 1] - r0, k, Y, R + r0, compact);
    }
    // backward: L^T x = y: y_block -= L21^T y_below (gathered), then the diagonal block's triangle transposed
    for (let s = supernodes - 1; s >= 0; s--) {
      const ys = Y + 3 * superStart[s];
      const k = 3 * (superStart[s + 1] - superStart[s]);
      const r0 = frontRowStart[s] + k;
      const P = F + panelStart[s];
      kernel.gatherGemvTransposed(P + k * k, k, Y, R + r0, frontRowStart[s + 1] - r0, k, ys, compact);
      kernel.triangularSolveTransposed(P, k, ys, compact);
    }
    for (let c = 0; c < n; c++) {
      const o = 3 * perm[c];
      x[o] = D[Y + 3 * c];
      x[o + 1] = D[Y + 3 * c + 1];
      x[o + 2] = D[Y + 3 * c + 2];
    }
    this.timing.solveMs += performance.now() - t0;
    this.timing.solves++;
  }

  /** Factors A and solves A x = b; the residual reported is |b - A x| / |b|. */
  solve(A: BsrMatrix, b: Float64Array, x: Float64Array): LinearSolveStats {
    let bb = 0;
    for (let i = 0; i < b.length; i++) bb += b[i] * b[i];
    if (bb === 0) {
      x.fill(0);
      return { iterations: 0, residual: 0 };
    }
    this.factor(A);
    this.solveFactored(b, x);
    if (this.residualWork.length !== b.length) this.residualWork = new Float64Array(b.length);
    const r = this.residualWork;
    A.multiply(x, r);
    let rr = 0;
    for (let i = 0; i < b.length; i++) {
      const d = b[i] - r[i];
      rr += d * d;
    }
    return { iterations: 1, residual: Math.sqrt(rr / bb) };
  }

  private numericFactor(A: BsrMatrix, sym: LdltSymbolic): void {
    const kernel = this.kernel;
    const D = kernel.data;
    const v = A.values;
    const { rowStart } = A.pattern;
    const { perm, supernodes, superStart, superParent, childCount, frontRowStart, panelStart } = sym;
    const { relStart, assemblyRow } = sym;
    const stackOwner = this.stackOwner;
    const stackOffset = this.stackOffset;
    let depth = 0; // update matrices on the stack
    let top = this.stackBase; // first free double of the stack
    for (let s = 0; s < supernodes; s++) {
      const f = superStart[s];
      const ncols = superStart[s + 1] - f;
      const k = 3 * ncols;
      const m = frontRowStart[s + 1] - frontRowStart[s];
      const r = m - k;
      const P = panelStart[s];
      const Uo = top; // this front's update matrix (r x r) goes above the children's
      D.fill(0, P, P + m * k);
      // The whole r x r square, though only its lower triangle is read: one fill instead of one per row, whose calls
      // cost more than the extra bytes (as the move below; 3-5 % of the bunny's factorization).
      D.fill(0, Uo, Uo + r * r);
      // assemble A's blocks of these columns: F[row][col] = A(row, col) = A(col, row)^T
      for (let c = 0; c < ncols; c++) {
        const node = perm[f + c];
        const c3 = P + 3 * c;
        for (let slot = rowStart[node]; slot < rowStart[node + 1]; slot++) {
          const lr = assemblyRow[slot];
          if (lr < 0) continue;
          const o = 9 * slot;
          const r0 = c3 + 3 * lr * k;
          const r1 = r0 + k;
          const r2 = r1 + k;
          D[r0] += v[o];
          D[r0 + 1] += v[o + 3];
          D[r0 + 2] += v[o + 6];
          D[r1] += v[o + 1];
          D[r1 + 1] += v[o + 4];
          D[r1 + 2] += v[o + 7];
          D[r2] += v[o + 2];
          D[r2 + 1] += v[o + 5];
          D[r2 + 2] += v[o + 8];
        }
      }
      // extend-add the children's update matrices (the top childCount[s] entries of the stack)
      const nch = childCount[s];
      for (let t = depth - nch; t < depth; t++) {
        const child = stackOwner[t];
        const rs = relStart[child];
        kernel.extendAdd(stackOffset[t], relStart[child + 1] - rs, rs, P, Uo, k, r);
      }
      let base = top;
      if (nch > 0) {
        depth -= nch;
        base = stackOffset[depth];
      }
      this.partialFactor(D, P, Uo, m, k, s, sym);
      // move the update matrix down over the consumed children and push it
      if (superParent[s] >= 0 && r > 0) {
        // the whole square in one move (copyWithin is a memmove: the destination lies below the source)
        if (base !== Uo) D.copyWithin(base, Uo, Uo + r * r);
        stackOwner[depth] = s;
        stackOffset[depth] = base;
        depth++;
        top = base + r * r;
      } else top = base;
    }
  }

  /**
   * Blocked Crout Cholesky of the front's k columns (panel P: m x k, stride k), then the Schur complement
   * U -= L21 L21^T of the remaining r = m - k rows into Uo (r x r, stride r).
   */
  private partialFactor(D: Float64Array, P: number, Uo: number, m: number, k: number, s: number, sym: LdltSymbolic): void {
    const kernel = this.kernel;
    const { croutBlock, qBlock, jBlock } = ldltTuning;
    for (let j0 = 0; j0 < k; j0 += croutBlock) {
      const j1 = Math.min(j0 + croutBlock, k);
      // update this block column (rows j0..m-1) with all earlier columns
      for (let qb = 0; qb < j0; qb += qBlock) {
        const qe = Math.min(qb + qBlock, j0);
        this.trapezoidUpdate(P + j0 * k + qb, P + j0 * k + j0, k, k, qe - qb, m - j0, j1 - j0);
      }
      // within the block, columns by pairs: update both with the block's earlier columns, factor their 2x2
      // diagonal block, then finish both in one pass over the rows below
      for (let c = j0; c < j1; c += 2) {
        const diag = P + c * k + c;
        if (c + 1 === j1) {
          if (c > j0) kernel.update(P + c * k + j0, P + c * k + j0, diag, k, k, c - j0, m - c, 1);
          const l00 = this.pivot(D[diag], c, s, sym);
          D[diag] = l00;
          kernel.scaleStrided(diag + k, k, m - c - 1, 1 / l00);
          continue;
        }
        if (c > j0) kernel.update(P + c * k + j0, P + c * k + j0, diag, k, k, c - j0, m - c, 2);
        const l00 = this.pivot(D[diag], c, s, sym);
        const inv0 = 1 / l00;
        D[diag] = l00;
        const l10 = D[diag + k] * inv0;
        D[diag + k] = l10;
        const l11 = this.pivot(D[diag + k + 1] - l10 * l10, c + 1, s, sym);
        D[diag + k + 1] = l11;
        kernel.finishColumnPair(diag + 2 * k, k, m - c - 2, inv0, l10, 1 / l11);
      }
    }
    // Schur complement: U[i][j] -= sum_q L[k+i][q] L[k+j][q], lower triangle by column blocks
    const r = m - k;
    for (let jb = 0; jb < r; jb += jBlock) {
      const je = Math.min(jb + jBlock, r);
      for (let qb = 0; qb < k; qb += qBlock) {
        const qe = Math.min(qb + qBlock, k);
        this.trapezoidUpdate(P + (k + jb) * k + qb, Uo + jb * r + jb, k, r, qe - qb, r - jb, je - jb);
      }
    }
  }

  /** The square root of a pivot; a pivot <= 0 (or NaN) means A is not positive definite. */
  private pivot(d: number, c: number, s: number, sym: LdltSymbolic): number {
    if (d > 0) return Math.sqrt(d);
    const column = sym.frontRows[sym.frontRowStart[s] + c];
    const node = sym.perm[Math.floor(column / 3)];
    throw new NotPositiveDefiniteError(
      `LdltSolver: matrix is not positive definite: pivot ${d} at DOF ${3 * node + (column % 3)} ` +
        `(node ${node}, elimination column ${column})`,
    );
  }

  /**
   * C[i][j] -= A_i . A_j for j < nc <= i < nr, and for j <= i < nc (the diagonal square, by strips of 4 rows so
   * that little of its upper side is computed). A rows have stride sab and length p, C rows stride sc.
   */
  private trapezoidUpdate(a: number, c: number, sab: number, sc: number, p: number, nr: number, nc: number): void {
    const kernel = this.kernel;
    for (let i0 = 0; i0 < nc; i0 += 4) {
      const i1 = Math.min(i0 + 4, nc);
      kernel.update(a + i0 * sab, a, c + i0 * sc, sab, sc, p, i1 - i0, i1);
    }
    if (nr > nc) kernel.update(a + nc * sab, a, c + nc * sc, sab, sc, p, nr - nc, nc);
  }
}
