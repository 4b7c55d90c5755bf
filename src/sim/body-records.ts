/**
 * Energies and momenta of each body of a model (bodies.csv, summary.json's `bodies`).
 *
 * Every body owns a contiguous range of DOF nodes (BodyInfo), so kinetic energy, momenta and gravity are sums over
 * that range, with the same masses the integrators use: lumped node masses for tets, shells, chains and particles;
 * for an affine body the diagonal of its 12x12 mass in its principal frame (model/affine-body.ts). There
 * 1/2 sum m_d v_d^2 is exactly 1/2 qdot^T M qdot, and sum m x x v over its 4 nodes is exactly the angular momentum
 * integral of rho x x xdot dV of the velocity field xdot = A_dot X + p_dot (the first moment vanishes and the second
 * is diagonal in that frame, so the cross terms drop out). Linear momentum and gravity weigh by first moments
 * (Model.linearMass): m on an affine body's translation, nothing on its matrix columns.
 */
import { Gravity } from '../energies/gravity.js';
import type { Model } from '../model/model.js';
import type { BodyRecord } from './records.js';

/** The records of all of the model's bodies at state (x, v), in model order. */
export function bodyRecords(model: Model, x: Float64Array, v: Float64Array): BodyRecord[] {
  const mass = model.mass;
  const linearMass = model.linearMass ?? mass;
  const gravity = model.terms.filter((t): t is Gravity => t instanceof Gravity);
  return model.bodies.map((b, body) => {
    const { kinetic, momentum, angularMomentum } = nodeMomenta(mass, linearMass, x, v, b.firstNode, b.nodeCount);
    let elastic = 0;
    for (const term of b.terms) elastic += term.energy(x);
    let g = 0;
    for (const term of gravity) g += term.energyOfNodes(x, b.firstNode, b.nodeCount);
    return { body, name: b.name, kind: b.kind, kinetic, elastic, gravity: g, momentum, angularMomentum };
  });
}

/**
 * Kinetic energy 1/2 sum m v^2, linear momentum (weighed by linearMass) and angular momentum about the origin of
 * nodes [firstNode, firstNode + nodeCount): the metrics' totals (all nodes) and each body's record.
 */
export function nodeMomenta(
  mass: Float64Array,
  linearMass: Float64Array,
  x: Float64Array,
  v: Float64Array,
  firstNode: number,
  nodeCount: number,
): { kinetic: number; momentum: [number, number, number]; angularMomentum: [number, number, number] } {
  let kinetic = 0;
  const momentum: [number, number, number] = [0, 0, 0];
  const angular: [number, number, number] = [0, 0, 0];
  for (let d = 3 * firstNode; d < 3 * (firstNode + nodeCount); d += 3) {
    const m = mass[d];
    kinetic += 0.5 * m * (v[d] * v[d] + v[d + 1] * v[d + 1] + v[d + 2] * v[d + 2]);
    const px = m * v[d];
    const py = m * v[d + 1];
    const pz = m * v[d + 2];
    const ml = linearMass[d];
    momentum[0] += ml * v[d];
    momentum[1] += ml * v[d + 1];
    momentum[2] += ml * v[d + 2];
    angular[0] += x[d + 1] * pz - x[d + 2] * py;
    angular[1] += x[d + 2] * px - x[d] * pz;
    angular[2] += x[d] * py - x[d + 1] * px;
  }
  return { kinetic, momentum, angularMomentum: angular };
}
