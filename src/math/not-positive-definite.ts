/**
 * Thrown by a linear solver that finds its matrix not positive definite (a Cholesky pivot <= 0, or CG's
 * p^T A p <= 0). Newton catches it when it tried an unprojected Hessian, which may be indefinite, and falls back to
 * the projected one; anywhere else it is an error like any other.
 */
export class NotPositiveDefiniteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotPositiveDefiniteError';
  }
}
