/**
 * Fill-reducing orderings of the node graph of a BsrPattern, and the elimination-tree tools that rate them.
 *
 * Orderings work on nodes, not DOFs: each node's 3x3 block stays whole, the graph is 3x smaller, and the 3 DOFs of
 * a node become one supernode of width 3 (breaking the blocks costs fill, as CHOLMOD's runs on
 * the same matrices showed).
 * Two orderings are offered and rated by the symbolic factorization they produce (predicted nnz(L) and flops):
 * - approximate minimum degree (AMD-style: quotient graph, approximate external degrees, element absorption,
 *   supervariables), good on small or flat meshes;
 * - nested dissection by multilevel vertex separators (heavy-edge coarsening, greedy growing on the coarsest
 *   graph, vertex Fiduccia-Mattheyses refinement while uncoarsening), with minimum degree on small leaves; it
 *   wins on large 3D meshes, where minimum degree makes 1.5x the fill and 2.5x the flops.
 * Permutations map new position -> old node (perm[k] = node eliminated k-th).
 */
import type { BsrPattern } from './bsr.js';

/** Undirected graph in CSR form, no self loops. */
export interface NodeGraph {
  readonly n: number;
  readonly xadj: Int32Array;
  readonly adj: Int32Array;
}

export type OrderingMethod = 'amd' | 'nd' | 'natural';

/** The node graph of a pattern (the off-diagonal blocks). */
export function graphFromPattern(pattern: BsrPattern): NodeGraph {
  const { n, rowStart, col } = pattern;
  const xadj = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let deg = 0;
    for (let s = rowStart[i]; s < rowStart[i + 1]; s++) if (col[s] !== i) deg++;
    xadj[i + 1] = xadj[i] + deg;
  }
  const adj = new Int32Array(xadj[n]);
  for (let i = 0, t = 0; i < n; i++) for (let s = rowStart[i]; s < rowStart[i + 1]; s++) if (col[s] !== i) adj[t++] = col[s];
  return { n, xadj, adj };
}

export function inversePermutation(perm: Int32Array): Int32Array {
  const inv = new Int32Array(perm.length);
  for (let k = 0; k < perm.length; k++) inv[perm[k]] = k;
  return inv;
}

// ---------------------------------------------------------------------------------------------------------------
// Elimination tree, postorder, column counts

/** Elimination tree of the permuted graph (Liu's algorithm with path compression); parent[k] = -1 at roots. */
export function eliminationTree(g: NodeGraph, perm: Int32Array, iperm: Int32Array): Int32Array {
  const n = g.n;
  const parent = new Int32Array(n).fill(-1);
  const ancestor = new Int32Array(n).fill(-1);
  for (let k = 0; k < n; k++) {
    const v = perm[k];
    for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
      let r = iperm[g.adj[t]];
      if (r >= k) continue;
      // climb to the root of r's current subtree, pointing the path at k
      while (ancestor[r] !== -1 && ancestor[r] !== k) {
        const next = ancestor[r];
        ancestor[r] = k;
        r = next;
      }
      if (ancestor[r] === -1) {
        ancestor[r] = k;
        parent[r] = k;
      }
    }
  }
  return parent;
}

/**
 * Postorder of a forest (children before parents, each subtree contiguous). Among siblings the one with the largest
 * `weight` comes last, so it sits right before its parent and can be merged with it into one supernode.
 */
export function postorder(parent: Int32Array, weight?: Int32Array): Int32Array {
  const n = parent.length;
  const head = new Int32Array(n).fill(-1);
  const next = new Int32Array(n).fill(-1);
  // push children in reverse so that lists come out ascending; the heaviest child is then moved to the end
  for (let j = n - 1; j >= 0; j--) {
    const p = parent[j];
    if (p < 0) continue;
    next[j] = head[p];
    head[p] = j;
  }
  if (weight) {
    for (let p = 0; p < n; p++) {
      // move the heaviest child to the tail of p's list
      let best = -1;
      let bestPrev = -1;
      let prev = -1;
      for (let c = head[p]; c !== -1; prev = c, c = next[c]) {
        if (best === -1 || weight[c] >= weight[best]) {
          best = c;
          bestPrev = prev;
        }
      }
      if (best === -1 || next[best] === -1) continue;
      if (bestPrev === -1) head[p] = next[best];
      else next[bestPrev] = next[best];
      let tail = head[p];
      while (next[tail] !== -1) tail = next[tail];
      next[tail] = best;
      next[best] = -1;
    }
  }
  const post = new Int32Array(n);
  const stack = new Int32Array(n);
  let k = 0;
  for (let root = 0; root < n; root++) {
    if (parent[root] !== -1) continue;
    let top = 0;
    stack[0] = root;
    while (top >= 0) {
      const v = stack[top];
      const c = head[v];
      if (c === -1) {
        post[k++] = v;
        top--;
      } else {
        head[v] = next[c]; // consume the child
        stack[++top] = c;
      }
    }
  }
  return post;
}

/**
 * Node column counts of L (diagonal included) for the permuted graph, in about O(nnz(A)) (Gilbert, Ng and Peyton,
 * "An efficient algorithm to compute row and column counts for sparse Cholesky factorization"): in postorder, each
 * entry A(i, j), i > j, that starts a new leaf of row i's subtree adds 1 at j and takes 1 off at the least common
 * ancestor of j and the previous leaf (found with a path-compressed union-find); summing these differences up the
 * elimination tree gives the counts, without walking every row subtree (which costs O(nnz(L))).
 */
