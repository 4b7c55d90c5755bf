/**
 * Linear eigenmodes of a discretised body at rest and the energy a state holds in each (seed 000 section 5.5,
 * Figs. 16-19). The modes solve K phi = w^2 M phi on the free DOFs, with K the elastic Hessian at rest and M the
 * lumped mass; they are found as the eigenvectors of the symmetric M^-1/2 K M^-1/2. A state's modal coordinates
 * are q = Phi^T M u (u the displacement from rest) and q' = Phi^T M v; mode j holds 1/2 q'_j^2 + 1/2 w_j^2 q_j^2.
 * This is the linearised energy: it measures each mode's amplitude, not the true (Neo-Hookean) energy.
 * Optionally the free DOFs of a bar are grouped into cross-sections that move as one (the 1D bar a constrained 3D
 * block stands for): the same computation on the Galerkin-reduced K and M.
 * Pure: no I/O. Dense and O(n^3): meant for the few hundred DOFs of the 1D study.
 */
import { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import { symmetricEigen } from '../math/eigen-sym.js';
import type { Model } from '../model/model.js';

/** Mode frequencies below this fraction of the highest count as rigid motions (w = 0 up to round-off). */
const RIGID_FRACTION = 1e-6;

export interface ModalBasis {
  /** The free DOFs (indices into the model's 3n vectors), in increasing order. */
  readonly dofs: Int32Array;
  /**
   * The coordinate each free DOF belongs to. Without grouping every free DOF is its own coordinate; with bar sections
   * all x DOFs of one cross-section share one (they move together: the 1D bar the block stands for).
   */
  readonly coordinateOf: Int32Array;
  /** Lumped mass of each free DOF. */
  readonly dofMass: Float64Array;
  /** Axis (0, 1, 2) of each coordinate. */
  readonly axis: Int8Array;
  /** Mass of each coordinate (the sum of its DOFs' lumped masses). */
  readonly mass: Float64Array;
  /** Angular frequencies w_j (rad/s), ascending; negative eigenvalues (round-off) give 0. */
  readonly omega: Float64Array;
  /** Mode shapes over the coordinates, M-orthonormal: column j of the row-major n x n array (modes[i * n + j]). */
  readonly modes: Float64Array;
  /** Modes whose frequency is zero up to round-off (rigid translations of an unconstrained body). */
  readonly rigid: Uint8Array;
}

export interface ModalBasisOptions {
  /** State to linearise about (default: the rest positions). */
  x?: Float64Array;
  /**
   * Group the free DOFs along this axis into cross-sections (nodes with one rest coordinate along it), each moving
   * as one: the Galerkin reduction of K and M to section-uniform motion. For the 1D block this is exactly the
   * seed's 1D chain (springs EA/dx, section masses). Free DOFs of the other axes stay single coordinates.
   */
  sectionsAlong?: 0 | 1 | 2;
}

/** Indices of the DOFs that are not constrained. */
export function freeDofs(model: Model): Int32Array {
  const out: number[] = [];
  for (let d = 0; d < model.constrained.length; d++) if (!model.constrained[d]) out.push(d);
  return Int32Array.from(out);
}

/**
 * Dense Hessian of the model's elastic terms at x (every non-linear term except the contact barrier: tets, bar
 * segments and springs), restricted to the free DOFs: row-major dofs.length x dofs.length. The exact Hessian unless
 * projectPsd (each element's Hessian projected, as Newton and the Rayleigh damping use it).
 */
export function elasticStiffness(model: Model, x: Float64Array, dofs: Int32Array, projectPsd = false): Float64Array {
  const terms = model.terms.filter((t) => !t.isLinear && t.name !== 'contact');
  const builder = new PatternBuilder(model.nNodes);
  for (const term of terms) term.addPattern(builder);
  const H = new BsrMatrix(builder.build());
  for (const term of terms) term.addHessian(x, 1, H, projectPsd);
  // Map a model DOF to its row among the free DOFs (-1 when constrained).
  const index = new Int32Array(3 * model.nNodes).fill(-1);
  dofs.forEach((d, i) => (index[d] = i));
  const n = dofs.length;
  const K = new Float64Array(n * n);
  const { rowStart, col } = H.pattern;
  for (let bi = 0; bi < model.nNodes; bi++) {
    for (let s = rowStart[bi]; s < rowStart[bi + 1]; s++) {
      const bj = col[s];
      for (let a = 0; a < 3; a++) {
        const r = index[3 * bi + a];
        if (r < 0) continue;
        for (let b = 0; b < 3; b++) {
          const c = index[3 * bj + b];
          if (c >= 0) K[r * n + c] += H.values[9 * s + 3 * a + b];
        }
      }
    }
  }
  return K;
}

/**
 * Solves K phi = w^2 M phi for diagonal M > 0 (mass[i] on DOF i): the eigen-decomposition of
 * A = M^-1/2 K M^-1/2, whose eigenvectors y give phi = M^-1/2 y (M-orthonormal since y is orthonormal).
 * Returns the frequencies (ascending) and the mode shapes (columns of the row-major n x n array).
 */
export function generalizedModes(K: Float64Array, mass: Float64Array): { omega: Float64Array; modes: Float64Array } {
  const n = mass.length;
  if (K.length !== n * n) throw new Error(`generalizedModes: K has ${K.length} entries, expected ${n}^2`);
  const invSqrt = mass.map((m) => {
    if (!(m > 0)) throw new Error(`generalizedModes: masses must be positive (got ${m})`);
    return 1 / Math.sqrt(m);
  });
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) A[i * n + j] = invSqrt[i] * K[i * n + j] * invSqrt[j];
  // Exact symmetry for Jacobi (assembly round-off can differ in the last bit between (i, j) and (j, i)).
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) A[i * n + j] = A[j * n + i] = 0.5 * (A[i * n + j] + A[j * n + i]);
  const values = new Float64Array(n);
  const Q = new Float64Array(n * n);
  symmetricEigen(A, n, values, Q, new Float64Array(n * n));
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a] - values[b]);
  const omega = new Float64Array(n);
  const modes = new Float64Array(n * n);
  order.forEach((src, j) => {
    omega[j] = Math.sqrt(Math.max(0, values[src]));
    for (let i = 0; i < n; i++) modes[i * n + j] = invSqrt[i] * Q[i * n + src];
  });
  return { omega, modes };
}

