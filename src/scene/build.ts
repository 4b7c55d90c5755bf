import { BarSegments } from '../energies/bar-segments.js';
import { ElasticTets, lumpedMass } from '../energies/elastic-tets.js';
import { Gravity } from '../energies/gravity.js';
import { OrthogonalityPotential } from '../energies/orthogonality.js';
import { makeMaterial } from '../energies/materials.js';
import type { PotentialTerm } from '../energies/potential.js';
import { Springs } from '../energies/springs.js';
import { SquaredLengthSprings } from '../energies/squared-springs.js';
import { BarrierPotential } from '../contact/barrier-potential.js';
import { MappedTerm } from '../contact/mapped-term.js';
import { buildCollisionMesh, type CollisionGroupInput, type ContactPlane } from '../contact/collision-mesh.js';
import { boxGrid, stairsSurface, torusSurface } from '../mesh/generators.js';
import { generateShellShape } from '../mesh/shell-shapes.js';
import { besselZero, drumModeShape } from '../analysis/membrane-modes.js';
import { ShellBending, plateBendingStiffness } from '../energies/shell-bending.js';
import { MEMBRANE_MODELS, ShellMembrane, lumpedShellMass, type MembraneModel } from '../energies/shell-membrane.js';
import { extractSurface } from '../mesh/surface.js';
import { sortTetsSpatially, type TetMesh, type TriSurface } from '../mesh/tet-mesh.js';
import { affineBodyLayout, rigidVelocity, type AffineBodyLayout } from '../model/affine-body.js';
import type { BodyInfo, ConstraintMotion, ContactModel, Model, ObstacleMesh } from '../model/model.js';
import { isIdentityMap, vertexPositions, type VertexMap } from '../model/vertex-map.js';
import { SceneError, contactSchema, type BodyDef, type Obstacle, type Region, type Scene } from './schema.js';

type Vec3 = [number, number, number];

/** A `mesh` obstacle of a scene (its triangles come from a file). */
export type MeshObstacle = Extract<Obstacle, { type: 'mesh' }>;

/**
 * Loads the mesh of a body whose mesh is a file or a shipped mesh (I/O lives outside the core): a tet mesh, or for a
 * shell read from a surface file its triangles (and no tets). Its optional `surface` loads the triangles of a `mesh`
 * obstacle (obstacles[index]) in the file's coordinates.
 */
export type MeshResolver = ((body: BodyDef, index: number) => ResolvedMesh) & { surface?: (obstacle: MeshObstacle, index: number) => TriSurface };
export type ResolvedMesh = TetMesh & { triangles?: Uint32Array };

const noFiles: MeshResolver = (body, index) => {
  throw new SceneError(`bodies[${index}].mesh: '${body.mesh.type}' meshes need a mesh loader (runScene of 'vivace' reads them in Node; simulateScene takes a 'meshes' function)`);
};

/** One body after meshing, transform and initial conditions, before it is merged into the model. */
interface BuiltBody {
  info: { name: string; tets: Uint32Array; surface: Uint32Array };
  rest: Float64Array;
  x0: Float64Array;
  v0: Float64Array;
  mass: Float64Array; // per node
  springs: { kind: 'hookean' | 'squared-length'; pairs: Uint32Array; stiffness: Float64Array; rest: Float64Array }[];
  /** A chain's bar segments (node pairs, cross-section areas, rest lengths). */
  segments?: { pairs: Uint32Array; area: Float64Array; rest: Float64Array };
  /** A thin shell's triangles (body-local node ids), its thickness and bending modulus, and its contact offset (m). */
  shell?: { triangles: Uint32Array; thickness: number; bendingModulus: number; contactOffset: number };
  fixed: Uint8Array; // per node
  moving: { nodes: number[]; velocity: Vec3 }[];
  material?: Scene['bodies'][number]['material'];
  /** An affine body: its 4 DOF nodes and mapped surface replace the mesh nodes (which are then not in the model). */
  affine?: AffineBodyLayout & { v0: Float64Array; stiffness: number; held: boolean };
}