export function columnCounts(g: NodeGraph, perm: Int32Array, iperm: Int32Array, parent: Int32Array): Int32Array {
  const n = g.n;
  const post = postorder(parent);
  const counts = new Int32Array(n); // the differences first, the counts after the sums
  const first = new Int32Array(n).fill(-1); // postorder position of each node's first descendant
  const maxFirst = new Int32Array(n).fill(-1); // per row: the largest `first` of a leaf seen so far
  const prevLeaf = new Int32Array(n).fill(-1); // per row: its previous leaf
  const ancestor = new Int32Array(n); // union-find of the finished subtrees
  for (let k = 0; k < n; k++) {
    let j = post[k];
    counts[j] = first[j] === -1 ? 1 : 0; // a leaf of the elimination tree
    for (; j !== -1 && first[j] === -1; j = parent[j]) first[j] = k;
  }
  for (let i = 0; i < n; i++) ancestor[i] = i;
  for (let k = 0; k < n; k++) {
    const j = post[k];
    if (parent[j] !== -1) counts[parent[j]]--;
    const v = perm[j];
    for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
      const i = iperm[g.adj[t]];
      if (i <= j || first[j] <= maxFirst[i]) continue; // j is not a new leaf of row i's subtree
      maxFirst[i] = first[j];
      const previous = prevLeaf[i];
      prevLeaf[i] = j;
      counts[j]++;
      if (previous === -1) continue; // the first leaf: nothing counted twice
      let q = previous;
      while (q !== ancestor[q]) q = ancestor[q];
      for (let x = previous; x !== q; ) {
        const up = ancestor[x];
        ancestor[x] = q;
        x = up;
      }
      counts[q]--; // the paths from j and from the previous leaf meet at q
    }
    if (parent[j] !== -1) ancestor[j] = parent[j];
  }
  for (let k = 0; k < n; k++) {
    const j = post[k];
    if (parent[j] !== -1) counts[parent[j]] += counts[j];
  }
  return counts;
}

/** Predicted scalar nnz(L) and factorization flops (multiply-add = 2) when every node carries 3 DOFs. */
export interface FillEstimate {
  nnzL: number;
  flops: number;
}

export function estimateFill(nodeCounts: Int32Array): FillEstimate {
  let nnzL = 0;
  let flops = 0;
  for (let j = 0; j < nodeCounts.length; j++) {
    const c = 3 * nodeCounts[j];
    // the node's 3 scalar columns hold c, c-1, c-2 entries (diagonal included)
    for (let a = 0; a < 3; a++) {
      const cnt = c - a;
      nnzL += cnt;
      flops += cnt * cnt; // (cnt-1) divisions + (cnt-1)cnt/2 multiply-adds in the updates, about cnt^2 flops
    }
  }
  return { nnzL, flops };
}

/** Rates an ordering by the symbolic factorization it produces. */
export function rateOrdering(g: NodeGraph, perm: Int32Array): FillEstimate {
  const iperm = inversePermutation(perm);
  const parent = eliminationTree(g, perm, iperm);
  return estimateFill(columnCounts(g, perm, iperm, parent));
}

export interface OrderingChoice {
  perm: Int32Array;
  method: OrderingMethod;
  /** Estimates of every method tried, for reports. */
  estimates: Partial<Record<OrderingMethod, FillEstimate>>;
}

/**
 * Computes AMD and nested dissection and keeps the one with fewer predicted flops (flops, not nnz(L), set the
 * factorization time). Both run once per pattern and rating one costs a few percent of computing it, so trying
 * both is safer than a size threshold: minimum degree can win on small, thin or shell-like meshes, dissection wins
 * on 3D volumes (3993-DOF cube: 0.23 vs 0.36 GFlop; 14553-DOF bar: 2.9 vs 5.3 GFlop), and AMD costs a third
 * of dissection or less.
 */
export function chooseOrdering(g: NodeGraph, methods: OrderingMethod[] = ['amd', 'nd']): OrderingChoice {
  let best: OrderingChoice | null = null;
  const estimates: Partial<Record<OrderingMethod, FillEstimate>> = {};
  for (const method of methods) {
    const perm = method === 'amd' ? approximateMinimumDegree(g) : method === 'nd' ? nestedDissection(g) : identity(g.n);
    const est = rateOrdering(g, perm);
    estimates[method] = est;
    if (best === null || est.flops < estimates[best.method]!.flops) best = { perm, method, estimates };
  }
  if (best === null) throw new Error('chooseOrdering: no ordering method given');
  return best;
}

