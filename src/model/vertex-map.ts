/**
 * The map from the model's degrees of freedom to the vertices that contact, output and the per-vertex terms see.
 *
 * DOFs come in 3-vectors ("nodes": 3 * node + axis). Every vertex is a fixed linear combination of nodes with scalar
 * weights, x_v = sum_j w_j q_{n_j}, so its Jacobian is (w_1 I, ..., w_k I):
 *   - a tet, particle or obstacle node is its own vertex (weight 1): vertices 0 .. identityCount-1 ARE nodes
 *     0 .. identityCount-1, so a model without mapped bodies has the identity map and no numbering of its own;
 *   - an affine body's surface vertex is x = p + sum_k r_k c_k (its translation p and the columns c_k of its matrix
 *     A, r the vertex's rest coordinates in the body frame; see affine-body.ts): 4 nodes, weights (1, r_1, r_2, r_3).
 * Being linear in q, a vertex moves on a straight line when q does, so CCD and line-search filters evaluated on
 * mapped vertex positions stay exact; gradients map back as J^T g and Hessians as J^T H J, 3x3 block by 3x3 block.
 */
export interface VertexMap {
  readonly nVertices: number;
  /** Vertices below this are the nodes of the same index. */
  readonly identityCount: number;
  /** Mapped vertex identityCount + k combines nodes[start[k] .. start[k + 1]) with `weights`. */
  readonly start: Int32Array;
  readonly nodes: Int32Array;
  readonly weights: Float64Array;
}

/** The identity map of a model with n nodes. */
export function identityVertexMap(n: number): VertexMap {
  return { nVertices: n, identityCount: n, start: new Int32Array(1), nodes: new Int32Array(0), weights: new Float64Array(0) };
}

export function isIdentityMap(map: VertexMap): boolean {
  return map.nVertices === map.identityCount;
}

/** Position (or velocity, the map being linear) of vertex v from the DOF vector q, into out[o .. o + 3). */
export function vertexPosition(map: VertexMap, q: Float64Array, v: number, out: Float64Array, o: number): void {
  if (v < map.identityCount) {
    out[o] = q[3 * v];
    out[o + 1] = q[3 * v + 1];
    out[o + 2] = q[3 * v + 2];
    return;
  }
  const k = v - map.identityCount;
  let x = 0;
  let y = 0;
  let z = 0;
  for (let j = map.start[k]; j < map.start[k + 1]; j++) {
    const w = map.weights[j];
    const d = 3 * map.nodes[j];
    x += w * q[d];
    y += w * q[d + 1];
    z += w * q[d + 2];
  }
  out[o] = x;
  out[o + 1] = y;
  out[o + 2] = z;
}

/** Positions of all vertices (3 per vertex) from q. */
export function vertexPositions(map: VertexMap, q: Float64Array, out: Float64Array): void {
  out.set(q.subarray(0, 3 * map.identityCount));
  for (let v = map.identityCount; v < map.nVertices; v++) vertexPosition(map, q, v, out, 3 * v);
}

/** Positions of the listed vertices packed in order (3 per entry): what a frame writes. */
export function gatherVertices(map: VertexMap, q: Float64Array, vertices: ArrayLike<number>, out: Float64Array): void {
  for (let i = 0; i < vertices.length; i++) vertexPosition(map, q, vertices[i], out, 3 * i);
}

/** g_q += scale * J^T g_v: a per-vertex gradient (3 per vertex) pulled back to the DOFs. */
export function addPulledBackGradient(map: VertexMap, gVertex: Float64Array, scale: number, g: Float64Array): void {
  const n = 3 * map.identityCount;
  for (let d = 0; d < n; d++) g[d] += scale * gVertex[d];
  for (let k = 0; k < map.nVertices - map.identityCount; k++) {
    const o = 3 * (map.identityCount + k);
    for (let j = map.start[k]; j < map.start[k + 1]; j++) {
      const w = scale * map.weights[j];
      const d = 3 * map.nodes[j];
      g[d] += w * gVertex[o];
      g[d + 1] += w * gVertex[o + 1];
      g[d + 2] += w * gVertex[o + 2];
    }
  }
}
