import { createASearch } from './a-search.js';
import { createBdf2 } from './bdf2.js';
import { createBlending } from './blending.js';
import { createSdirk2, createTrBdf2 } from './dirk.js';
import { createExplicit } from './explicit.js';
import { createImplicitEuler } from './implicit-euler.js';
import { createImplicitMidpoint } from './implicit-midpoint.js';
import type { Integrator, IntegratorContext, IntegratorParams } from './integrator.js';
import { createNewmark } from './newmark.js';

/** One integrator parameter: its default and what it means (listed by `vivace scenes` and the README). */
export interface ParamSpec {
  default: number | boolean;
  doc: string;
}

export interface IntegratorSpec {
  name: string;
  summary: string;
  implicit: boolean;
  params: Record<string, ParamSpec>;
  create(ctx: IntegratorContext, params: IntegratorParams): Integrator;
  /**
   * Order of accuracy of the step. Steps of order 2 or more are exact for a constant force, so the work of a sliding
   * block's friction equals the kinetic energy it loses; first-order ones remove energy of their own besides
   * (implicit Euler m |dv|^2 / 2 per step).
   */
  order(params: IntegratorParams): number;
  /**
   * Why the step cannot apply Rayleigh damping, when it cannot. Damping is applied where every damping force of the
   * step is evaluated implicitly or in an A-stable stage (the trapezoidal first stage of SDIRK2 / TR-BDF2), so
   * stiff modes are damped stably.
   */
  noRayleigh?: string;
  /**
   * True when a step depends on (t, x, v) and the energy target only, so a run can go on from a checkpoint of them
   * (simulate's `resume`). Multistep methods (BDF2's previous state) and the sparse A-search's miss history are not.
   */
  resumable?(params: IntegratorParams): boolean;
}

const aSearchParams: Record<string, ParamSpec> = {
  alphaMin: { default: 0, doc: 'lower clip of alpha (0 = implicit Euler velocity)' },
  alphaMax: { default: 1.1, doc: 'upper clip of alpha' },
  sparse: { default: false, doc: 'search only after three same-side misses of the target, else alpha = 1' },
};

/**
 * Every integrator's factory first applies the one rule for dissipation: friction acts through the implicit solve
 * (lagged, at the velocity each stage produces), so explicit methods refuse it; Rayleigh damping is refused where
 * the spec says why (noRayleigh). Both errors name the integrators that accept it.
 */
const spec = (s: IntegratorSpec): IntegratorSpec => ({
  ...s,
  create(ctx, params) {
    const accepting = (ok: (t: IntegratorSpec) => boolean) => integrators.filter(ok).map((t) => t.name).join(', ');
    if (ctx.dyn.friction && !s.implicit) {
      throw new Error(`${s.name}: friction acts through the implicit solve, which an explicit method has not; use one of ${accepting((t) => t.implicit)}`);
    }
    if (ctx.dyn.settings.rayleigh > 0 && s.noRayleigh) {
      throw new Error(`${s.name}: Rayleigh damping is not supported (${s.noRayleigh}); use one of ${accepting((t) => !t.noRayleigh)}`);
    }
    return s.create(ctx, params);
  },
});

const first = () => 1;
const second = () => 2;
const explicitDamping = 'an explicit step damps stiff modes unstably';