function identity(n: number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Approximate minimum degree

/** Node states of the quotient graph. */
const VARIABLE = 0;
const ELEMENT = 1;
/** A variable merged into a supervariable, or eliminated together with a pivot (mass elimination). */
const MERGED = 2;
/** An element absorbed by a newer one. */
const ABSORBED = 3;

/**
 * Minimum degree ordering on the quotient graph (Amestoy, Davis and Duff, "An approximate minimum degree ordering
 * algorithm"), with
 * - approximate external degrees d_i = min(n_left - |i|, d_i_old + |Lp \ i|, |A_i \ i| + |Lp \ i| +
 *   sum_{e in E_i, e != p} |Le \ Lp|), where p is the new element and |Le \ Lp| comes from one pass over Lp;
 * - element absorption (every element next to the pivot, and aggressively any element whose variables all lie in Lp);
 * - supervariables (variables of Lp with the same elements and variables, found by hashing) and mass elimination.
 * All lists live in one Int32Array: a variable's list holds its elements first (elen of them), then its variables; an
 * element's list holds its variables. Lists only shrink in place; a new element's list is appended at the end, and
 * the array doubles when it is full (its total is bounded by nnz(A) plus the nonzeros of L in supervariables).
 */
export function approximateMinimumDegree(g: NodeGraph): Int32Array {
  const n = g.n;
  const perm = new Int32Array(n);
  if (n === 0) return perm;
  let iw = new Int32Array(Math.max(16, 2 * g.xadj[n] + n));
  iw.set(g.adj);
  let pfree = g.xadj[n];
  const pe = g.xadj.slice(0, n);
  const len = new Int32Array(n);
  const elen = new Int32Array(n);
  const nv = new Int32Array(n).fill(1); // supervariable weight; negated while the variable is in Lp
  const degree = new Int32Array(n); // variables: approximate external degree; elements: |Le|
  const state = new Uint8Array(n);
  const owner = new Int32Array(n).fill(-1); // MERGED/ABSORBED: the node it went into
  const step = new Int32Array(n).fill(-1); // pivots: when they were eliminated
  // w[e] >= wflg: wflg + |Le \ Lp| during the current pivot's update (doubles: the flag never overflows)
  const w = new Float64Array(n);
  let wflg = 1;
  const head = new Int32Array(n + 1).fill(-1); // degree buckets, doubly linked
  const next = new Int32Array(n).fill(-1);
  const prev = new Int32Array(n).fill(-1);
  const hashHead = new Int32Array(n).fill(-1);
  const hashNext = new Int32Array(n).fill(-1);
  const hashOf = new Int32Array(n);
  const mark = new Int32Array(n).fill(-1);
  let stamp = 0;
  let maxLen = 0;
  for (let i = 0; i < n; i++) {
    len[i] = g.xadj[i + 1] - g.xadj[i];
    degree[i] = len[i];
    if (len[i] > maxLen) maxLen = len[i];
  }
  const listCopy = new Int32Array(maxLen + 1); // a variable's list never grows (see the degree update)
  const insert = (i: number): void => {
    const d = degree[i];
    prev[i] = -1;
    next[i] = head[d];
    if (head[d] !== -1) prev[head[d]] = i;
    head[d] = i;
  };
  const remove = (i: number): void => {
    if (prev[i] !== -1) next[prev[i]] = next[i];
    else head[degree[i]] = next[i];
    if (next[i] !== -1) prev[next[i]] = prev[i];
  };
  for (let i = 0; i < n; i++) insert(i);
  let minDeg = 0;
  let eliminated = 0; // weight of eliminated variables
  let pivots = 0;
  while (eliminated < n) {
    while (head[minDeg] === -1) minDeg++;
    const me = head[minDeg];
    remove(me);
    step[me] = pivots++;
    let nvPivot = nv[me];
    eliminated += nvPivot;
    nv[me] = -nvPivot;

    // Lp: the variables of me's elements and of its own list, each flagged by a negative nv; those elements die
    let p1: number;
    let p2: number;
    if (elen[me] === 0) {
      p1 = pe[me];
      p2 = p1;
      for (let t = p1; t < p1 + len[me]; t++) {
        const j = iw[t];
        if (state[j] !== VARIABLE || nv[j] <= 0) continue;
        nv[j] = -nv[j];
        iw[p2++] = j;
        remove(j);
      }
    } else {
      let need = len[me];
      for (let t = pe[me]; t < pe[me] + elen[me]; t++) if (state[iw[t]] === ELEMENT) need += len[iw[t]];
      if (pfree + need > iw.length) {
        const grown = new Int32Array(Math.max(2 * iw.length, pfree + need));
        grown.set(iw.subarray(0, pfree));
        iw = grown;
      }
      p1 = pfree;
      p2 = p1;
      const start = pe[me];
      for (let t = start; t < start + len[me]; t++) {
        const x = iw[t];
        if (t < start + elen[me]) {
          if (state[x] !== ELEMENT) continue;
          for (let q = pe[x]; q < pe[x] + len[x]; q++) {
            const j = iw[q];
            if (state[j] !== VARIABLE || nv[j] <= 0) continue;
            nv[j] = -nv[j];
            iw[p2++] = j;
            remove(j);
          }
          state[x] = ABSORBED;
          owner[x] = me;
        } else if (state[x] === VARIABLE && nv[x] > 0) {
          nv[x] = -nv[x];
          iw[p2++] = x;
          remove(x);
        }
      }
      pfree = p2;
    }
    pe[me] = p1;
    state[me] = ELEMENT;
    elen[me] = 0;

    // |Le \ Lp| of every element next to Lp: w[e] = wflg + |Le| - (weight of Le inside Lp)
    for (let t = p1; t < p2; t++) {
      const i = iw[t];
      const nvi = -nv[i];
      for (let q = pe[i]; q < pe[i] + elen[i]; q++) {
        const e = iw[q];
        if (state[e] !== ELEMENT) continue;
        w[e] = w[e] >= wflg ? w[e] - nvi : degree[e] + wflg - nvi;
      }
    }

    // each variable of Lp: prune its lists (me replaces the absorbed elements and Lp's variables), sum its
    // external degree, absorb elements inside Lp, hash it; a variable left with me alone goes with the pivot
    for (let t = p1; t < p2; t++) {
      const i = iw[t];
      const nvi = -nv[i];
      const start = pe[i];
      const oldLen = len[i];
      const oldElen = elen[i];
      for (let q = 0; q < oldLen; q++) listCopy[q] = iw[start + q];
      let out = start;
      iw[out++] = me;
      let deg = 0;
      let hash = me;
      for (let q = 0; q < oldElen; q++) {
        const e = listCopy[q];
        if (state[e] !== ELEMENT) continue;
        const outside = w[e] - wflg;
        if (outside > 0) {
          deg += outside;
          iw[out++] = e;
          hash += e;
        } else {
          state[e] = ABSORBED; // aggressive absorption: Le lies inside Lp
          owner[e] = me;
        }
      }
      elen[i] = out - start;
      for (let q = oldElen; q < oldLen; q++) {
        const j = listCopy[q];
        if (state[j] !== VARIABLE || nv[j] <= 0) continue;
        deg += nv[j];
        iw[out++] = j;
        hash += j;
      }
      len[i] = out - start;
      if (len[i] === 1) {
        state[i] = MERGED; // mass elimination: i is adjacent to nothing but the pivot
        owner[i] = me;
        nv[i] = 0;
        nvPivot += nvi;
        eliminated += nvi;
        continue;
      }
      if (deg < degree[i]) degree[i] = deg;
      const h = hash % n;
      hashOf[i] = h;
      hashNext[i] = hashHead[h];
      hashHead[h] = i;
    }

    // supervariables: variables of one hash bucket with identical lists merge
    for (let t = p1; t < p2; t++) {
      const first = iw[t];
      if (nv[first] === 0 || hashHead[hashOf[first]] === -1) continue;
      const bucket = hashHead[hashOf[first]];
      hashHead[hashOf[first]] = -1;
      for (let i = bucket; i !== -1; i = hashNext[i]) {
        if (nv[i] === 0 || hashNext[i] === -1) continue;
        stamp++;
        for (let q = pe[i]; q < pe[i] + len[i]; q++) mark[iw[q]] = stamp;
        for (let j = hashNext[i]; j !== -1; j = hashNext[j]) {
          if (nv[j] === 0 || len[j] !== len[i] || elen[j] !== elen[i]) continue;
          let same = true;
          for (let q = pe[j]; q < pe[j] + len[j]; q++) {
            if (mark[iw[q]] !== stamp) {
              same = false;
              break;
            }
          }
          if (!same) continue;
          nv[i] += nv[j]; // both negative while in Lp
          nv[j] = 0;
          state[j] = MERGED;
          owner[j] = i;
        }
      }
    }

    // final degrees; Lp keeps its live supervariables and becomes the element me
    let degMe = 0;
    let out = p1;
    for (let t = p1; t < p2; t++) {
      const i = iw[t];
      if (nv[i] === 0) continue;
      degMe -= nv[i];
      iw[out++] = i;
    }
    const left = n - eliminated;
    for (let t = p1; t < out; t++) {
      const i = iw[t];
      const nvi = -nv[i];
      nv[i] = nvi;
      let d = degree[i] + degMe - nvi;
      if (left - nvi < d) d = left - nvi;
      degree[i] = d;
      insert(i);
      if (d < minDeg) minDeg = d;
    }
    len[me] = out - p1;
    degree[me] = degMe;
    nv[me] = nvPivot;
    wflg += n + 1;
  }

  // every variable goes where its owner chain ends (a pivot), pivots in the order they were chosen
  const root = new Int32Array(n);
  const count = new Int32Array(pivots + 1);
  for (let v = 0; v < n; v++) {
    let r = v;
    while (state[r] === MERGED) r = owner[r];
    root[v] = r;
    count[step[r] + 1]++;
  }
  for (let s = 0; s < pivots; s++) count[s + 1] += count[s];
  for (let v = 0; v < n; v++) if (root[v] === v) perm[count[step[v]]++] = v; // the pivot first
  for (let v = 0; v < n; v++) if (root[v] !== v) perm[count[step[root[v]]]++] = v;
  return perm;
}

// ---------------------------------------------------------------------------------------------------------------
// Nested dissection

/** Weighted graph used while coarsening. */
interface WGraph {
  n: number;
  xadj: Int32Array;
  adj: Int32Array;
  ewgt: Int32Array;
  vwgt: Int32Array;
  totalWeight: number;
}

export interface NestedDissectionOptions {
  /** Subgraphs up to this many nodes are ordered by minimum degree. */
  leafSize?: number;
  /** Largest part weight allowed, as a fraction of the subgraph weight. */
  maxPartFraction?: number;
  /** Seed of the deterministic random generator (matching order, initial seeds). */
  seed?: number;
  /** Greedy-growing trials for the initial separator on the coarsest graph. */
  initialTrials?: number;
  /** Fiduccia-Mattheyses passes per level. */
  refinePasses?: number;
  /** A pass stops after this many moves without a better separator. */
  stallMoves?: number;
  /** Subgraphs with at least this many nodes get `tries` separators, and keep the smallest balanced one. */
  multiTryNodes?: number;
  tries?: number;
}

/** Nested dissection ordering: separators last, parts recursively, minimum degree on leaves. */
export function nestedDissection(g: NodeGraph, options: NestedDissectionOptions = {}): Int32Array {
  const leafSize = options.leafSize ?? 96;
  const maxPartFraction = options.maxPartFraction ?? 0.56;
  const rng = new Random(options.seed ?? 12345);
  const tuning: SeparatorTuning = {
    maxPartFraction,
    initialTrials: options.initialTrials ?? 4,
    refinePasses: options.refinePasses ?? 4,
    stallMoves: options.stallMoves ?? 50,
    multiTryNodes: options.multiTryNodes ?? 1000,
    tries: options.tries ?? 2,
  };
  const n = g.n;
  const perm = new Int32Array(n);
  const localOf = new Int32Array(n).fill(-1);
  const where = new Uint8Array(n);

  // orders the given node set into perm[end - nodes.length, end)
  const orderByMinimumDegree = (sub: NodeGraph, nodes: Int32Array, end: number): void => {
    const local = approximateMinimumDegree(sub);
    const start = end - nodes.length;
    for (let t = 0; t < local.length; t++) perm[start + t] = nodes[local[t]];
  };
  const dissect = (nodes: Int32Array, end: number): void => {
    const sub = inducedSubgraph(g, nodes, localOf);
    if (nodes.length <= leafSize) {
      orderByMinimumDegree(sub, nodes, end);
      return;
    }
    const components = connectedComponents(sub);
    if (components.count > 1) {
      const parts = splitByLabel(nodes, components.label, components.count);
      let pos = end;
      for (let c = components.count - 1; c >= 0; c--) {
        dissect(parts[c], pos);
        pos -= parts[c].length;
      }
      return;
    }
    // the top separators set most of the fill: on big subgraphs keep the best of a few tries
    const wsub = toWeighted(sub);
    let side = vertexSeparator(wsub, tuning, rng);
    const tries = nodes.length >= tuning.multiTryNodes ? tuning.tries : 1;
    let bestScore = tries > 1 ? separatorScore(wsub, side, maxPartFraction) : 0;
    for (let t = 1; t < tries; t++) {
      const other = vertexSeparator(wsub, tuning, rng);
      const score = separatorScore(wsub, other, maxPartFraction);
      if (score < bestScore) {
        bestScore = score;
        side = other;
      }
    }
    let n0 = 0;
    let n1 = 0;
    for (let t = 0; t < side.length; t++) {
      where[nodes[t]] = side[t];
      if (side[t] === 0) n0++;
      else if (side[t] === 1) n1++;
    }
    const nS = nodes.length - n0 - n1;
    if (n0 === 0 || n1 === 0) {
      orderByMinimumDegree(sub, nodes, end); // no useful split (a near-clique): minimum degree does as well
      return;
    }
    const part0 = new Int32Array(n0);
    const part1 = new Int32Array(n1);
    let a = 0;
    let b = 0;
    let s = end - nS;
    for (let t = 0; t < nodes.length; t++) {
      const v = nodes[t];
      if (where[v] === 0) part0[a++] = v;
      else if (where[v] === 1) part1[b++] = v;
      else perm[s++] = v;
    }
    dissect(part1, end - nS);
    dissect(part0, end - nS - n1);
  };

  const all = new Int32Array(n);
  for (let i = 0; i < n; i++) all[i] = i;
  if (n > 0) dissect(all, n);
  return perm;
}

function inducedSubgraph(g: NodeGraph, nodes: Int32Array, localOf: Int32Array): NodeGraph {
  const m = nodes.length;
  for (let t = 0; t < m; t++) localOf[nodes[t]] = t;
  const xadj = new Int32Array(m + 1);
  for (let t = 0; t < m; t++) {
    const v = nodes[t];
    let d = 0;
    for (let s = g.xadj[v]; s < g.xadj[v + 1]; s++) if (localOf[g.adj[s]] >= 0) d++;
    xadj[t + 1] = xadj[t] + d;
  }
  const adj = new Int32Array(xadj[m]);
  for (let t = 0, q = 0; t < m; t++) {
    const v = nodes[t];
    for (let s = g.xadj[v]; s < g.xadj[v + 1]; s++) {
      const l = localOf[g.adj[s]];
      if (l >= 0) adj[q++] = l;
    }
  }
  for (let t = 0; t < m; t++) localOf[nodes[t]] = -1;
  return { n: m, xadj, adj };
}

function connectedComponents(g: NodeGraph): { count: number; label: Int32Array } {
  const label = new Int32Array(g.n).fill(-1);
  const queue = new Int32Array(g.n);
  let count = 0;
  for (let s = 0; s < g.n; s++) {
    if (label[s] >= 0) continue;
    let qh = 0;
    let qt = 0;
    queue[qt++] = s;
    label[s] = count;
    while (qh < qt) {
      const v = queue[qh++];
      for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
        const u = g.adj[t];
        if (label[u] < 0) {
          label[u] = count;
          queue[qt++] = u;
        }
      }
    }
    count++;
  }
  return { count, label };
}

