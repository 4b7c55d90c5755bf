/**
 * A low-rank correction that keeps a lagged factor a good preconditioner while the matrix changes on a few
 * diagonal blocks only.
 *
 * On a body resting on the ground, Newton matrices of successive steps differ almost only in the diagonal blocks
 * of the vertices in contact: the barrier's stiffness grows like 1/d and its distance d moves by fractions of
 * itself from one step to the next, while the elastic part stays put. (Measured on the soft ball at rest, BDF2:
 * all of |A - A0|_F sat in the diagonal blocks of its 15 contact vertices, and it was 0.07-0.85 of |A0|_F, so PCG
 * with the old factor took 5-15 iterations and the factor was renewed every second or third step.)
 *
 * With E the unit columns of a few chosen DOFs (rows of changed diagonal blocks: a vertex pressed on a plane changes
 * only its normal's row) and C = E^T (A - A0) E their change, Woodbury's identity inverts A0 + E C E^T with the old
 * factor and a small dense system:
 *
 *     (A0 + E C E^T)^-1 = A0^-1 - Z C (I + G C)^-1 E^T A0^-1,    Z = A0^-1 E,  G = E^T Z.
 *
 * Z depends on the factor and the chosen DOFs only, not on C, so its columns (one solve each) are made once per
 * factor and DOF and reused by every later Newton matrix; C and the small system are rebuilt per solve. Changes
 * elsewhere in the matrix are left to PCG, for which this is only a better preconditioner: a wrong choice costs
 * iterations, never accuracy.
 */
import type { BsrMatrix } from './bsr.js';

/**
 * A DOF whose row of its diagonal block changed by more than this fraction of the block's old Frobenius norm asks
 * for a correction.
 */
const RELATIVE_CHANGE = 0.1;

/** New columns are made only when, with them, the corrected DOFs hold this share of the scaled change (see scaledChange). */
const COVERAGE = 0.9;

export interface DiagonalCorrectionOptions {
  /** Most DOFs corrected per factor (default 32). */
  maxColumns?: number;
  /**
   * Columns a factor may have made per solve it served (default 8): a column costs a solve, so a factor renewed
   * soon after (a bouncing body) spends little on columns it no longer needs.
   */
  columnsPerSolve?: number;
  /** Most doubles Z may take, 3n per column (default 4e6: 32 MB). */
  maxEntries?: number;
}

export class DiagonalCorrection {
  /** The factored matrix's values (same pattern as every matrix prepare() sees) and its diagonal blocks' norms. */
  private a0 = new Float64Array(0);
  private blockNorm = new Float64Array(0);
  /** The corrected DOFs, in the order their columns were made. */
  private dofs: number[] = [];
  private isChosen = new Uint8Array(0);
  /** Z's columns, one after another (column c at c * 3n). */
  private z = new Float64Array(0);
  /** For each chosen DOF, the positions (in `dofs`) of the chosen DOFs of its node, its own included. */
  private sameNode: number[][] = [];
  /** C = E^T (A - A0) E restricted to pairs of the same node (sameNode order), and the LU factors of M = I + G C. */
  private c: number[][] = [];
  private lu = new Float64Array(0);
  private pivots = new Int32Array(0);
  private y = new Float64Array(0);
  private u = new Float64Array(0);
  private unit = new Float64Array(0);
  private n = 0;
  /** Solves prepared since the factor was renewed. */
  private solves = 0;
  /** Whether apply() changes anything (a correction is ready). */
  active = false;
  /** Columns of Z computed (each one solve with the factor), for the solver's statistics. */
  columnsMade = 0;

  private readonly maxColumns: number;
  private readonly columnsPerSolve: number;
  private readonly maxEntries: number;

  constructor(options: DiagonalCorrectionOptions = {}) {
    this.maxColumns = options.maxColumns ?? 32;
    this.columnsPerSolve = options.columnsPerSolve ?? 8;
    this.maxEntries = options.maxEntries ?? 4_000_000;
  }

  /** The factor was renewed from A: remember A's diagonal blocks and drop every column. */
  reset(A: BsrMatrix): void {
    const nodes = A.pattern.n;
    if (this.n !== nodes) {
      this.n = nodes;
      this.blockNorm = new Float64Array(nodes);
      this.isChosen = new Uint8Array(3 * nodes);
      this.unit = new Float64Array(3 * nodes);
    } else {
      for (const d of this.dofs) this.isChosen[d] = 0;
    }
    const { diagSlot } = A.pattern;
    const values = A.values;
    for (let v = 0; v < nodes; v++) {
      const o = 9 * diagSlot[v];
      let sum = 0;
      for (let k = o; k < o + 9; k++) sum += values[k] * values[k];
      this.blockNorm[v] = Math.sqrt(sum);
    }
    if (this.a0.length < values.length) this.a0 = new Float64Array(values.length);
    this.a0.set(values);
    this.dofs = [];
    this.active = false;
    this.solves = 0;
  }

