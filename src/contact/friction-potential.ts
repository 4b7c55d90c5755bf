import type { PotentialTerm } from '../energies/potential.js';
import type { BsrMatrix, BsrPattern, PatternBuilder } from '../math/bsr.js';
import type { ActiveContact, BarrierPotential } from './barrier-potential.js';
import type { CollisionMesh } from './collision-mesh.js';
import { frictionDissipation, frictionLocal, frictionTangentialDisplacement } from './friction.js';
import { pairKindNamed } from './pairs/registry.js';
import { MAX_STENCIL, addStencilPattern, gatherNode, scatterGradient, scatterHessianAt, stencilInPattern, stencilSlots } from './pairs/stencil.js';

/** Slots per contact in FrictionPotential's slot cache. */
const SLOTS = MAX_STENCIL * MAX_STENCIL;

/**
 * IPC's lagged Coulomb friction (Li et al. 2020) as a dissipative term of the step's minimisation (not of P):
 *
 *     D(x) = sum_k mu_k lambda_k f0(|P_k^T sum_i w_ki (x_i - xHat_i)|),   eps = eps_v * beta
 *
 * with the contacts, their normal forces lambda_k, closest-point weights w_k and tangent bases P_k frozen at the
 * step start x_n (friction.ts has the local formulas). The step's velocity is v = (x - xHat) / beta, so the
 * gradient is the friction force mu lambda f1(|v_t| / eps_v) opposing the tangential velocity; the incremental
 * potential weighs D with the same c as P. mu_k is the smaller of the two surfaces' coefficients. The contact's
 * pair kind gives mu_k and the frame (w_k, P_k); from there on every contact is a stencil of up to 4 nodes.
 */
export class FrictionPotential implements PotentialTerm {
  readonly name = 'friction';
  /** Lagged contacts: node ids (4 per contact, -1 padding), stencil size, weights (4), bases (6), mu * lambda. */
  private count = 0;
  private nodes = new Int32Array(0);
  private sizes = new Uint8Array(0);
  private weights = new Float64Array(0);
  private bases = new Float64Array(0);
  private muLambda = new Float64Array(0);
  /**
   * Pattern slots of each contact's blocks (MAX_STENCIL^2 per contact, stencilSlots), valid for `slotsPattern`: the
   * contacts stay the same over a step's Newton iterations, so the pattern is searched once per step and pattern.
   */
  private slots = new Int32Array(0);
  private slotsPattern: BsrPattern | null = null;
  /**
   * Each contact's slip u (2 numbers) where the Hessian was last assembled this step, and whether the contact is
   * reversing: its slip turned against that direction from one Newton iteration to the next (it passes through
   * stick), until it slides on past where it was (see friction.ts: reversing contacts).
   */
  private lastSlip = new Float64Array(0);
  private reversing = new Uint8Array(0);
  private readonly slip = new Float64Array(2);
  private readonly xHat: Float64Array;
  private eps = 1;
  private readonly contacts: ActiveContact[] = [];
  private readonly xs = new Float64Array(12);
  private readonly xns = new Float64Array(12);
  private readonly grad = new Float64Array(12);
  private readonly hess = new Float64Array(144);
  private readonly x12 = new Float64Array(12);
  private readonly w = new Float64Array(4);
  private readonly P = new Float64Array(6);

  constructor(
    private readonly mesh: CollisionMesh,
    private readonly barrier: BarrierPotential,
    private readonly frictionVelocity: number,
  ) {
    this.xHat = new Float64Array(3 * mesh.nNodes);
  }

  /** Drops the lagged contacts (no friction until the next lag). */
  clear(): void {
    this.count = 0;
  }

  /** Number of lagged contacts with friction this step. */
  get activeCount(): number {
    return this.count;
  }

  /**
   * Freezes the contacts at x_n (normal forces from the barrier there), with xHat and beta of the step's velocity
   * formula v = (x - xHat) / beta.
   */
  lag(xn: Float64Array, xHat: Float64Array, beta: number): void {
    this.contacts.length = 0;
    this.barrier.activeContacts(xn, this.contacts);
    const m = this.contacts.length;
    if (this.muLambda.length < m) {
      this.nodes = new Int32Array(4 * m);
      this.sizes = new Uint8Array(m);
      this.weights = new Float64Array(4 * m);
      this.bases = new Float64Array(6 * m);
      this.muLambda = new Float64Array(m);
      this.slots = new Int32Array(MAX_STENCIL * MAX_STENCIL * m);
    }
    this.slotsPattern = null;
    let n = 0;
    for (const c of this.contacts) {
      const kind = pairKindNamed(c.kind);
      const mu = kind.frictionCoefficient(this.mesh, c);
      if (!(mu > 0) || !(c.normalForce > 0)) continue;
      const w = this.weights.subarray(4 * n, 4 * n + 4);
      const P = this.bases.subarray(6 * n, 6 * n + 6);
      for (let i = 0; i < c.nodes.length; i++) gatherNode(xn, c.nodes[i], this.x12, 3 * i);
      const size = kind.frictionFrame(this.mesh, c, this.x12, w, P);
      for (let i = 0; i < 4; i++) this.nodes[4 * n + i] = i < size ? c.nodes[i] : -1;
      this.sizes[n] = size;
      this.muLambda[n] = mu * c.normalForce;
      n++;
    }
    this.count = n;
    if (this.reversing.length < n) {
      this.lastSlip = new Float64Array(2 * n);
      this.reversing = new Uint8Array(n);
    }
    this.lastSlip.fill(0, 0, 2 * n);
    this.reversing.fill(0, 0, n);
    this.xHat.set(xHat);
    this.eps = this.frictionVelocity * beta;
  }