/**
 * Cross-section index of each free DOF along `axis` (its node's rest coordinate along the axis, to 1e-9 of the
 * extent), numbered in order of that coordinate; -1 for free DOFs of other axes. Also returns the section count.
 */
export function barSections(model: Model, dofs: Int32Array, axis: number): { section: Int32Array; count: number } {
  const rest = model.rest;
  let lo = Infinity;
  let hi = -Infinity;
  for (const d of dofs) {
    if (d % 3 !== axis) continue;
    lo = Math.min(lo, rest[d]);
    hi = Math.max(hi, rest[d]);
  }
  const tol = 1e-9 * Math.max(hi - lo, 1e-300);
  const keys = [...new Set(Array.from(dofs, (d) => (d % 3 === axis ? Math.round((rest[d] - lo) / tol) : NaN)).filter((k) => !Number.isNaN(k)))].sort((a, b) => a - b);
  const index = new Map(keys.map((k, i) => [k, i]));
  const section = Int32Array.from(dofs, (d) => (d % 3 === axis ? index.get(Math.round((rest[d] - lo) / tol))! : -1));
  return { section, count: keys.length };
}

/** The linear modes of the model's free DOFs (or of its bar sections) about opts.x (default: the rest positions). */
export function modalBasis(model: Model, opts: ModalBasisOptions = {}): ModalBasis {
  const dofs = freeDofs(model);
  const nd = dofs.length;
  const coordinateOf = Int32Array.from({ length: nd }, (_, i) => i);
  let nc = nd;
  if (opts.sectionsAlong !== undefined) {
    const { section, count } = barSections(model, dofs, opts.sectionsAlong);
    nc = count;
    for (let i = 0; i < nd; i++) coordinateOf[i] = section[i] >= 0 ? section[i] : nc++;
  }
  const dofMass = Float64Array.from(dofs, (d) => model.mass[d]);
  const axis = new Int8Array(nc);
  const mass = new Float64Array(nc);
  for (let i = 0; i < nd; i++) {
    axis[coordinateOf[i]] = dofs[i] % 3;
    mass[coordinateOf[i]] += dofMass[i];
  }
  // K_r = P^T K P with P the 0/1 map from coordinates to DOFs; with lumped M, P^T M P is the diagonal `mass`.
  const K = elasticStiffness(model, opts.x ?? model.rest, dofs);
  const grouped = opts.sectionsAlong !== undefined;
  const Kr = grouped ? new Float64Array(nc * nc) : K;
  if (grouped) for (let i = 0; i < nd; i++) for (let j = 0; j < nd; j++) Kr[coordinateOf[i] * nc + coordinateOf[j]] += K[i * nd + j];
  const { omega, modes } = generalizedModes(Kr, mass);
  const top = omega.length ? omega[omega.length - 1] : 0;
  const rigid = Uint8Array.from(omega, (w) => (w <= RIGID_FRACTION * top ? 1 : 0));
  return { dofs, coordinateOf, dofMass, axis, mass, omega, modes, rigid };
}