/** Builds the Model of a validated scene: meshes, masses, energies, constraints, initial state. */
export function buildModel(scene: Scene, resolveMesh: MeshResolver = noFiles): Model {
  const defs = expandRepeats(scene.bodies);
  const built = defs.map((body, i) => buildBody(body, i, resolveMesh));
  const obstacleMeshes = scene.obstacles.map((o, oi) => obstacleSurface(o, oi, resolveMesh));
  // Node layout: the deformable bodies' nodes, the obstacles' nodes, then 4 nodes per affine body. Vertices (what
  // surfaces index, model/vertex-map.ts): the same as nodes up to the affine nodes, then the affine bodies' surface
  // vertices, mapped; without affine bodies the map is the identity.
  const bodyNodes = built.reduce((s, b) => s + (b.affine ? 0 : b.rest.length / 3), 0);
  const realNodes = bodyNodes + obstacleMeshes.reduce((s, m) => s + (m ? m.positions.length / 3 : 0), 0);
  const affineBodies = built.filter((b) => b.affine);
  const nNodes = realNodes + 4 * affineBodies.length;
  const rest = new Float64Array(3 * nNodes);
  const x0 = new Float64Array(3 * nNodes);
  const v0 = new Float64Array(3 * nNodes);
  const mass = new Float64Array(3 * nNodes);
  const constrained = new Uint8Array(3 * nNodes);
  const terms: PotentialTerm[] = [];
  const bodies: BodyInfo[] = [];
  const motions: ConstraintMotion[] = [];
  const surfaces: Uint32Array[] = [];
  const linearMass = new Float64Array(3 * nNodes);
  const mapped = mappedVertices(affineBodies, realNodes);
  const columns: number[] = [];
  const stiffnessVolume: number[] = [];
  let offset = 0;
  let nextAffine = 0;
  built.forEach((b, bi) => {
    if (b.affine) {
      const a = b.affine;
      const node = realNodes + 4 * nextAffine;
      rest.set(a.q0, 3 * node);
      x0.set(a.q0, 3 * node);
      v0.set(a.v0, 3 * node);
      mass.set(a.dofMass, 3 * node);
      linearMass.set(a.linearMass, 3 * node);
      // An affine body cannot be held in part: a `fixed` region that selects any of its nodes holds all 12 DOFs.
      if (a.held) constrained.fill(1, 3 * node, 3 * node + 12);
      columns.push(node + 1, node + 2, node + 3);
      stiffnessVolume.push(a.stiffness * a.volume);
      const surface = shift(a.triangles, mapped.firstVertex[nextAffine++]);
      const orthogonality = new OrthogonalityPotential(Uint32Array.of(node + 1, node + 2, node + 3), Float64Array.of(a.stiffness * a.volume));
      bodies.push({ name: b.info.name, kind: 'affine', firstNode: node, nodeCount: 4, terms: [orthogonality], tets: new Uint32Array(0), surface, affineNode: node });
      surfaces.push(surface);
      return;
    }
    const n = b.rest.length / 3;
    rest.set(b.rest, 3 * offset);
    x0.set(b.x0, 3 * offset);
    v0.set(b.v0, 3 * offset);
    for (let i = 0; i < n; i++) {
      for (let a = 0; a < 3; a++) mass[3 * (offset + i) + a] = b.mass[i];
      if (b.fixed[i]) for (let a = 0; a < 3; a++) constrained[3 * (offset + i) + a] = 1;
      for (const axis of defs[bi].lockAxes) constrained[3 * (offset + i) + AXIS[axis]] = 1;
    }
    const tets = shift(b.info.tets, offset);
    const surface = shift(b.info.surface, offset);
    const termsBefore = terms.length;
    if (tets.length > 0 || b.segments) {
      if (!b.material) throw new SceneError(`bodies[${bi}].material: required for a '${defs[bi].mesh.type}' mesh`);
      const material = makeMaterial(b.material.model, b.material.youngsModulus, b.material.poissonRatio);
      if (tets.length > 0) terms.push(new ElasticTets(rest, tets, material, defs[bi].name ?? `body ${bi}`));
      if (b.segments) terms.push(new BarSegments(shift(b.segments.pairs, offset), b.segments.area, b.segments.rest, material));
    }
    if (b.shell) terms.push(...shellTerms(b, shift(b.shell.triangles, offset), rest, bi, defs[bi].name ?? `body ${bi}`));
    for (const group of b.springs) {
      if (group.pairs.length === 0) continue;
      const Term = group.kind === 'hookean' ? Springs : SquaredLengthSprings;
      terms.push(new Term(shift(group.pairs, offset), group.stiffness, group.rest));
    }
    for (const m of b.moving) {
      const nodes = Uint32Array.from(m.nodes, (i) => i + offset);
      for (const node of nodes) for (let a = 0; a < 3; a++) constrained[3 * node + a] = 1;
      motions.push(constantVelocity(nodes, m.velocity));
    }
    const kind = b.shell ? 'shell' : b.segments ? 'chain' : tets.length > 0 ? 'tets' : 'particles';
    bodies.push({ name: b.info.name, kind, firstNode: offset, nodeCount: n, terms: terms.slice(termsBefore), tets, surface });
    surfaces.push(surface);
    offset += n;
  });
  // Constrained nodes start at rest unless they move with a handle.
  for (let d = 0; d < v0.length; d++) if (constrained[d]) v0[d] = 0;
  offset = 0;
  for (const b of built) {
    if (b.affine) continue;
    for (const m of b.moving) for (const i of m.nodes) for (let a = 0; a < 3; a++) v0[3 * (offset + i) + a] = m.velocity[a];
    offset += b.rest.length / 3;
  }
  // Obstacle meshes: fixed nodes after the bodies' (no mass, never moving), their triangles written with the frames.
  const obstacles: ObstacleMesh[] = [];
  const obstacleTriangles: (Uint32Array | null)[] = obstacleMeshes.map((m, oi) => {
    if (!m) return null;
    const n = m.positions.length / 3;
    rest.set(m.positions, 3 * offset);
    x0.set(m.positions, 3 * offset);
    constrained.fill(1, 3 * offset, 3 * (offset + n));
    const tris = shift(m.triangles, offset);
    surfaces.push(tris);
    obstacles.push({ name: scene.obstacles[oi].name, triangles: tris });
    offset += n;
    return tris;
  });
  linearMass.set(mass.subarray(0, 3 * realNodes));
  if (stiffnessVolume.length > 0) terms.push(new OrthogonalityPotential(Uint32Array.from(columns), Float64Array.from(stiffnessVolume)));
  const g = scene.gravity;
  if (g[0] !== 0 || g[1] !== 0 || g[2] !== 0) terms.push(new Gravity(linearMass, [g[0], g[1], g[2]]));
  let contact: ContactModel | undefined;
  if (scene.contact || scene.obstacles.length > 0) {
    const i = defs.findIndex((d) => d.kind === 'affine');
    if (i >= 0 && scene.contact?.adaptiveKappa) throw new SceneError(`contact.adaptiveKappa: not available with affine bodies (bodies[${i}]) yet; give a fixed contact.kappa`);
    contact = buildContact(scene, defs, built, bodies, obstacleTriangles, mapped.map, rest, constrained);
    // The barrier acts on vertex positions; with affine bodies through the vertex map (contact/mapped-term.ts).
    terms.push(isIdentityMap(mapped.map) ? contact.barrier : new MappedTerm(contact.barrier, mapped.map));
  }
  const surface = new Uint32Array(surfaces.reduce((s, a) => s + a.length, 0));
  let o = 0;
  for (const s of surfaces) {
    surface.set(s, o);
    o += s.length;
  }
  for (let d = 0; d < mass.length; d++) {
    if (!constrained[d] && !(mass[d] > 0)) throw new SceneError(`node ${Math.floor(d / 3)} is free but has no mass (a node in no tet?)`);
  }
  return { nNodes, rest, x0, v0, mass, constrained, motions, terms, bodies, surface, obstacles, contact, vertexMap: mapped.map, linearMass };
}