/** The nodes of each label, in one pass (a counting sort). */
function splitByLabel(nodes: Int32Array, label: Int32Array, count: number): Int32Array[] {
  const size = new Int32Array(count);
  for (let t = 0; t < nodes.length; t++) size[label[t]]++;
  const parts = Array.from(size, (m) => new Int32Array(m));
  size.fill(0);
  for (let t = 0; t < nodes.length; t++) {
    const c = label[t];
    parts[c][size[c]++] = nodes[t];
  }
  return parts;
}

function toWeighted(g: NodeGraph): WGraph {
  return {
    n: g.n,
    xadj: g.xadj,
    adj: g.adj,
    ewgt: new Int32Array(g.adj.length).fill(1),
    vwgt: new Int32Array(g.n).fill(1),
    totalWeight: g.n,
  };
}

/** Small deterministic generator (xorshift32), so orderings are reproducible. */
class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0 || 1;
  }
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.state = x;
    return x;
  }
  below(n: number): number {
    return this.next() % n;
  }
}

const COARSEST_SIZE = 120;

interface SeparatorTuning {
  maxPartFraction: number;
  initialTrials: number;
  refinePasses: number;
  stallMoves: number;
  multiTryNodes: number;
  tries: number;
}

/**
 * Multilevel vertex separator of a connected graph: returns side[v] in {0, 1, 2 = separator}, with no edge between
 * sides 0 and 1 and each side at most maxPartFraction of the total weight when it can be.
 */