/**
 * For the modes of a per-DOF basis (no sections) of a bar along `axis`: the share of each mode's kinetic norm
 * (phi^T M phi = 1) carried by its cross-section averages, sum over sections s of (sum_{i in s} m_i phi_i)^2 / m_s.
 * About 1 for the longitudinal (bar-like) modes, about 0 for modes in which the nodes of one section move against
 * each other; DOFs of the other axes count as the latter.
 */
export function longitudinalFraction(model: Model, basis: ModalBasis, axis = 0): Float64Array {
  const { dofs, mass, modes } = basis;
  const n = dofs.length;
  if (mass.length !== n) throw new Error('longitudinalFraction: needs a basis with one coordinate per free DOF');
  const { section, count } = barSections(model, dofs, axis);
  const sectionMass = new Float64Array(count);
  for (let i = 0; i < n; i++) if (section[i] >= 0) sectionMass[section[i]] += mass[i];
  const out = new Float64Array(n);
  const momentum = new Float64Array(count);
  for (let j = 0; j < n; j++) {
    momentum.fill(0);
    let norm = 0;
    for (let i = 0; i < n; i++) {
      const p = mass[i] * modes[i * n + j];
      norm += p * modes[i * n + j];
      if (section[i] >= 0) momentum[section[i]] += p;
    }
    let uniform = 0;
    for (let s = 0; s < count; s++) uniform += (momentum[s] * momentum[s]) / sectionMass[s];
    out[j] = norm > 0 ? uniform / norm : 0;
  }
  return out;
}

export interface ModalState {
  /** Modal displacement q_j = phi_j^T M u. */
  q: Float64Array;
  /** Modal velocity q'_j = phi_j^T M v. */
  qDot: Float64Array;
  /** Linearised energy per mode, 1/2 q'^2 + 1/2 w^2 q^2 (J); for a rigid mode only its kinetic part. */
  energy: Float64Array;
}

/**
 * Projects a state onto the modes. Each coordinate takes the mass-weighted mean of its DOFs' displacement
 * u = x - rest and velocity (the DOF itself without grouping); then the rigid translation per axis (the
 * mass-weighted mean displacement) is taken off u, so that a body that has moved away keeps only its deformation.
 * The rigid modes carry the translational kinetic energy, the others the vibration.
 */
export function projectOntoModes(basis: ModalBasis, rest: Float64Array, x: Float64Array, v: Float64Array): ModalState {
  const { dofs, dofMass, coordinateOf, axis, mass, modes, omega } = basis;
  const n = mass.length;
  const mu = new Float64Array(n);
  const mv = new Float64Array(n);
  for (let i = 0; i < dofs.length; i++) {
    const d = dofs[i];
    // Lumped DOF mass times displacement / velocity, summed per coordinate: M_c times the coordinate's mean.
    const m = dofMass[i];
    mu[coordinateOf[i]] += m * (x[d] - rest[d]);
    mv[coordinateOf[i]] += m * v[d];
  }
  for (let a = 0; a < 3; a++) {
    let sum = 0;
    let m = 0;
    for (let c = 0; c < n; c++) {
      if (axis[c] !== a) continue;
      sum += mu[c];
      m += mass[c];
    }
    const shift = m > 0 ? sum / m : 0;
    for (let c = 0; c < n; c++) if (axis[c] === a) mu[c] -= mass[c] * shift;
  }
  const q = new Float64Array(n);
  const qDot = new Float64Array(n);
  const energy = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    const row = c * n;
    for (let j = 0; j < n; j++) {
      q[j] += modes[row + j] * mu[c];
      qDot[j] += modes[row + j] * mv[c];
    }
  }
  for (let j = 0; j < n; j++) energy[j] = 0.5 * qDot[j] * qDot[j] + 0.5 * omega[j] * omega[j] * q[j] * q[j];
  return { q, qDot, energy };
}

/**
 * 1/2 v^T M v + 1/2 u^T K u over the basis's free DOFs (u = x - rest; K from elasticStiffness on basis.dofs, whose
 * null space holds the rigid translations, so no shift is needed): the linearised total energy, which the modal
 * energies of a per-DOF basis sum to.
 */
export function linearizedEnergy(K: Float64Array, basis: ModalBasis, rest: Float64Array, x: Float64Array, v: Float64Array): number {
  const { dofs, dofMass } = basis;
  const n = dofs.length;
  let kinetic = 0;
  let elastic = 0;
  for (let i = 0; i < n; i++) {
    kinetic += dofMass[i] * v[dofs[i]] * v[dofs[i]];
    const ui = x[dofs[i]] - rest[dofs[i]];
    let Ku = 0;
    for (let j = 0; j < n; j++) Ku += K[i * n + j] * (x[dofs[j]] - rest[dofs[j]]);
    elastic += ui * Ku;
  }
  return 0.5 * kinetic + 0.5 * elastic;
}