  /**
   * Prepares the correction for A (same pattern as the factored matrix): chooses the DOFs whose rows of their
   * diagonal block changed most (making their Z columns with `solve`, the factor's solve; only when `addColumns`),
   * then C and the small system.
   */
  prepare(A: BsrMatrix, solve: (b: Float64Array, x: Float64Array) => void, addColumns = true): void {
    this.active = false;
    const { diagSlot } = A.pattern;
    const values = A.values, a0 = this.a0, n = this.n;
    this.solves++;
    const budget = Math.min(this.capacity, this.columnsPerSolve * this.solves);
    const room = budget - this.dofs.length;
    if (addColumns && room > 0) {
      const wanted: { dof: number; change: number }[] = [];
      let covered = 0;
      for (let v = 0; v < n; v++) {
        const s = 9 * diagSlot[v];
        const old = this.blockNorm[v] ** 2;
        for (let r = 0; r < 3; r++) {
          let change = 0;
          for (let k = s + 3 * r; k < s + 3 * r + 3; k++) change += (values[k] - a0[k]) ** 2;
          if (this.isChosen[3 * v + r]) covered += change / old;
          else if (change > RELATIVE_CHANGE * RELATIVE_CHANGE * old) wanted.push({ dof: 3 * v + r, change: change / old });
        }
      }
      if (wanted.length > 0) {
        wanted.sort((a, b) => b.change - a.change);
        // Columns pay only where the DOFs the correction can hold (up to maxColumns, over the coming solves) carry
        // most of the change: a body whose elastic part moves too (a bounce) renews its factor anyway.
        const limit = this.capacity - this.dofs.length;
        for (let k = 0; k < Math.min(limit, wanted.length); k++) covered += wanted[k].change;
        if (covered >= COVERAGE * this.scaledChange(A)) {
          for (const { dof } of wanted.slice(0, room)) this.addColumn(dof, solve);
          this.groupByNode();
        }
      }
    }
    const m = this.dofs.length;
    if (m === 0) return;
    if (this.lu.length < m * m) {
      this.lu = new Float64Array(this.maxColumns * this.maxColumns);
      this.pivots = new Int32Array(this.maxColumns);
      this.y = new Float64Array(this.maxColumns);
      this.u = new Float64Array(this.maxColumns);
    }
    const dofs = this.dofs, M = this.lu, z = this.z, size = 3 * n;
    // C's row j (the DOFs of j's node): entries of A - A0 in the diagonal block.
    for (let j = 0; j < m; j++) {
      const v = Math.floor(dofs[j] / 3), r = dofs[j] % 3;
      const s = 9 * diagSlot[v] + 3 * r;
      const row = this.c[j];
      const group = this.sameNode[j];
      for (let q = 0; q < group.length; q++) {
        const k = s + (dofs[group[q]] % 3);
        row[q] = values[k] - a0[k];
      }
    }
    // M = I + G C, G(i, k) = Z(dof_i, k) = column k of Z at dof_i; C(k, j) is nonzero for k, j of one node only.
    for (let i = 0; i < m; i++) {
      const dofI = dofs[i];
      for (let j = 0; j < m; j++) {
        const group = this.sameNode[j], row = this.c[j];
        let sum = i === j ? 1 : 0;
        // C is symmetric: C(k, j) = C(j, k) = row[q] for k = group[q].
        for (let q = 0; q < group.length; q++) sum += z[group[q] * size + dofI] * row[q];
        M[i * m + j] = sum;
      }
    }
    this.active = luFactor(M, m, this.pivots);
  }

  /** z = A0^-1 r on entry; subtracts Z C M^-1 E^T z, making z the corrected preconditioner's answer. */
  apply(x: Float64Array): void {
    if (!this.active) return;
    const dofs = this.dofs, m = dofs.length, size = 3 * this.n;
    const y = this.y, u = this.u, z = this.z;
    for (let j = 0; j < m; j++) y[j] = x[dofs[j]];
    luSolve(this.lu, m, this.pivots, y);
    for (let k = 0; k < m; k++) {
      const group = this.sameNode[k], row = this.c[k];
      let sum = 0;
      for (let q = 0; q < group.length; q++) sum += row[q] * y[group[q]];
      u[k] = sum;
    }
    for (let k = 0; k < m; k++) {
      const w = u[k];
      if (w === 0) continue;
      const col = k * size;
      for (let i = 0; i < size; i++) x[i] -= z[col + i] * w;
    }
  }