export const integrators: readonly IntegratorSpec[] = [
  spec({ name: 'explicit-euler', summary: 'forward Euler, x and v from the old state', implicit: false, order: first, noRayleigh: explicitDamping, params: {}, create: (c) => createExplicit(c, 'explicit-euler') }),
  spec({ name: 'symplectic-euler', summary: 'v from old forces, then x from new v', implicit: false, order: first, noRayleigh: explicitDamping, params: {}, create: (c) => createExplicit(c, 'symplectic-euler') }),
  spec({ name: 'rk4', summary: 'classical 4-stage Runge-Kutta', implicit: false, order: () => 4, noRayleigh: explicitDamping, params: {}, create: (c) => createExplicit(c, 'rk4') }),
  spec({ name: 'implicit-euler', summary: 'backward Euler (incremental potential, IPC style)', implicit: true, order: first, params: {}, create: (c) => createImplicitEuler(c), resumable: () => true }),
  spec({ name: 'bdf2', summary: 'two-step BDF, implicit Euler start', implicit: true, order: second, params: {}, create: (c) => createBdf2(c) }),
  spec({ name: 'implicit-midpoint', summary: 'symplectic midpoint rule, solved for the midpoint', implicit: true, order: second, params: {}, create: (c) => createImplicitMidpoint(c) }),
  spec({ name: 'trapezoidal', summary: 'Newmark(1/4, 1/2)', implicit: true, order: second, params: {}, create: (c) => createNewmark(c, 0.25, 0.5, 'trapezoidal') }),
  spec({
    name: 'newmark',
    summary: 'implicit Newmark family',
    implicit: true,
    order: (p) => (num(p, 'gamma', 0.5) === 0.5 ? 2 : 1),
    params: { beta: { default: 0.25, doc: 'Newmark beta, in (0, 0.5]' }, gamma: { default: 0.5, doc: 'Newmark gamma, in [0, 1]' } },
    create: (c, p) => createNewmark(c, num(p, 'beta', 0.25), num(p, 'gamma', 0.5)),
  }),
  spec({ name: 'sdirk2', summary: 'two-stage L-stable SDIRK (seed 002, gamma = 2 - sqrt 2)', implicit: true, order: second, params: {}, create: (c) => createSdirk2(c) }),
  spec({ name: 'tr-bdf2', summary: 'trapezoidal half step then BDF2 (seed 002)', implicit: true, order: second, params: {}, create: (c) => createTrBdf2(c) }),
  spec({
    name: 'blending',
    summary: 'seed 001: bisection between implicit midpoint and backward/forward Euler on tracked energy',
    implicit: true,
    order: first, // its blends toward backward or forward Euler are first order
    noRayleigh: 'its forward Euler branch would apply the damping explicitly; seed 001 damps after the step',
    params: {
      tolerance: { default: 0.01, doc: 'relative energy tolerance of the bisection' },
      maxBisections: { default: 50, doc: 'bisection iteration cap' },
    },
    create: (c, p) => createBlending(c, { tolerance: num(p, 'tolerance', 0.01), maxBisections: num(p, 'maxBisections', 50) }),
  }),
  spec({
    name: 'a-1',
    summary: 'seed 000: implicit Euler positions, velocity corrected with alpha = 1 (linearly symplectic)',
    implicit: true,
    order: first, // implicit Euler positions
    params: { alpha: { default: 1, doc: 'the fixed alpha (1 is A-1; 0 is implicit Euler)' } },
    create: (c, p) => createASearch(c, { fixedAlpha: num(p, 'alpha', 1), alphaMin: -Infinity, alphaMax: Infinity, sparse: false }, 'a-1'),
    resumable: () => true,
  }),
  spec({
    name: 'a-search',
    summary: 'seed 000 Algorithm 1: alpha chosen each step to meet the energy target',
    implicit: true,
    order: first,
    params: aSearchParams,
    create: (c, p) =>
      createASearch(
        c,
        { alphaMin: num(p, 'alphaMin', 0), alphaMax: num(p, 'alphaMax', 1.1), sparse: bool(p, 'sparse', false) },
        'a-search',
      ),
    resumable: (p) => !bool(p, 'sparse', false),
  }),
];

export const integratorNames = integrators.map((s) => s.name);

export function findIntegrator(name: string): IntegratorSpec {
  const found = integrators.find((s) => s.name === name);
  if (!found) throw new Error(`unknown integrator '${name}'; allowed: ${integratorNames.join(', ')}`);
  return found;
}

/** Checks that every given parameter is one the integrator knows, naming the offender and the allowed ones. */
export function checkParams(spec: IntegratorSpec, params: IntegratorParams): void {
  for (const key of Object.keys(params)) {
    if (!(key in spec.params)) {
      const allowed = Object.keys(spec.params);
      throw new Error(`integrator '${spec.name}' has no parameter '${key}'; allowed: ${allowed.length ? allowed.join(', ') : '(none)'}`);
    }
  }
}

function num(p: IntegratorParams, key: string, fallback: number): number {
  const v = p[key];
  if (v === undefined) return fallback;
  const x = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(x)) throw new Error(`integrator parameter '${key}' must be a number (got '${String(v)}')`);
  return x;
}

function bool(p: IntegratorParams, key: string, fallback: boolean): boolean {
  const v = p[key];
  if (v === undefined) return fallback;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1' || v === 1) return true;
  if (v === 'false' || v === '0' || v === 0) return false;
  throw new Error(`integrator parameter '${key}' must be true or false (got '${String(v)}')`);
}
