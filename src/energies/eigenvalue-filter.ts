/**
 * How projected Newton makes an element Hessian positive semi-definite: the names of solver.hessianProjection and
 * the per-iteration filter they choose.
 *
 * - 'clamp': negative eigenvalues become 0 (the nearest PSD matrix; the classic projected Newton).
 * - 'abs': negative eigenvalues become their absolute value ("Stabler Neo-Hookean Simulation: Absolute Eigenvalue
 *   Filtering for Projected Newton", Chen et al. 2024): a direction of negative curvature keeps its magnitude of
 *   curvature instead of none, so Newton does not take huge steps along it that the line search must cut back.
 * - 'adaptive': per Newton iteration, 'clamp' when the last step's energy decrease matched the exact quadratic
 *   model's and 'abs' otherwise ("Trust-Region Eigenvalue Filtering for Projected Newton", Chen et al. 2024);
 *   see NewtonSolver for the ratio and the threshold.
 */

/** The filter applied to one element Hessian's eigenvalues. */
export type EigenvalueFilter = 'clamp' | 'abs';

export const HESSIAN_PROJECTIONS = ['clamp', 'abs', 'adaptive'] as const;
export type HessianProjection = (typeof HESSIAN_PROJECTIONS)[number];

/** An eigenvalue after the filter: max(value, 0) or |value| (NaN stays NaN, so a broken element still shows). */
export function filterEigenvalue(value: number, filter: EigenvalueFilter): number {
  if (!(value < 0)) return value;
  return filter === 'abs' ? -value : 0;
}
