/**
 * Block-sparse (3x3) symmetric matrices over mesh nodes.
 *
 * Newton matrices of 3D elasticity couple the three coordinates of every node pair that share an element, so a
 * pattern over nodes with dense 3x3 blocks stores them without per-entry indices and halves SpMV time compared
 * with scalar CSR (measured on this project's Newton matrices). Both triangles are stored: SpMV and PCG stay branch-free and
 * the direct solver reads the lower one.
 */

let nextPatternId = 1;

/** Sparsity over nodes: row i lists the sorted node columns j coupled to i, the diagonal included. */
export class BsrPattern {
  /** Unique per pattern, so solvers can reuse symbolic work while the pattern stays the same. */
  readonly id = nextPatternId++;

  constructor(
    readonly n: number,
    readonly rowStart: Int32Array,
    readonly col: Int32Array,
    readonly diagSlot: Int32Array,
    /** For a grown pattern (PatternBuilder with a base): the base's id, and the slot here of each slot of the base. */
    readonly baseId = 0,
    readonly slotOfBase: Int32Array | null = null,
  ) {}

  /**
   * Moves slots looked up in the pattern with id `from` to this one, in place, when this pattern was grown from it
   * (a base's blocks keep their order, so this is one table read per slot instead of a search); false otherwise,
   * with `slots` untouched. Contact scenes grow their pattern hundreds of times a run; the element terms' slots of a
   * 23k-tet bunny took 12 ms to look up again each time.
   */
  remapSlots(from: number, slots: Int32Array): boolean {
    const map = this.slotOfBase;
    if (map === null || from !== this.baseId) return false;
    for (let k = 0; k < slots.length; k++) slots[k] = map[slots[k]];
    return true;
  }

  get nnzBlocks(): number {
    return this.col.length;
  }

  /** Slot of block (i, j), or -1 when it is not in the pattern. Binary search within the row. */
  slot(i: number, j: number): number {
    let lo = this.rowStart[i];
    let hi = this.rowStart[i + 1] - 1;
    const col = this.col;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = col[mid];
      if (c === j) return mid;
      if (c < j) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * Slots of all k*k blocks of an element's node list, row-major, written to out[offset ...]. Energies call this
   * once at set-up so their Hessian loops scatter without searching.
   */
  elementSlots(nodes: ArrayLike<number>, out: Int32Array, offset: number): void {
    const k = nodes.length;
    for (let a = 0; a < k; a++) {
      for (let b = 0; b < k; b++) {
        const s = this.slot(nodes[a], nodes[b]);
        if (s < 0) throw new Error(`BsrPattern: block (${nodes[a]}, ${nodes[b]}) is not in the pattern`);
        out[offset + a * k + b] = s;
      }
    }
  }
}

/**
 * Collects the node cliques of all elements, then builds a BsrPattern. Given a base pattern, the result is the base
 * plus the cliques added (a grown pattern: new contacts), built by merging rows instead of re-adding every element.
 */
export class PatternBuilder {
  private readonly pairs: number[][];

  constructor(
    readonly n: number,
    readonly base: BsrPattern | null = null,
  ) {
    if (base && base.n !== n) throw new Error(`PatternBuilder: base pattern has ${base.n} nodes, not ${n}`);
    this.pairs = Array.from({ length: n }, (_, i) => (base ? [] : [i]));
  }

  /** Couples every pair of the given nodes (an element's node list). */
  addClique(nodes: ArrayLike<number>): void {
    const k = nodes.length;
    for (let a = 0; a < k; a++) {
      const row = this.pairs[nodes[a]];
      for (let b = 0; b < k; b++) if (a !== b) row.push(nodes[b]);
    }
  }

  build(): BsrPattern {
    const n = this.n;
    const base = this.base;
    const rowStart = new Int32Array(n + 1);
    const sortedRows: Int32Array[] = new Array(n);
    let nnz = 0;
    for (let i = 0; i < n; i++) {
      const added = this.pairs[i];
      const baseRow = base ? base.col.subarray(base.rowStart[i], base.rowStart[i + 1]) : null;
      let row: Int32Array;
      if (baseRow && added.length === 0) {
        row = baseRow;
      } else {
        const sorted = Int32Array.from(added).sort();
        let m = 0;
        for (let t = 0; t < sorted.length; t++) if (t === 0 || sorted[t] !== sorted[t - 1]) sorted[m++] = sorted[t];
        row = baseRow ? mergeSorted(baseRow, sorted.subarray(0, m)) : sorted.subarray(0, m);
      }
      sortedRows[i] = row;
      nnz += row.length;
      rowStart[i + 1] = nnz;
    }
    const col = new Int32Array(nnz);
    const diagSlot = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      col.set(sortedRows[i], rowStart[i]);
      const pattern = sortedRows[i];
      for (let t = 0; t < pattern.length; t++) if (pattern[t] === i) diagSlot[i] = rowStart[i] + t;
    }
    if (!base) return new BsrPattern(n, rowStart, col, diagSlot);
    // Each base row is a sorted sublist of the new row: walk both.
    const slotOfBase = new Int32Array(base.nnzBlocks);
    for (let i = 0; i < n; i++) {
      let q = rowStart[i];
      for (let s = base.rowStart[i]; s < base.rowStart[i + 1]; s++) {
        while (col[q] !== base.col[s]) q++;
        slotOfBase[s] = q++;
      }
    }
    return new BsrPattern(n, rowStart, col, diagSlot, base.id, slotOfBase);
  }
}

