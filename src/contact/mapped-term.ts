/**
 * A per-vertex term (the contact barrier, lagged friction) acting on DOFs through the model's vertex map
 * (model/vertex-map.ts): the term sees vertex positions y = J q and writes a vertex-space gradient and Hessian; this
 * wrapper pulls them back, J^T g and J^T H J, 3x3 block by 3x3 block (a vertex's Jacobian is (w_1 I, ..., w_k I),
 * so block (a, b) of J^T H J gathers w_a w_b H_uw over the vertex blocks (u, w) whose vertices use nodes a and b).
 * Vertex trajectories are linear in q: along a Newton step dq a vertex moves by J dq on a straight line, so the
 * term's CCD and line-search filter, evaluated at y and J dq, are exact.
 *
 * Used only when the map is not the identity (affine bodies): otherwise the terms act on q directly.
 */
import { BsrMatrix, PatternBuilder, type BsrPattern } from '../math/bsr.js';
import type { PotentialTerm } from '../energies/potential.js';
import { addPulledBackGradient, vertexPositions, type VertexMap } from '../model/vertex-map.js';
import type { FrictionPotential } from './friction-potential.js';

export class MappedTerm<T extends PotentialTerm = PotentialTerm> implements PotentialTerm {
  readonly name: string;
  private readonly y: Float64Array;
  private readonly dy: Float64Array;
  private readonly patternY: Float64Array;
  private readonly gy: Float64Array;
  private vertexPattern: BsrPattern | null = null;
  private Hy: BsrMatrix | null = null;
  /** For each vertex-matrix slot s: its DOF blocks dofSlot[start[s] .. start[s + 1]) with weight products. */
  private start = new Int32Array(1);
  private dofSlot = new Int32Array(0);
  private weight = new Float64Array(0);
  private boundId = -1;
  private boundVertexId = -1;

  constructor(
    readonly inner: T,
    readonly map: VertexMap,
  ) {
    this.name = inner.name;
    const n = 3 * map.nVertices;
    this.y = new Float64Array(n);
    this.dy = new Float64Array(n);
    this.patternY = new Float64Array(n);
    this.gy = new Float64Array(n);
  }

  /** Vertex positions of q (a buffer reused by the next call). */
  protected vertices(q: Float64Array): Float64Array {
    vertexPositions(this.map, q, this.y);
    return this.y;
  }

  energy(q: Float64Array): number {
    return this.inner.energy(this.vertices(q));
  }

  addGradient(q: Float64Array, scale: number, g: Float64Array): void {
    this.gy.fill(0);
    this.inner.addGradient(this.vertices(q), scale, this.gy);
    addPulledBackGradient(this.map, this.gy, 1, g);
  }

  /** Nodes and weights of vertex v: (node, weight) pairs written to nodes/weights, their count returned. */
  private terms(v: number, nodes: Int32Array, weights: Float64Array, o: number): number {
    const map = this.map;
    if (v < map.identityCount) {
      nodes[o] = v;
      weights[o] = 1;
      return 1;
    }
    const k = v - map.identityCount;
    let m = 0;
    for (let j = map.start[k]; j < map.start[k + 1]; j++, m++) {
      nodes[o + m] = map.nodes[j];
      weights[o + m] = map.weights[j];
    }
    return m;
  }

  private maxTerms(): number {
    let m = 1;
    for (let k = 0; k + 1 < this.map.start.length; k++) m = Math.max(m, this.map.start[k + 1] - this.map.start[k]);
    return m;
  }

  patternStale(q: Float64Array): boolean {
    // The inner term keeps these positions for its addPattern (a buffer of their own, not overwritten meanwhile).
    vertexPositions(this.map, q, this.patternY);
    const stale = this.inner.patternStale?.(this.patternY) ?? false;
    return stale || !this.Hy;
  }

  /**
   * Grows the vertex-space pattern by the inner term's couplings and adds the DOF cliques they imply; a DOF pattern
   * built from scratch (no base) builds the vertex-space one from scratch too, so pairs that have parted drop out.
   */
  addPattern(builder: PatternBuilder): void {
    const vb = new PatternBuilder(this.map.nVertices, builder.base === null ? null : this.vertexPattern);
    this.inner.addPattern(vb);
    const pattern = vb.build();
    if (pattern !== this.vertexPattern) {
      this.vertexPattern = pattern;
      this.Hy = new BsrMatrix(pattern);
      this.inner.bindPattern?.(this.Hy);
    }
    const m = this.maxTerms();
    const nodes = new Int32Array(2 * m);
    const weights = new Float64Array(2 * m);
    for (let u = 0; u < pattern.n; u++) {
      for (let s = pattern.rowStart[u]; s < pattern.rowStart[u + 1]; s++) {
        const w = pattern.col[s];
        if (w < u) continue;
        const a = this.terms(u, nodes, weights, 0);
        const b = w === u ? 0 : this.terms(w, nodes, weights, a);
        if (a + b > 1) builder.addClique(nodes.subarray(0, a + b));
      }
    }
  }