function vertexSeparator(g: WGraph, tuning: SeparatorTuning, rng: Random): Uint8Array {
  const levels: WGraph[] = [g];
  const maps: Int32Array[] = [];
  while (levels[levels.length - 1].n > COARSEST_SIZE) {
    const fine = levels[levels.length - 1];
    const { coarse, map } = coarsen(fine, rng);
    if (coarse.n > 0.9 * fine.n) break; // matching stalls (star-like graphs): stop coarsening
    levels.push(coarse);
    maps.push(map);
  }
  const coarsest = levels[levels.length - 1];
  let side = initialSeparator(coarsest, tuning, rng);
  for (let l = levels.length - 2; l >= 0; l--) {
    const fine = levels[l];
    const map = maps[l];
    const projected = new Uint8Array(fine.n);
    for (let v = 0; v < fine.n; v++) projected[v] = side[map[v]];
    side = projected;
    refineSeparator(fine, side, tuning);
  }
  return side;
}

/**
 * Heavy-edge matching (vertices visited in random order), then the graph of matched pairs. Coarse vertices are
 * numbered in the order of their first fine vertex, so the contraction reads the fine graph front to back.
 */
function coarsen(g: WGraph, rng: Random): { coarse: WGraph; map: Int32Array } {
  const { n, xadj, adj, ewgt, vwgt } = g;
  const match = new Int32Array(n).fill(-1);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (let t = 0; t < n; t++) {
    const v = order[t];
    if (match[v] !== -1) continue;
    let best = v;
    let bestW = 0;
    let bestV = 0;
    for (let s = xadj[v], end = xadj[v + 1]; s < end; s++) {
      const u = adj[s];
      if (match[u] !== -1) continue;
      // heaviest edge; among equals the lighter vertex keeps coarse weights even
      const w = ewgt[s];
      if (w > bestW || (w === bestW && vwgt[u] < bestV)) {
        best = u;
        bestW = w;
        bestV = vwgt[u];
      }
    }
    match[v] = best;
    match[best] = v;
  }
  const map = new Int32Array(n).fill(-1);
  const members = new Int32Array(2 * n);
  let nc = 0;
  for (let v = 0; v < n; v++) {
    if (map[v] !== -1) continue;
    const u = match[v];
    map[v] = nc;
    map[u] = nc;
    members[2 * nc] = v;
    members[2 * nc + 1] = u; // = v when unmatched
    nc++;
  }
  // contraction without data-dependent branches: each coarse vertex first reserves a slot for its own (self) edges,
  // a neighbour seen before adds to its slot, a new one takes the next slot (wBuf is zero past q)
  const cxadj = new Int32Array(nc + 1);
  const adjBuf = new Int32Array(adj.length + nc);
  const wBuf = new Int32Array(adj.length + nc);
  const cvwgt = new Int32Array(nc);
  const slot = new Int32Array(nc).fill(-1);
  let q = 0;
  for (let c = 0; c < nc; c++) {
    const start = q;
    slot[c] = q++;
    const v0 = members[2 * c];
    const v1 = members[2 * c + 1];
    cvwgt[c] = v0 === v1 ? vwgt[v0] : vwgt[v0] + vwgt[v1];
    const e0 = xadj[v0 + 1];
    const s1 = v0 === v1 ? e0 : xadj[v1];
    const e1 = v0 === v1 ? e0 : xadj[v1 + 1];
    for (let s = xadj[v0]; s < e0; s++) q = accumulate(map[adj[s]], ewgt[s], start, q, slot, adjBuf, wBuf);
    for (let s = s1; s < e1; s++) q = accumulate(map[adj[s]], ewgt[s], start, q, slot, adjBuf, wBuf);
    // drop the self slot: the last entry moves into it (slots must stay below the next row's start)
    q--;
    slot[c] = -1;
    if (q > start) {
      adjBuf[start] = adjBuf[q];
      wBuf[start] = wBuf[q];
      slot[adjBuf[start]] = start;
    }
    wBuf[q] = 0;
    cxadj[c + 1] = q;
  }
  return {
    coarse: { n: nc, xadj: cxadj, adj: adjBuf.slice(0, q), ewgt: wBuf.slice(0, q), vwgt: cvwgt, totalWeight: g.totalWeight },
    map,
  };
}