/**
 * The vertex map of a model whose first realNodes nodes are vertices themselves and whose affine bodies (in order)
 * own the 4 nodes from realNodes + 4 k: their surface vertices x = p + sum_k r_k c_k follow, numbered from
 * realNodes body by body (firstVertex).
 */
function mappedVertices(affine: BuiltBody[], realNodes: number): { map: VertexMap; firstVertex: number[] } {
  const count = affine.reduce((s, b) => s + b.affine!.vertices.length, 0);
  const start = new Int32Array(count + 1);
  const nodes = new Int32Array(4 * count);
  const weights = new Float64Array(4 * count);
  const firstVertex: number[] = [];
  let v = 0;
  affine.forEach((b, k) => {
    const { vertices, restCoordinates } = b.affine!;
    const node = realNodes + 4 * k;
    firstVertex.push(realNodes + v);
    for (let i = 0; i < vertices.length; i++, v++) {
      start[v + 1] = 4 * (v + 1);
      nodes.set([node, node + 1, node + 2, node + 3], 4 * v);
      weights.set([1, restCoordinates[3 * i], restCoordinates[3 * i + 1], restCoordinates[3 * i + 2]], 4 * v);
    }
  });
  return { map: { nVertices: realNodes + count, identityCount: realNodes, start, nodes, weights }, firstVertex };
}