  private load(k: number, x: Float64Array): number {
    const size = this.sizes[k];
    for (let i = 0; i < size; i++) {
      const node = this.nodes[4 * k + i];
      gatherNode(x, node, this.xs, 3 * i);
      gatherNode(this.xHat, node, this.xns, 3 * i);
    }
    for (let i = 0; i < 4; i++) this.w[i] = this.weights[4 * k + i];
    for (let i = 0; i < 6; i++) this.P[i] = this.bases[6 * k + i];
    return size;
  }

  energy(x: Float64Array): number {
    let e = 0;
    for (let k = 0; k < this.count; k++) {
      const size = this.load(k, x);
      e += frictionLocal(this.xs, this.xns, size, this.w, this.P, 1, this.muLambda[k], this.eps, null, null);
    }
    return e;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    for (let k = 0; k < this.count; k++) {
      const size = this.load(k, x);
      frictionLocal(this.xs, this.xns, size, this.w, this.P, 1, this.muLambda[k], this.eps, this.grad, null);
      scatterGradient(g, this.nodes, 4 * k, size, this.grad, scale);
    }
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, _projectPsd: boolean): void {
    if (this.slotsPattern !== H.pattern) {
      for (let k = 0; k < this.count; k++) stencilSlots(H.pattern, this.nodes, 4 * k, this.sizes[k], this.mesh.fixedNodes, this.slots, SLOTS * k);
      this.slotsPattern = H.pattern;
    }
    const { lastSlip, reversing, slip } = this;
    for (let k = 0; k < this.count; k++) {
      const size = this.load(k, x);
      // Against the last iteration's slip: reversing; along it and beyond it: sliding on (no longer reversing).
      frictionTangentialDisplacement(this.xs, this.xns, size, this.w, this.P, slip);
      const u0 = lastSlip[2 * k];
      const u1 = lastSlip[2 * k + 1];
      const along = u0 * slip[0] + u1 * slip[1];
      if (along < 0) reversing[k] = 1;
      else if (along > u0 * u0 + u1 * u1) reversing[k] = 0;
      lastSlip[2 * k] = slip[0];
      lastSlip[2 * k + 1] = slip[1];
      // The local Hessian is PSD by construction (friction.ts).
      frictionLocal(this.xs, this.xns, size, this.w, this.P, 1, this.muLambda[k], this.eps, null, this.hess, reversing[k] === 1);
      scatterHessianAt(H.values, this.slots, SLOTS * k, size, this.hess, scale);
    }
  }

  patternStale(_x: Float64Array): boolean {
    return this.boundPattern !== null && !this.covers(this.boundPattern);
  }

  private boundPattern: BsrMatrix['pattern'] | null = null;

  private covers(pattern: BsrMatrix['pattern']): boolean {
    for (let k = 0; k < this.count; k++) if (!stencilInPattern(pattern, this.nodes, 4 * k, this.sizes[k], this.mesh.fixedNodes)) return false;
    return true;
  }

  addPattern(builder: PatternBuilder): void {
    const free = new Int32Array(MAX_STENCIL);
    const { base } = builder;
    const fixed = this.mesh.fixedNodes;
    for (let k = 0; k < this.count; k++) {
      // A grown pattern has the base's blocks already; re-adding them would only make its rows merge again.
      if (base && stencilInPattern(base, this.nodes, 4 * k, this.sizes[k], fixed)) continue;
      addStencilPattern(builder, this.nodes, 4 * k, this.sizes[k], fixed, free);
    }
  }

  bindPattern(H: BsrMatrix): void {
    this.boundPattern = H.pattern;
  }

  /** Energy friction removed over the step ending at x: sum of mu lambda f1(|u|) |u| (J). */
  dissipation(x: Float64Array): number {
    let e = 0;
    for (let k = 0; k < this.count; k++) {
      const size = this.load(k, x);
      e += frictionDissipation(this.xs, this.xns, size, this.w, this.P, 1, this.muLambda[k], this.eps);
    }
    return e;
  }
}