/** Adds an edge to coarse vertex cu into the current coarse row (see coarsen); returns the new row end. */
function accumulate(cu: number, w: number, start: number, q: number, slot: Int32Array, adjBuf: Int32Array, wBuf: Int32Array): number {
  const seen = slot[cu];
  const fresh = (seen - start) >>> 31; // 1 when cu is not in this row yet
  const pos = seen + fresh * (q - seen);
  slot[cu] = pos;
  adjBuf[pos] = cu;
  wBuf[pos] += w;
  return q + fresh;
}

/** Greedy graph growing from several seeds, each refined; keeps the smallest balanced separator. */
function initialSeparator(g: WGraph, tuning: SeparatorTuning, rng: Random): Uint8Array {
  const n = g.n;
  let best: Uint8Array | null = null;
  let bestScore = Infinity;
  const queue = new Int32Array(n);
  const seen = new Uint8Array(n);
  for (let trial = 0; trial < tuning.initialTrials; trial++) {
    const side = new Uint8Array(n).fill(1);
    seen.fill(0);
    const seed = trial === 0 ? pseudoPeripheral(g, 0, queue) : rng.below(n);
    let grown = 0;
    const half = g.totalWeight / 2;
    let qh = 0;
    let qt = 0;
    queue[qt++] = seed;
    seen[seed] = 1;
    while (grown < half) {
      if (qh === qt) {
        // disconnected coarse graph: continue from any unseen vertex
        let s = 0;
        while (s < n && seen[s]) s++;
        if (s === n) break;
        queue[qt++] = s;
        seen[s] = 1;
      }
      const v = queue[qh++];
      side[v] = 0;
      grown += g.vwgt[v];
      for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
        const u = g.adj[t];
        if (!seen[u]) {
          seen[u] = 1;
          queue[qt++] = u;
        }
      }
    }
    // the boundary of side 0 becomes the separator
    for (let v = 0; v < n; v++) {
      if (side[v] !== 0) continue;
      for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) {
        if (side[g.adj[t]] === 1) {
          side[v] = 2;
          break;
        }
      }
    }
    refineSeparator(g, side, tuning);
    const score = separatorScore(g, side, tuning.maxPartFraction);
    if (score < bestScore) {
      bestScore = score;
      best = side;
    }
  }
  return best!;
}