/** The membrane and (unless its bending modulus is 0) the bending term of a shell body, on global node ids. */
function shellTerms(b: BuiltBody, triangles: Uint32Array, rest: Float64Array, bi: number, label: string): PotentialTerm[] {
  const material = b.material;
  if (!material) throw new SceneError(`bodies[${bi}].material: required for a 'shell' mesh (its membrane's model, youngsModulus and poissonRatio)`);
  if (!(MEMBRANE_MODELS as readonly string[]).includes(material.model)) {
    throw new SceneError(`bodies[${bi}].material.model: a shell's membrane is ${MEMBRANE_MODELS.map((m) => `'${m}'`).join(' or ')}, not '${material.model}'`);
  }
  const { thickness, bendingModulus } = b.shell!;
  const terms: PotentialTerm[] = [new ShellMembrane(rest, triangles, material.model as MembraneModel, material.youngsModulus, material.poissonRatio, thickness, label)];
  if (bendingModulus > 0) terms.push(new ShellBending(rest, triangles, plateBendingStiffness(bendingModulus, material.poissonRatio, thickness) / 2, label));
  return terms;
}

/** buildModel for a front end: any failure comes from the input (mesh files, regions, materials), so it is a SceneError. */
export function buildSceneModel(scene: Scene, resolveMesh?: MeshResolver): Model {
  try {
    return buildModel(scene, resolveMesh);
  } catch (err) {
    if (err instanceof SceneError) throw err;
    throw new SceneError(`cannot build scene '${scene.name}': ${(err as Error).message}`);
  }
}

const AXIS = { x: 0, y: 1, z: 2 } as const;

/** Bodies with `repeat` become one body per copy, translated on the grid and named name[i,j,k]. */
function expandRepeats(bodies: readonly BodyDef[]): BodyDef[] {
  const out: BodyDef[] = [];
  bodies.forEach((body, bi) => {
    if (!body.repeat) {
      out.push(body);
      return;
    }
    const { counts, spacing } = body.repeat;
    const base = body.name ?? `body ${bi}`;
    for (let k = 0; k < counts[2]; k++) {
      for (let j = 0; j < counts[1]; j++) {
        for (let i = 0; i < counts[0]; i++) {
          const t = body.transform.translate;
          out.push({
            ...body,
            name: `${base}[${i},${j},${k}]`,
            repeat: undefined,
            transform: { ...body.transform, translate: [t[0] + i * spacing[0], t[1] + j * spacing[1], t[2] + k * spacing[2]] },
          });
        }
      }
    }
  });
  return out;
}

function obstacleSurface(o: Obstacle, index: number, resolveMesh: MeshResolver): { positions: Float64Array; triangles: Uint32Array } | null {
  if (o.type === 'mesh') {
    if (!resolveMesh.surface) throw new SceneError(`obstacles[${index}].path: a 'mesh' obstacle is read from a file, which needs a mesh loader (runScene of 'vivace' and vivace run read it in Node)`);
    const surface = resolveMesh.surface(o, index);
    const positions = new Float64Array(surface.positions);
    applyTransform(positions, o.transform);
    return { positions, triangles: surface.triangles };
  }
  if (o.type === 'stairs') return stairsSurface(o.steps, o.stepHeight, o.stepDepth, o.width, o.origin as Vec3);
  return null;
}