  /**
   * The change A - A0 measured blockwise in the scale of the diagonal blocks: the sum over blocks (i, j) of
   * |A_ij - A0_ij|_F^2 / (|A0_ii|_F |A0_jj|_F), about |D^-1/2 (A - A0) D^-1/2|_F^2, which is what matters to
   * PCG (a change of 1 on a soft DOF counts as much as one of 1000 on a stiff one).
   */
  private scaledChange(A: BsrMatrix): number {
    const { rowStart, col } = A.pattern;
    const values = A.values, a0 = this.a0, norm = this.blockNorm;
    let total = 0;
    for (let i = 0; i < this.n; i++) {
      for (let q = rowStart[i]; q < rowStart[i + 1]; q++) {
        let change = 0;
        for (let k = 9 * q; k < 9 * q + 9; k++) change += (values[k] - a0[k]) ** 2;
        if (change > 0) total += change / (norm[i] * norm[col[q]]);
      }
    }
    return total;
  }

  /** Most columns a factor may have: maxColumns, or fewer where maxEntries runs out first. */
  private get capacity(): number {
    return Math.min(this.maxColumns, Math.floor(this.maxEntries / (3 * this.n)));
  }

  /** Adds a DOF: its column of Z = A0^-1 E. */
  private addColumn(dof: number, solve: (b: Float64Array, x: Float64Array) => void): void {
    const size = 3 * this.n;
    const k = this.dofs.length;
    if (this.z.length < (k + 1) * size) {
      const grown = new Float64Array(Math.min(this.maxColumns, Math.max(k + 1, 2 * k, 8)) * size);
      grown.set(this.z.subarray(0, k * size));
      this.z = grown;
    }
    this.unit[dof] = 1;
    solve(this.unit, this.z.subarray(k * size, (k + 1) * size));
    this.unit[dof] = 0;
    this.columnsMade++;
    this.dofs.push(dof);
    this.isChosen[dof] = 1;
  }

  /** sameNode and the rows of C for the current DOFs. */
  private groupByNode(): void {
    const byNode = new Map<number, number[]>();
    this.dofs.forEach((d, j) => {
      const v = Math.floor(d / 3);
      const list = byNode.get(v);
      if (list) list.push(j);
      else byNode.set(v, [j]);
    });
    this.sameNode = this.dofs.map((d) => byNode.get(Math.floor(d / 3))!);
    this.c = this.sameNode.map((g) => new Array<number>(g.length).fill(0));
  }
}

/** LU with partial pivoting of the m x m row-major a, in place; false when a pivot vanishes. */
function luFactor(a: Float64Array, m: number, pivots: Int32Array): boolean {
  for (let k = 0; k < m; k++) {
    let p = k;
    let best = Math.abs(a[k * m + k]);
    for (let i = k + 1; i < m; i++) {
      const v = Math.abs(a[i * m + k]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    if (!(best > 1e-300)) return false;
    pivots[k] = p;
    if (p !== k) {
      for (let j = 0; j < m; j++) {
        const t = a[k * m + j];
        a[k * m + j] = a[p * m + j];
        a[p * m + j] = t;
      }
    }
    const inv = 1 / a[k * m + k];
    for (let i = k + 1; i < m; i++) {
      const f = (a[i * m + k] *= inv);
      if (f === 0) continue;
      for (let j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
    }
  }
  return true;
}

/** Solves with luFactor's result in place of b. */
function luSolve(a: Float64Array, m: number, pivots: Int32Array, b: Float64Array): void {
  for (let k = 0; k < m; k++) {
    const p = pivots[k];
    if (p !== k) {
      const t = b[k];
      b[k] = b[p];
      b[p] = t;
    }
  }
  for (let i = 1; i < m; i++) {
    let s = b[i];
    for (let j = 0; j < i; j++) s -= a[i * m + j] * b[j];
    b[i] = s;
  }
  for (let i = m - 1; i >= 0; i--) {
    let s = b[i];
    for (let j = i + 1; j < m; j++) s -= a[i * m + j] * b[j];
    b[i] = s / a[i * m + i];
  }
}