/** Separator weight, with a large penalty for imbalance beyond the allowed fraction. */
function separatorScore(g: WGraph, side: Uint8Array, maxPartFraction: number): number {
  const pw = [0, 0, 0];
  for (let v = 0; v < g.n; v++) pw[side[v]] += g.vwgt[v];
  const limit = maxPartFraction * g.totalWeight;
  const excess = Math.max(0, Math.max(pw[0], pw[1]) - limit);
  return pw[2] + 10 * excess + 1e-3 * Math.abs(pw[0] - pw[1]);
}

/** A node at the end of a long BFS path: repeated BFS from the farthest node found. */
function pseudoPeripheral(g: WGraph, start: number, queue: Int32Array): number {
  const dist = new Int32Array(g.n);
  let v = start;
  let ecc = -1;
  for (let iter = 0; iter < 8; iter++) {
    dist.fill(-1);
    let qh = 0;
    let qt = 0;
    queue[qt++] = v;
    dist[v] = 0;
    let far = v;
    while (qh < qt) {
      const x = queue[qh++];
      // farthest, and among the farthest the one of smallest degree
      const degree = g.xadj[x + 1] - g.xadj[x];
      if (dist[x] > dist[far] || (dist[x] === dist[far] && degree < g.xadj[far + 1] - g.xadj[far])) far = x;
      for (let t = g.xadj[x]; t < g.xadj[x + 1]; t++) {
        const u = g.adj[t];
        if (dist[u] < 0) {
          dist[u] = dist[x] + 1;
          queue[qt++] = u;
        }
      }
    }
    if (dist[far] <= ecc) break;
    ecc = dist[far];
    v = far;
  }
  return v;
}

/**
 * Vertex-separator Fiduccia-Mattheyses: moving separator vertex v to side t pulls its neighbours on the other side
 * into the separator; gain_t(v) = w(v) - w(neighbours of v on side 1-t). Each pass moves vertices by best gain
 * (balance permitting), then rolls back to the best separator seen.
 */