/** The collision system of the scene: one group per body and obstacle mesh, planes, and the barrier term. */
function buildContact(
  scene: Scene,
  defs: BodyDef[],
  built: BuiltBody[],
  bodies: BodyInfo[],
  obstacleTriangles: (Uint32Array | null)[],
  map: VertexMap,
  rest: Float64Array,
  constrained: Uint8Array,
): ContactModel {
  // The collision system lives on vertices (the nodes themselves without affine bodies).
  const nVertices = map.nVertices;
  const settings = scene.contact ?? contactSchema.parse({}); // obstacles without a contact section: the defaults
  const groups: CollisionGroupInput[] = [];
  let offset = 0;
  built.forEach((b, bi) => {
    const def = defs[bi];
    const n = b.rest.length / 3;
    // A chain's nodes are points too: it has no surface.
    const isParticles = def.mesh.type === 'particles' || def.mesh.type === 'chain';
    groups.push({
      name: bodies[bi].name,
      kind: isParticles ? 'particles' : def.mesh.type === 'shell' ? 'shell' : 'body',
      friction: def.friction ?? settings.friction,
      selfContact: def.selfContact ?? settings.selfContact,
      contactOffset: b.shell?.contactOffset ?? 0,
      triangles: bodies[bi].surface,
      points: isParticles ? Uint32Array.from({ length: n }, (_, i) => offset + i) : undefined,
    });
    if (!b.affine) offset += n;
  });
  const planes: ContactPlane[] = [];
  scene.obstacles.forEach((o, oi) => {
    const friction = o.friction ?? settings.friction;
    if (o.type === 'plane') {
      const len = Math.hypot(...o.normal);
      if (!(len > 0)) throw new SceneError(`obstacles[${oi}].normal: must be a non-zero vector`);
      const normal = o.normal.map((c) => c / len) as Vec3;
      planes.push({ name: o.name, normal, offset: normal[0] * o.point[0] + normal[1] * o.point[1] + normal[2] * o.point[2], friction });
    } else {
      groups.push({ name: o.name, kind: 'obstacle', friction, selfContact: false, triangles: obstacleTriangles[oi]! });
    }
  });
  const fixedNodes = new Uint8Array(nVertices);
  for (let i = 0; i < map.identityCount; i++) fixedNodes[i] = constrained[3 * i] & constrained[3 * i + 1] & constrained[3 * i + 2];
  // A mapped vertex is fixed when all its nodes are (a held affine body).
  for (let k = 0; k + map.identityCount < nVertices; k++) {
    let all = 1;
    for (let j = map.start[k]; j < map.start[k + 1]; j++) for (let a = 0; a < 3; a++) all &= constrained[3 * map.nodes[j] + a];
    fixedNodes[map.identityCount + k] = all;
  }
  const mesh = buildCollisionMesh(nVertices, groups, planes, fixedNodes);
  const restVertices = new Float64Array(3 * nVertices);
  vertexPositions(map, rest, restVertices);
  const barrier = new BarrierPotential(mesh, restVertices, { kappa: settings.kappa, dhat: settings.dhat, hessian: settings.barrierHessian });
  const hasFriction = groups.some((g) => g.friction > 0) && (planes.some((p) => p.friction > 0) || groups.length > 1 || groups.some((g) => g.friction > 0 && g.selfContact));
  return { mesh, barrier, frictionVelocity: settings.frictionVelocity, hasFriction, adaptiveKappa: settings.adaptiveKappa };
}

