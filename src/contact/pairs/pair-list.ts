import type { BsrPattern } from '../../math/bsr.js';
import type { CollisionMesh } from '../collision-mesh.js';
import type { PairKind } from './pair-kind.js';
import { stencilSlots } from './stencil.js';

/**
 * Pairs of one kind in typed arrays, so the loops over them stay monomorphic and allocate nothing. Pair k has
 *   - its stencil nodes: nodes[size k .. size k + size), size = kind.size,
 *   - its two primitives: primitives[2k] and [2k + 1], numbered as the kind says (a vertex's node id, a triangle,
 *     edge or plane index), for messages,
 *   - the kind's per-pair constants: constants[c k .. c k + c), c = kind.constantCount (the edge-edge mollifier
 *     threshold, a plane's normal and offset),
 *   - its contact offset xi: offsets[k] (m; Codim-IPC thickness, 0 unless a group has one; see fillOffsets),
 * and the bookkeeping of a candidate set (candidate-set.ts): whether its Hessian blocks are in the bound pattern,
 * its distance when found, how fast it can close along the motion it was found along, how much closer it may be
 * now, and which pairs are live (possibly closer than dhat).
 * The Hessian loop keeps each pair's pattern slots once it has looked them up (slotsOf), until the pattern or the
 * pairs change: an active pair is assembled in every Newton iteration, and searching the pattern rows for its 12
 * off-diagonal blocks each time cost about as much as computing its Hessian.
 */
export class PairList<K extends PairKind = PairKind> {
  count = 0;
  nodes = new Int32Array(0);
  primitives = new Int32Array(0);
  constants = new Float64Array(0);
  offsets = new Float64Array(0);
  covered = new Uint8Array(0);
  distanceRef = new Float64Array(0);
  /** How fast (per unit of the build's motion parameter) the pair can close along the motion it was built along. */
  approach = new Float64Array(0);
  slack = new Float64Array(0);
  live = new Int32Array(0);
  liveCount = 0;
  /** Pattern slots of pair k's blocks at slots[size^2 k ..] (stencilSlots) once slotKnown[k], for slotPattern. */
  private slots = new Int32Array(0);
  private slotKnown = new Uint8Array(0);
  private slotPattern: BsrPattern | null = null;

  constructor(readonly kind: K) {}

  /**
   * Where pair k's blocks are in `pattern`: the offset of its size^2 slots (row-major, -1 for fixed nodes) in the
   * returned array. Looked up on first use, then kept while the pattern and the pairs stay the same.
   */
  slotsOf(pattern: BsrPattern, k: number, fixed: Uint8Array): number {
    const size = this.kind.size;
    if (this.slotPattern !== pattern) {
      if (this.slotKnown.length < this.live.length) {
        this.slots = new Int32Array(size * size * this.live.length);
        this.slotKnown = new Uint8Array(this.live.length);
      } else {
        this.slotKnown.fill(0);
      }
      this.slotPattern = pattern;
    }
    const at = size * size * k;
    if (!this.slotKnown[k]) {
      stencilSlots(pattern, this.nodes, size * k, size, fixed, this.slots, at);
      this.slotKnown[k] = 1;
    }
    return at;
  }

  /** The slot array slotsOf's offsets index. */
  get slotArray(): Int32Array {
    return this.slots;
  }

  /** Room for n pairs, to be filled anew: the arrays are replaced when they grow (their contents are not kept). */
  reserve(n: number): void {
    this.slotPattern = null; // the pairs change: their slots are looked up again
    if (this.live.length >= n) return;
    this.nodes = new Int32Array(this.kind.size * n);
    this.primitives = new Int32Array(2 * n);
    this.constants = new Float64Array(this.kind.constantCount * n);
    this.offsets = new Float64Array(n);
    this.covered = new Uint8Array(n);
    this.distanceRef = new Float64Array(n);
    this.approach = new Float64Array(n);
    this.slack = new Float64Array(n);
    this.live = new Int32Array(n);
  }

  /** Makes every pair live (lists that no distance test prunes). */
  setAllLive(): void {
    for (let k = 0; k < this.count; k++) this.live[k] = k;
    this.liveCount = this.count;
  }

  /**
   * Writes pair k of `from` (same kind; this list itself in a compaction, with to <= k) into slot `to`: its nodes,
   * primitives, constants and offset. The candidate-set fields are the caller's to set.
   */
  copyEntry(from: PairList, k: number, to: number): void {
    const { size, constantCount: c } = this.kind;
    for (let i = 0; i < size; i++) this.nodes[size * to + i] = from.nodes[size * k + i];
    this.primitives[2 * to] = from.primitives[2 * k];
    this.primitives[2 * to + 1] = from.primitives[2 * k + 1];
    for (let i = 0; i < c; i++) this.constants[c * to + i] = from.constants[c * k + i];
    this.offsets[to] = from.offsets[k];
  }

  /** Makes this list hold pair k of `from` (same kind) alone. */
  copyPair(from: PairList, k: number): void {
    this.reserve(1);
    this.copyEntry(from, k, 0);
    this.count = 1;
  }

  /**
   * Sets each pair's contact offset after a collect: the first primitive's group offset plus the second's (an
   * obstacle kind's second primitive, a plane, has none). Without offsets in the mesh the zeros stay (nothing to do).
   */
  fillOffsets(mesh: CollisionMesh): void {
    const node = mesh.offsetOfNode;
    if (!node) return;
    const { size, split } = this.kind;
    const { nodes, offsets } = this;
    for (let k = 0; k < this.count; k++) {
      const o = size * k;
      offsets[k] = node[nodes[o]] + (split < size ? node[nodes[o + split]] : 0);
    }
  }
}