/** The sorted union of two sorted, duplicate-free lists. */
function mergeSorted(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let m = 0;
  while (i < a.length || j < b.length) {
    if (j === b.length || (i < a.length && a[i] < b[j])) out[m++] = a[i++];
    else if (i === a.length || b[j] < a[i]) out[m++] = b[j++];
    else {
      out[m++] = a[i++];
      j++;
    }
  }
  return out.subarray(0, m);
}

/** Values over a BsrPattern: 9 doubles per block, row-major within the block. */
export class BsrMatrix {
  readonly values: Float64Array;

  /**
   * `storage`, when given and long enough, holds the values (its first 9 nnzBlocks doubles, zeroed): a caller that
   * replaces one matrix by a grown one reuses the memory, since a fresh large array costs its first touch (page
   * faults: about 4 ms of CPU per MB on this project's VM, measured), every time.
   */
  constructor(
    readonly pattern: BsrPattern,
    storage?: Float64Array,
  ) {
    const length = 9 * pattern.nnzBlocks;
    if (storage && storage.length >= length) {
      this.values = storage.subarray(0, length);
      this.values.fill(0);
    } else {
      this.values = new Float64Array(length);
    }
  }

  get size(): number {
    return 3 * this.pattern.n;
  }

  zero(): void {
    this.values.fill(0);
  }

  /** Adds scale * diag(d[3i], d[3i+1], d[3i+2]) to every diagonal block (a lumped mass, say). */
  addDiagonal(d: Float64Array, scale: number): void {
    const { diagSlot } = this.pattern;
    const v = this.values;
    for (let i = 0; i < this.pattern.n; i++) {
      const o = 9 * diagSlot[i];
      v[o] += scale * d[3 * i];
      v[o + 4] += scale * d[3 * i + 1];
      v[o + 8] += scale * d[3 * i + 2];
    }
  }

  /**
   * this += scale * other. `other`'s pattern must be contained in this one's (the same pattern, or an older one
   * before contact blocks were added).
   */
  addScaled(other: BsrMatrix, scale: number): void {
    const v = this.values;
    const w = other.values;
    if (other.pattern === this.pattern) {
      for (let i = 0; i < v.length; i++) v[i] += scale * w[i];
      return;
    }
    const { rowStart, col, n } = other.pattern;
    if (n !== this.pattern.n) throw new Error('BsrMatrix.addScaled: sizes differ');
    for (let i = 0; i < n; i++) {
      for (let q = rowStart[i]; q < rowStart[i + 1]; q++) {
        const s = this.pattern.slot(i, col[q]);
        if (s < 0) throw new Error(`BsrMatrix.addScaled: block (${i}, ${col[q]}) is not in the target pattern`);
        for (let k = 0; k < 9; k++) v[9 * s + k] += scale * w[9 * q + k];
      }
    }
  }

  /** y = A x. */
  multiply(x: Float64Array, y: Float64Array): void {
    const { rowStart, col, n } = this.pattern;
    const v = this.values;
    for (let i = 0; i < n; i++) {
      let y0 = 0;
      let y1 = 0;
      let y2 = 0;
      for (let s = rowStart[i]; s < rowStart[i + 1]; s++) {
        const j = 3 * col[s];
        const o = 9 * s;
        const x0 = x[j];
        const x1 = x[j + 1];
        const x2 = x[j + 2];
        y0 += v[o] * x0 + v[o + 1] * x1 + v[o + 2] * x2;
        y1 += v[o + 3] * x0 + v[o + 4] * x1 + v[o + 5] * x2;
        y2 += v[o + 6] * x0 + v[o + 7] * x1 + v[o + 8] * x2;
      }
      y[3 * i] = y0;
      y[3 * i + 1] = y1;
      y[3 * i + 2] = y2;
    }
  }

  /**
   * Eliminates constrained DOFs (mask[d] = 1): their rows and columns become those of the identity, so a solve
   * returns exactly the right-hand side there (zero for a Newton step on fixed DOFs).
   */
  applyDirichlet(mask: Uint8Array): void {
    const { rowStart, col, n } = this.pattern;
    const v = this.values;
    // Only blocks whose row or column node has a constrained DOF change: find those nodes first (most scenes have
    // none, or a few, and the full sweep below costs as much as adding the mass).
    const touched = (i: number) => mask[3 * i] === 1 || mask[3 * i + 1] === 1 || mask[3 * i + 2] === 1;
    let any = false;
    for (let i = 0; i < n && !any; i++) any = touched(i);
    if (!any) return;
    for (let i = 0; i < n; i++) {
      const rowTouched = touched(i);
      for (let s = rowStart[i]; s < rowStart[i + 1]; s++) {
        const j = col[s];
        if (!rowTouched && !touched(j)) continue;
        const o = 9 * s;
        for (let a = 0; a < 3; a++) {
          const rowFixed = mask[3 * i + a] === 1;
          for (let b = 0; b < 3; b++) {
            if (rowFixed || mask[3 * j + b] === 1) v[o + 3 * a + b] = i === j && a === b ? 1 : 0;
          }
        }
      }
    }
  }

  /** The dense matrix, for tests and tiny systems only. */
  toDense(): Float64Array[] {
    const m = this.size;
    const out = Array.from({ length: m }, () => new Float64Array(m));
    const { rowStart, col, n } = this.pattern;
    for (let i = 0; i < n; i++)
      for (let s = rowStart[i]; s < rowStart[i + 1]; s++)
        for (let a = 0; a < 3; a++)
          for (let b = 0; b < 3; b++) out[3 * i + a][3 * col[s] + b] += this.values[9 * s + 3 * a + b];
    return out;
  }
}