function buildBody(def: BodyDef, index: number, resolveMesh: MeshResolver): BuiltBody {
  const where = `bodies[${index}]`;
  let positions: Float64Array;
  let tets: Uint32Array = new Uint32Array(0);
  let mass: Float64Array;
  const springs: BuiltBody['springs'] = [];
  let segments: BuiltBody['segments'];
  let torusTriangles: Uint32Array | undefined;
  let shellTriangles: Uint32Array | undefined;
  const mesh = def.mesh;
  if (mesh.type === 'particles') {
    if (mesh.masses.length !== mesh.positions.length) {
      throw new SceneError(`${where}.mesh.masses: ${mesh.masses.length} masses for ${mesh.positions.length} particles`);
    }
    positions = Float64Array.from(mesh.positions.flat());
    mass = Float64Array.from(mesh.masses);
  } else if (mesh.type === 'torus') {
    if (def.kind !== 'affine') throw new SceneError(`${where}.mesh: a 'torus' mesh is a surface without tets; it needs "kind": "affine"`);
    if (!(mesh.minorRadius < mesh.majorRadius)) throw new SceneError(`${where}.mesh.minorRadius: must be less than majorRadius (${mesh.majorRadius}), got ${mesh.minorRadius}`);
    const torus = torusSurface(mesh.majorRadius, mesh.minorRadius, mesh.segments, mesh.sides);
    positions = torus.positions;
    torusTriangles = torus.triangles;
    mass = new Float64Array(positions.length / 3);
  } else if (mesh.type === 'chain') {
    positions = new Float64Array(3 * (mesh.cells + 1));
    for (let i = 0; i <= mesh.cells; i++) positions[3 * i] = (mesh.length * i) / mesh.cells;
    mass = new Float64Array(mesh.cells + 1);
  } else if (mesh.type === 'shell') {
    const surface = mesh.shape.type === 'file' ? resolveMesh(def, index) : generateShellShape(mesh.shape);
    if (!surface.triangles || surface.triangles.length === 0) throw new SceneError(`${where}.mesh.shape: the shell has no triangles`);
    positions = new Float64Array(surface.positions);
    shellTriangles = surface.triangles;
    mass = new Float64Array(positions.length / 3);
  } else {
    const tm = mesh.type === 'box' ? boxGrid(mesh.size, mesh.cells, { tetsPerCell: mesh.tetsPerCell }) : resolveMesh(def, index);
    positions = new Float64Array(tm.positions);
    // Generated boxes are listed cell by cell already; a file's tets may come in any order.
    tets = mesh.type === 'box' ? tm.tets : sortTetsSpatially(tm.positions, tm.tets);
    mass = new Float64Array(positions.length / 3);
  }
  applyTransform(positions, def.transform);
  const n = positions.length / 3;
  if (tets.length > 0) {
    if (!def.material) throw new SceneError(`${where}.material: required for a '${mesh.type}' mesh`);
    lumpedMass(positions, tets, def.material.density, mass);
  }
  let shell: BuiltBody['shell'];
  if (mesh.type === 'shell' && shellTriangles) {
    const density = mesh.areaDensity ?? (def.material ? def.material.density * mesh.thickness : undefined);
    if (density === undefined) throw new SceneError(`${where}.material: required for a 'shell' mesh`);
    lumpedShellMass(positions, shellTriangles, density, mass);
    shell = {
      triangles: shellTriangles,
      thickness: mesh.thickness,
      bendingModulus: mesh.bendingModulus ?? def.material?.youngsModulus ?? 0,
      contactOffset: mesh.contactOffset === 'thickness' ? mesh.thickness / 2 : mesh.contactOffset,
    };
  }
  if (mesh.type === 'chain') {
    if (!def.material) throw new SceneError(`${where}.material: required for a 'chain' mesh`);
    segments = chainSegments(positions, mesh.area, def.material.density, mass);
  }
  if (mesh.type === 'particles') {
    for (const [si, s] of mesh.springs.entries()) {
      for (const end of ['a', 'b'] as const) {
        if (s[end] >= n) throw new SceneError(`${where}.mesh.springs[${si}].${end}: particle ${s[end]} does not exist (${n} particles)`);
      }
    }
    for (const kind of ['hookean', 'squared-length'] as const) {
      const group = mesh.springs.filter((s) => s.kind === kind);
      springs.push({
        kind,
        pairs: Uint32Array.from(group.flatMap((s) => [s.a, s.b])),
        stiffness: Float64Array.from(group, (s) => s.stiffness),
        rest: Float64Array.from(group, (s) =>
          s.restLength ?? Math.hypot(...([0, 1, 2].map((a) => positions[3 * s.a + a] - positions[3 * s.b + a]) as Vec3)),
        ),
      });
    }
  }
  const rest = new Float64Array(positions);
  const x0 = new Float64Array(positions);
  if (def.deform) deform(x0, def.deform);
  const v0 = new Float64Array(3 * n);
  initialVelocity(x0, v0, def.velocity);

  const fixed = new Uint8Array(n);
  def.fixed.forEach((region, ri) => {
    const nodes = selectRegion(region, x0, `${where}.fixed[${ri}]`, shellTriangles);
    for (const i of nodes) fixed[i] = 1;
  });
  const moving = def.moving.map((m, mi) => ({ nodes: selectRegion(m.region, x0, `${where}.moving[${mi}].region`, shellTriangles), velocity: m.velocity as Vec3 }));
  const surface = tets.length > 0 ? extractSurface({ positions: rest, tets }).triangles : (torusTriangles ?? shellTriangles ?? new Uint32Array(0));
  const affine = def.kind === 'affine' ? affineBody(def, where, rest, surface, fixed.some((f) => f === 1)) : undefined;
  return {
    info: { name: def.name ?? `body ${index}`, tets, surface },
    rest,
    x0,
    v0,
    mass,
    springs,
    segments,
    shell,
    fixed,
    moving,
    material: def.material,
    affine,
  };
}

/** An affine body of the body's (transformed) mesh: what it cannot have is reported by field. */
function affineBody(def: BodyDef, where: string, positions: Float64Array, surface: Uint32Array, held: boolean): BuiltBody['affine'] {
  const not = (field: string, why: string) => new SceneError(`${where}.${field}: an affine body ${why}`);
  if (def.mesh.type === 'particles' || def.mesh.type === 'chain' || def.mesh.type === 'shell') throw not('kind', `needs a closed surface; a '${def.mesh.type}' mesh has none`);
  if (!def.material) throw new SceneError(`${where}.material: required for an affine body (density for its mass, youngsModulus for its stiffness)`);
  if (def.moving.length > 0) throw not('moving', 'has no nodes to move (its DOFs are a translation and a matrix)');
  if (def.lockAxes.length > 0) throw not('lockAxes', 'has no nodes whose coordinates could be locked');
  if (def.deform) throw not('deform', 'starts undeformed (its shape is the mesh under an affine map)');
  if (def.velocity.ramp) throw not('velocity.ramp', 'starts with a rigid velocity (linear and angular only)');
  if (def.velocity.drumMode) throw not('velocity.drumMode', 'starts with a rigid velocity (linear and angular only)');
  let layout: AffineBodyLayout;
  try {
    layout = affineBodyLayout(positions, surface, def.material!.density);
  } catch (err) {
    throw not('mesh', `cannot be made of this mesh: ${(err as Error).message}`);
  }
  const v0 = new Float64Array(12);
  const vel = def.velocity;
  if (!held) rigidVelocity(layout.q0, vel.linear, vel.angular ?? [0, 0, 0], vel.center, v0);
  return { ...layout, v0, stiffness: def.material!.youngsModulus, held };
}