function refineSeparator(g: WGraph, side: Uint8Array, tuning: SeparatorTuning): void {
  const n = g.n;
  const { xadj, adj, vwgt } = g;
  const limit = Math.floor(tuning.maxPartFraction * g.totalWeight);
  const gain0 = new Int32Array(n);
  const gain1 = new Int32Array(n);
  const heap0 = new IndexedMaxHeap(n, gain0);
  const heap1 = new IndexedMaxHeap(n, gain1);
  const locked = new Uint8Array(n);
  const logVertex: number[] = [];
  const logSide: number[] = [];
  const pw = [0, 0, 0];
  for (let v = 0; v < n; v++) pw[side[v]] += vwgt[v];
  const computeGains = (v: number): void => {
    let w0 = 0;
    let w1 = 0;
    for (let t = xadj[v]; t < xadj[v + 1]; t++) {
      const u = adj[t];
      if (side[u] === 0) w0 += vwgt[u];
      else if (side[u] === 1) w1 += vwgt[u];
    }
    gain0[v] = vwgt[v] - w1; // moving to side 0 pulls side-1 neighbours
    gain1[v] = vwgt[v] - w0;
  };
  const better = (sep: number, imb: number, bestSep: number, bestImb: number): boolean =>
    sep < bestSep || (sep === bestSep && imb < bestImb);
  for (let pass = 0; pass < tuning.refinePasses; pass++) {
    heap0.clear();
    heap1.clear();
    locked.fill(0);
    for (let v = 0; v < n; v++) {
      if (side[v] !== 2) continue;
      computeGains(v);
      heap0.push(v);
      heap1.push(v);
    }
    const startSep = pw[2];
    const balanced = (): boolean => pw[0] <= limit && pw[1] <= limit;
    let bestSep = balanced() ? pw[2] : Infinity;
    let bestImb = Math.abs(pw[0] - pw[1]);
    let bestLen = 0;
    logVertex.length = 0;
    logSide.length = 0;
    const maxStall = tuning.stallMoves;
    let stall = 0;
    while (stall < maxStall) {
      const v0 = heap0.size > 0 ? heap0.top() : -1;
      const v1 = heap1.size > 0 ? heap1.top() : -1;
      if (v0 < 0 && v1 < 0) break;
      // choose the side: best gain among moves that keep the target side within the limit
      const ok0 = v0 >= 0 && pw[0] + vwgt[v0] <= limit;
      const ok1 = v1 >= 0 && pw[1] + vwgt[v1] <= limit;
      let to: number;
      if (ok0 && ok1) {
        if (gain0[v0] > gain1[v1]) to = 0;
        else if (gain1[v1] > gain0[v0]) to = 1;
        else to = pw[0] <= pw[1] ? 0 : 1;
      } else if (ok0) to = 0;
      else if (ok1) to = 1;
      else {
        // neither fits: move towards the lighter side if that side has candidates, else stop
        to = pw[0] <= pw[1] ? 0 : 1;
        if ((to === 0 ? v0 : v1) < 0) break;
      }
      const v = to === 0 ? v0 : v1;
      const other = 1 - to;
      heap0.remove(v);
      heap1.remove(v);
      locked[v] = 1;
      logVertex.push(v);
      logSide.push(2);
      side[v] = to;
      pw[to] += vwgt[v];
      pw[2] -= vwgt[v];
      // separator neighbours of v: moving them to `other` now pulls v
      for (let t = xadj[v]; t < xadj[v + 1]; t++) {
        const u = adj[t];
        if (side[u] === 2 && !locked[u]) {
          if (other === 0) {
            gain0[u] -= vwgt[v];
            heap0.update(u);
          } else {
            gain1[u] -= vwgt[v];
            heap1.update(u);
          }
        }
      }
      // neighbours on the other side join the separator
      for (let t = xadj[v]; t < xadj[v + 1]; t++) {
        const u = adj[t];
        if (side[u] !== other) continue;
        logVertex.push(u);
        logSide.push(other);
        side[u] = 2;
        pw[other] -= vwgt[u];
        pw[2] += vwgt[u];
        for (let s = xadj[u]; s < xadj[u + 1]; s++) {
          const x = adj[s];
          if (side[x] === 2 && !locked[x] && x !== u) {
            // x no longer sees u on side `other`: moving x to `to` pulls less
            if (to === 0) {
              gain0[x] += vwgt[u];
              if (heap0.has(x)) heap0.update(x);
            } else {
              gain1[x] += vwgt[u];
              if (heap1.has(x)) heap1.update(x);
            }
          }
        }
        if (!locked[u]) {
          computeGains(u);
          heap0.push(u);
          heap1.push(u);
        }
      }
      const imb = Math.abs(pw[0] - pw[1]);
      if (balanced() && better(pw[2], imb, bestSep, bestImb)) {
        bestSep = pw[2];
        bestImb = imb;
        bestLen = logVertex.length;
        stall = 0;
      } else stall++;
    }
    // roll back to the best state
    if (bestSep === Infinity) bestLen = logVertex.length; // never balanced: keep the moves (they aimed at balance)
    for (let t = logVertex.length - 1; t >= bestLen; t--) {
      const v = logVertex[t];
      pw[side[v]] -= vwgt[v];
      side[v] = logSide[t];
      pw[side[v]] += vwgt[v];
    }
    if (pw[2] >= startSep && bestSep !== Infinity) break;
  }
}

/** Binary max-heap over vertex ids keyed by an external gain array. */
class IndexedMaxHeap {
  private readonly heap: Int32Array;
  private readonly pos: Int32Array;
  size = 0;

  constructor(
    n: number,
    private readonly key: Int32Array,
  ) {
    this.heap = new Int32Array(n);
    this.pos = new Int32Array(n).fill(-1);
  }

  clear(): void {
    for (let i = 0; i < this.size; i++) this.pos[this.heap[i]] = -1;
    this.size = 0;
  }

  has(v: number): boolean {
    return this.pos[v] >= 0;
  }

  top(): number {
    return this.heap[0];
  }

  push(v: number): void {
    if (this.pos[v] >= 0) {
      this.update(v);
      return;
    }
    this.heap[this.size] = v;
    this.pos[v] = this.size;
    this.size++;
    this.up(this.size - 1);
  }

  remove(v: number): void {
    const i = this.pos[v];
    if (i < 0) return;
    this.size--;
    this.pos[v] = -1;
    if (i === this.size) return;
    const last = this.heap[this.size];
    this.heap[i] = last;
    this.pos[last] = i;
    this.up(i);
    this.down(this.pos[last]);
  }

  update(v: number): void {
    const i = this.pos[v];
    if (i < 0) return;
    this.up(i);
    this.down(this.pos[v]);
  }

  private up(i: number): void {
    const { heap, pos, key } = this;
    const v = heap[i];
    const kv = key[v];
    while (i > 0) {
      const p = (i - 1) >> 1;
      const u = heap[p];
      if (key[u] >= kv) break;
      heap[i] = u;
      pos[u] = i;
      i = p;
    }
    heap[i] = v;
    pos[v] = i;
  }

  private down(i: number): void {
    const { heap, pos, key } = this;
    const v = heap[i];
    const kv = key[v];
    const size = this.size;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && key[heap[c + 1]] > key[heap[c]]) c++;
      const u = heap[c];
      if (key[u] <= kv) break;
      heap[i] = u;
      pos[u] = i;
      i = c;
    }
    heap[i] = v;
    pos[v] = i;
  }
}