  bindPattern(H: BsrMatrix): void {
    const pattern = this.vertexPattern;
    if (!pattern || !this.Hy) return;
    this.inner.bindPattern?.(this.Hy);
    const map = this.map;
    const termCount = (v: number) => (v < map.identityCount ? 1 : map.start[v - map.identityCount + 1] - map.start[v - map.identityCount]);
    let total = 0;
    for (let u = 0; u < pattern.n; u++) {
      for (let s = pattern.rowStart[u]; s < pattern.rowStart[u + 1]; s++) total += termCount(u) * termCount(pattern.col[s]);
    }
    const m = this.maxTerms();
    const nodes = new Int32Array(2 * m);
    const weights = new Float64Array(2 * m);
    // The DOF slots of the previous vertex block, by its node lists: the vertices of one affine body share theirs,
    // so most blocks reuse the previous block's lookups and only their weights differ.
    const lastNodes = new Int32Array(2 * m).fill(-1);
    const lastSlots = new Int32Array(m * m);
    let lastA = 0, lastB = 0;
    const start = new Int32Array(pattern.nnzBlocks + 1);
    const dofSlot = new Int32Array(total);
    const weight = new Float64Array(total);
    let n = 0;
    for (let u = 0; u < pattern.n; u++) {
      for (let s = pattern.rowStart[u]; s < pattern.rowStart[u + 1]; s++) {
        const w = pattern.col[s];
        const a = this.terms(u, nodes, weights, 0);
        const b = this.terms(w, nodes, weights, a);
        let same = a === lastA && b === lastB;
        for (let i = 0; i < a + b && same; i++) same = nodes[i] === lastNodes[i];
        if (!same) {
          for (let i = 0; i < a; i++) for (let j = 0; j < b; j++) lastSlots[i * b + j] = H.pattern.slot(nodes[i], nodes[a + j]);
          lastNodes.set(nodes.subarray(0, a + b));
          lastA = a;
          lastB = b;
        }
        for (let i = 0; i < a; i++) {
          for (let j = 0; j < b; j++) {
            const slot = lastSlots[i * b + j];
            // Blocks between constrained nodes may be missing: nothing is written there (those rows are fixed).
            if (slot < 0) continue;
            dofSlot[n] = slot;
            weight[n++] = weights[i] * weights[a + j];
          }
        }
        start[s + 1] = n;
      }
    }
    this.start = start;
    this.dofSlot = dofSlot;
    this.weight = weight;
    this.boundId = H.pattern.id;
    this.boundVertexId = pattern.id;
  }

  addHessian(q: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean): void {
    const Hy = this.Hy!;
    if (this.boundId !== H.pattern.id || this.boundVertexId !== Hy.pattern.id) this.bindPattern(H);
    Hy.zero();
    this.inner.addHessian(this.vertices(q), scale, Hy, projectPsd);
    const src = Hy.values;
    const dst = H.values;
    for (let s = 0; s < Hy.pattern.nnzBlocks; s++) {
      const o = 9 * s;
      let nonzero = false;
      for (let i = 0; i < 9 && !nonzero; i++) nonzero = src[o + i] !== 0;
      if (!nonzero) continue;
      for (let t = this.start[s]; t < this.start[s + 1]; t++) {
        const d = 9 * this.dofSlot[t];
        const w = this.weight[t];
        for (let i = 0; i < 9; i++) dst[d + i] += w * src[o + i];
      }
    }
  }

  maxStep(q: Float64Array, dq: Float64Array, limit = 1): number {
    if (!this.inner.maxStep) return limit;
    vertexPositions(this.map, dq, this.dy);
    return this.inner.maxStep(this.vertices(q), this.dy, limit);
  }

  explainBlockedStep(q: Float64Array): string | undefined {
    return this.inner.explainBlockedStep?.(this.vertices(q));
  }
}

/** Lagged friction through the vertex map: the lagging state (x_n, xHat) and the dissipation read vertex positions. */
export class MappedFriction extends MappedTerm<FrictionPotential> {
  private readonly xn: Float64Array;
  private readonly xHat: Float64Array;

  constructor(inner: FrictionPotential, map: VertexMap) {
    super(inner, map);
    this.xn = new Float64Array(3 * map.nVertices);
    this.xHat = new Float64Array(3 * map.nVertices);
  }

  get activeCount(): number {
    return this.inner.activeCount;
  }

  clear(): void {
    this.inner.clear();
  }

  lag(xn: Float64Array, xHat: Float64Array, beta: number): void {
    vertexPositions(this.map, xn, this.xn);
    vertexPositions(this.map, xHat, this.xHat);
    this.inner.lag(this.xn, this.xHat, beta);
  }

  dissipation(q: Float64Array): number {
    return this.inner.dissipation(this.vertices(q));
  }
}