/**
 * The segments of a chain whose nodes are `positions` in order: node i to i + 1, rest length their distance, and
 * lumped masses density A L / 2 to each end of every segment (the end nodes get half an interior node's mass).
 */
function chainSegments(positions: Float64Array, area: number, density: number, mass: Float64Array): NonNullable<BuiltBody['segments']> {
  const count = positions.length / 3 - 1;
  const pairs = new Uint32Array(2 * count);
  const rest = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    pairs[2 * k] = k;
    pairs[2 * k + 1] = k + 1;
    rest[k] = Math.hypot(positions[3 * k + 3] - positions[3 * k], positions[3 * k + 4] - positions[3 * k + 1], positions[3 * k + 5] - positions[3 * k + 2]);
    const half = 0.5 * density * area * rest[k];
    mass[k] += half;
    mass[k + 1] += half;
  }
  return { pairs, area: new Float64Array(count).fill(area), rest };
}

function shift(a: Uint32Array, offset: number): Uint32Array {
  if (offset === 0) return a;
  const out = new Uint32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] + offset;
  return out;
}

function bounds(x: Float64Array): { min: Vec3; max: Vec3 } {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (let d = 0; d < x.length; d += 3) {
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a], x[d + a]);
      max[a] = Math.max(max[a], x[d + a]);
    }
  }
  return { min, max };
}

function applyTransform(x: Float64Array, t: BodyDef['transform']): void {
  let s = t.scale;
  if (t.height !== undefined) {
    const b = bounds(x);
    s *= t.height / (b.max[1] - b.min[1]);
  }
  let shiftBy: Vec3 = [0, 0, 0];
  if (t.center) {
    const b = bounds(x);
    shiftBy = [0, 1, 2].map((a) => -0.5 * (b.min[a] + b.max[a])) as Vec3;
  }
  const R = t.rotate ? rotationMatrix(t.rotate.axis as Vec3, (t.rotate.degrees * Math.PI) / 180) : null;
  for (let d = 0; d < x.length; d += 3) {
    let p: Vec3 = [s * (x[d] + shiftBy[0]), s * (x[d + 1] + shiftBy[1]), s * (x[d + 2] + shiftBy[2])];
    if (R) p = mul(R, p);
    x[d] = p[0] + t.translate[0];
    x[d + 1] = p[1] + t.translate[1];
    x[d + 2] = p[2] + t.translate[2];
  }
}

/** Rodrigues' rotation matrix, row-major. */
function rotationMatrix(axis: Vec3, angle: number): number[] {
  const len = Math.hypot(...axis);
  if (!(len > 0)) throw new SceneError('rotation axis must be non-zero');
  const [x, y, z] = axis.map((a) => a / len);
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const C = 1 - c;
  return [c + x * x * C, x * y * C - z * s, x * z * C + y * s, y * x * C + z * s, c + y * y * C, y * z * C - x * s, z * x * C - y * s, z * y * C + x * s, c + z * z * C];
}

function mul(R: number[], p: Vec3): Vec3 {
  return [R[0] * p[0] + R[1] * p[1] + R[2] * p[2], R[3] * p[0] + R[4] * p[1] + R[5] * p[2], R[6] * p[0] + R[7] * p[1] + R[8] * p[2]];
}

/** s in [0, 1] of each node along a direction, over the node set. */
function normalizedCoordinate(x: Float64Array, dir: Vec3): Float64Array {
  const len = Math.hypot(...dir);
  if (!(len > 0)) throw new SceneError('direction must be non-zero');
  const u = dir.map((a) => a / len);
  const n = x.length / 3;
  const s = new Float64Array(n);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    s[i] = u[0] * x[3 * i] + u[1] * x[3 * i + 1] + u[2] * x[3 * i + 2];
    lo = Math.min(lo, s[i]);
    hi = Math.max(hi, s[i]);
  }
  const span = hi - lo || 1;
  for (let i = 0; i < n; i++) s[i] = (s[i] - lo) / span;
  return s;
}

/** Initial pose: twist about the body's axis (through its centroid line) growing with s, then a bend ~ s^2. */
function deform(x: Float64Array, d: NonNullable<BodyDef['deform']>): void {
  const axis = d.axis as Vec3;
  const s = normalizedCoordinate(x, axis);
  const n = s.length;
  const centroid: Vec3 = [0, 0, 0];
  for (let i = 0; i < n; i++) for (let a = 0; a < 3; a++) centroid[a] += x[3 * i + a] / n;
  const twist = (d.twistDegrees * Math.PI) / 180;
  for (let i = 0; i < n; i++) {
    if (twist !== 0) {
      const R = rotationMatrix(axis, twist * s[i]);
      const p = mul(R, [x[3 * i] - centroid[0], x[3 * i + 1] - centroid[1], x[3 * i + 2] - centroid[2]]);
      for (let a = 0; a < 3; a++) x[3 * i + a] = p[a] + centroid[a];
    }
    for (let a = 0; a < 3; a++) x[3 * i + a] += d.bend[a] * s[i] * s[i];
  }
}

function initialVelocity(x: Float64Array, v: Float64Array, vel: BodyDef['velocity']): void {
  const n = x.length / 3;
  const ramp = vel.ramp ? normalizedCoordinate(x, vel.ramp.along as Vec3) : null;
  const drum = vel.drumMode ? { ...vel.drumMode, sine: false } : null;
  const drumZero = drum ? besselZero(drum.m, drum.n) : 0;
  for (let i = 0; i < n; i++) {
    const p: Vec3 = [x[3 * i] - vel.center[0], x[3 * i + 1] - vel.center[1], x[3 * i + 2] - vel.center[2]];
    for (let a = 0; a < 3; a++) v[3 * i + a] = vel.linear[a];
    if (vel.angular) {
      const w = vel.angular;
      v[3 * i] += w[1] * p[2] - w[2] * p[1];
      v[3 * i + 1] += w[2] * p[0] - w[0] * p[2];
      v[3 * i + 2] += w[0] * p[1] - w[1] * p[0];
    }
    if (ramp && vel.ramp) for (let a = 0; a < 3; a++) v[3 * i + a] += vel.ramp.velocity[a] * ramp[i];
    if (drum) v[3 * i + 1] += drum.amplitude * drumModeShape(drum, drum.radius, x[3 * i] - drum.center[0], x[3 * i + 2] - drum.center[2], drumZero);
  }
}

function selectRegion(region: Region, x: Float64Array, where: string, shellTriangles?: Uint32Array): number[] {
  const n = x.length / 3;
  if ('boundary' in region) {
    if (!shellTriangles) throw new SceneError(`${where}.boundary: selects the rim of a shell; this body is not a shell`);
    const rim = boundaryNodes(shellTriangles);
    if (rim.length === 0) throw new SceneError(`${where}.boundary: the shell is closed (no boundary edges)`);
    return rim;
  }
  if ('nodes' in region) {
    for (const i of region.nodes) if (i >= n) throw new SceneError(`${where}.nodes: node ${i} does not exist (the body has ${n} nodes)`);
    return [...region.nodes];
  }
  const { min, max } = region.box;
  const eps = 1e-9;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let inside = true;
    for (let a = 0; a < 3; a++) {
      const c = x[3 * i + a];
      if (c < min[a] - eps || c > max[a] + eps) inside = false;
    }
    if (inside) out.push(i);
  }
  if (out.length === 0) throw new SceneError(`${where}.box: selects no node (box [${min}] to [${max}])`);
  return out;
}

/** Nodes on the boundary edges (edges of exactly one triangle) of a triangle mesh, in increasing order. */
function boundaryNodes(triangles: Uint32Array): number[] {
  const count = new Map<string, number>();
  for (let t = 0; t < triangles.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const a = triangles[t + k], b = triangles[t + ((k + 1) % 3)];
      const key = a < b ? `${a},${b}` : `${b},${a}`;
      count.set(key, (count.get(key) ?? 0) + 1);
    }
  }
  const nodes = new Set<number>();
  for (const [key, c] of count) if (c === 1) for (const v of key.split(',')) nodes.add(Number(v));
  return [...nodes].sort((p, q) => p - q);
}

function constantVelocity(nodes: Uint32Array, velocity: Vec3): ConstraintMotion {
  return {
    nodes,
    positions(t, initial, out) {
      for (const node of nodes) for (let a = 0; a < 3; a++) out[3 * node + a] = initial[3 * node + a] + t * velocity[a];
    },
  };
}
