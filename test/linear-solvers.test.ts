import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../src/sim/node-wasm-features.js';
import { BsrMatrix, PatternBuilder, type BsrPattern } from '../src/math/bsr.js';
import { createDenseKernel, DENSE_KERNEL_KINDS } from '../src/math/dense-kernel.js';
import { analyzeLdlt, factorBytes, LdltSolver } from '../src/math/ldlt.js';
import { AutoLinearSolver, createLinearSolver, type LinearSolver } from '../src/math/linear-solver.js';
import {
  approximateMinimumDegree,
  columnCounts,
  eliminationTree,
  graphFromPattern,
  inversePermutation,
  type NodeGraph,
  nestedDissection,
  postorder,
  rateOrdering,
} from '../src/math/ordering.js';
import { PcgSolver } from '../src/math/pcg.js';
import { gridPattern, relativeError } from './numeric-helpers.js';

// ---------------------------------------------------------------------------------------------------------------
// helpers

/** Deterministic generator in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** Random symmetric pattern: a path (so it is connected) plus random extra edges and small cliques. */
function randomPattern(n: number, extraEdges: number, rand: () => number): BsrPattern {
  const b = new PatternBuilder(n);
  for (let i = 0; i + 1 < n; i++) if (rand() < 0.7) b.addClique([i, i + 1]);
  for (let e = 0; e < extraEdges; e++) {
    const i = Math.floor(rand() * n);
    const j = Math.floor(rand() * n);
    if (i !== j) b.addClique([i, j]);
  }
  for (let c = 0; c < n / 8; c++) {
    const nodes = [0, 1, 2, 3].map(() => Math.floor(rand() * n));
    if (new Set(nodes).size === 4) b.addClique(nodes);
  }
  return b.build();
}

/** Random symmetric values on a pattern, made diagonally dominant (hence SPD). */
function randomSpd(pattern: BsrPattern, rand: () => number): BsrMatrix {
  const A = new BsrMatrix(pattern);
  const { n, rowStart, col } = pattern;
  for (let i = 0; i < n; i++) {
    for (let s = rowStart[i]; s < rowStart[i + 1]; s++) {
      const j = col[s];
      if (j < i) continue;
      const t = pattern.slot(j, i);
      for (let a = 0; a < 3; a++)
        for (let c = 0; c < 3; c++) {
          if (i === j && c < a) continue;
          const val = 2 * rand() - 1;
          A.values[9 * s + 3 * a + c] = val;
          A.values[9 * t + 3 * c + a] = val; // block (j, i) = block (i, j)^T
        }
    }
  }
  // diagonal dominance: d_ii = 1 + sum of |row|
  const dense = A.toDense();
  for (let i = 0; i < n; i++) {
    const o = 9 * pattern.diagSlot[i];
    for (let a = 0; a < 3; a++) {
      let sum = 0;
      for (let c = 0; c < 3 * n; c++) if (c !== 3 * i + a) sum += Math.abs(dense[3 * i + a][c]);
      A.values[o + 4 * a] = 1 + sum + rand();
    }
  }
  return A;
}

/** 3D grid Laplacian (7-point, plus a mass term) tensor I3, on nx*ny*nz nodes. */
function gridLaplacian(nx: number, ny: number, nz: number, mass = 0.1): BsrMatrix {
  const pattern = gridPattern(nx, ny, nz);
  const A = new BsrMatrix(pattern);
  const { rowStart, col } = pattern;
  for (let i = 0; i < pattern.n; i++) {
    for (let s = rowStart[i]; s < rowStart[i + 1]; s++) {
      const j = col[s];
      const value = i === j ? rowStart[i + 1] - rowStart[i] - 1 + mass : -1;
      for (let a = 0; a < 3; a++) A.values[9 * s + 4 * a] = value;
    }
  }
  return A;
}

/** Dense Cholesky solve, the independent reference. */
function denseSolve(M: Float64Array[], b: Float64Array): Float64Array {
  const n = M.length;
  const L = M.map((row) => row.slice());
  for (let j = 0; j < n; j++) {
    let d = L[j][j];
    for (let q = 0; q < j; q++) d -= L[j][q] * L[j][q];
    if (!(d > 0)) throw new Error('dense reference: not SPD');
    const ljj = Math.sqrt(d);
    L[j][j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = L[i][j];
      for (let q = 0; q < j; q++) s -= L[i][q] * L[j][q];
      L[i][j] = s / ljj;
    }
  }
  const y = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    for (let q = 0; q < i; q++) y[i] -= L[i][q] * y[q];
    y[i] /= L[i][i];
  }
  for (let i = n - 1; i >= 0; i--) {
    for (let q = i + 1; q < n; q++) y[i] -= L[q][i] * y[q];
    y[i] /= L[i][i];
  }
  return y;
}

function randomVector(n: number, rand: () => number): Float64Array {
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = 2 * rand() - 1;
  return v;
}


/** Solves A x = b for a random b with the solver and checks x against a dense solve to 1e-10 (relative). */
function assertSolvesLikeDense(solver: LinearSolver, A: BsrMatrix, rand: () => number, label = ''): void {
  const b = randomVector(A.size, rand);
  const x = new Float64Array(A.size);
  solver.solve(A, b, x);
  assert.ok(relativeError(x, denseSolve(A.toDense(), b)) < 1e-10, `${label}wrong solution`);
}

function isPermutation(p: Int32Array, n: number): boolean {
  if (p.length !== n) return false;
  const seen = new Uint8Array(n);
  for (const v of p) {
    if (v < 0 || v >= n || seen[v]) return false;
    seen[v] = 1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// dense kernel

/**
 * True when every block of `inner` is in `outer` (same node count; rows' columns sorted): these tests' check that a
 * pattern grew. (The solver no longer asks: it keeps its permutation for grown and pruned patterns alike.)
 */
function containsPattern(outer: BsrPattern, inner: BsrPattern): boolean {
  if (outer.n !== inner.n) return false;
  for (let i = 0; i < inner.n; i++) {
    let q = outer.rowStart[i];
    const qEnd = outer.rowStart[i + 1];
    for (let p = inner.rowStart[i]; p < inner.rowStart[i + 1]; p++) {
      const c = inner.col[p];
      while (q < qEnd && outer.col[q] < c) q++;
      if (q === qEnd || outer.col[q] !== c) return false;
      q++;
    }
  }
  return true;
}

test('dense kernels (WebAssembly SIMD with and without fused multiply-adds, JS fallback) match naive loops', () => {
  const rand = rng(3);
  for (const kind of DENSE_KERNEL_KINDS) {
    const k = createDenseKernel(kind);
    assert.ok(k, `this engine runs the ${kind} kernel (Node's host sets the flag relaxed SIMD needs on Node 20)`);
    const check = (what: string, total: number, run: () => void, reference: (ref: Float64Array) => void): void => {
      const D = k.data;
      for (let i = 0; i < total; i++) D[i] = 2 * rand() - 1;
      const ref = D.slice(0, total);
      reference(ref);
      run();
      let err = 0;
      for (let i = 0; i < total; i++) err = Math.max(err, Math.abs(k.data[i] - ref[i]));
      assert.ok(err < 1e-12, `${k.kind} ${what}: max error ${err}`);
    };
    // C -= A B^T with separate strides, odd sizes and tails
    for (const [p, nr, nc] of [[0, 3, 2], [1, 5, 3], [7, 9, 1], [16, 4, 2], [33, 13, 7], [64, 8, 8]]) {
      const sab = p + 5;
      const sc = nc + 3;
      const a = 11;
      const b = a + nr * sab + 2;
      const c = b + nc * sab + 1;
      const total = c + nr * sc + 8;
      k.allocate(0, total);
      check(`update p=${p} nr=${nr} nc=${nc}`, total, () => k.update(a, b, c, sab, sc, p, nr, nc), (ref) => {
        for (let i = 0; i < nr; i++)
          for (let j = 0; j < nc; j++) {
            let s = 0;
            for (let q = 0; q < p; q++) s += ref[a + i * sab + q] * ref[b + j * sab + q];
            ref[c + i * sc + j] -= s;
          }
      });
    }
    // the float32 copy of a factor: rounded entries, an odd count, the doubles untouched
    k.allocate(0, 64);
    k.floats.fill(0, 80, 128);
    check('toFloats', 40, () => k.toFloats(3, 31, 2 * 40 + 1), () => {});
    for (let i = 0; i < 31; i++) assert.equal(k.floats[81 + i], Math.fround(k.data[3 + i]), `${k.kind} toFloats ${i}`);
    assert.equal(k.floats[81 + 31], 0, `${k.kind} toFloats wrote past its count`);
    // the solves' kernels read the factor as float64, or as a float32 copy (at F, beyond the doubles checked)
    for (const single of [false, true]) {
      const kind = single ? ' (float32 factor)' : '';
      const round = single ? Math.fround : (v: number): number => v;
      /** Index of a factor entry for the kernel: copies the block [from, from + size) to the floats when single. */
      const factorAt = (from: number, size: number, F: number): number => {
        if (!single) return from;
        for (let t = 0; t < size; t++) k.floats[F + t] = k.data[from + t];
        return F;
      };
      // mat-vecs: y[idx[i]] -= A_i . x (scatter) and out -= A^T y[idx] (gather), odd sizes and tails
      for (const [nr, nc] of [[1, 1], [2, 5], [7, 6], [9, 13], [4, 1], [8, 3], [13, 2]]) {
        const sa = nc + 2;
        const a = 3;
        const x = a + nr * sa + 1;
        const y = x + nc + 1;
        const total = y + 3 * nr + 4;
        const F = 2 * total;
        const idx = Array.from({ length: nr }, (_, i) => (5 * i + 2) % (3 * nr)); // distinct, unordered
        k.allocate(nr + 1, total + nr * sa);
        k.ints.set(idx, 1);
        check(`gemvScatter ${nr}x${nc}${kind}`, total, () => k.gemvScatter(factorAt(a, nr * sa, F), sa, x, nr, nc, y, 1, single), (ref) => {
          for (let i = 0; i < nr; i++) for (let q = 0; q < nc; q++) ref[y + idx[i]] -= round(ref[a + i * sa + q]) * ref[x + q];
        });
        check(`gatherGemvTransposed ${nr}x${nc}${kind}`, total, () => k.gatherGemvTransposed(factorAt(a, nr * sa, F), sa, y, 1, nr, nc, x, single), (ref) => {
          for (let i = 0; i < nr; i++) for (let q = 0; q < nc; q++) ref[x + q] -= round(ref[a + i * sa + q]) * ref[y + idx[i]];
        });
      }
      // triangular solves with a row-major lower triangle (the upper side holds junk that must not be read)
      for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 13, 16]) {
        const l = 2;
        const y = l + n * n + 1;
        const total = y + n + 2;
        const F = 2 * total;
        k.allocate(0, total + n * n);
        const triangle = (): number => {
          for (let i = 0; i < n; i++) k.data[l + i * n + i] = 2 + i; // a safe diagonal
          return factorAt(l, n * n, F);
        };
        const L = (ref: Float64Array, i: number, j: number): number => (i === j ? 2 + i : round(ref[l + i * n + j]));
        check(`triangularSolve ${n}${kind}`, total, () => k.triangularSolve(triangle(), n, y, single), (ref) => {
          for (let i = 0; i < n; i++) ref[l + i * n + i] = 2 + i;
          for (let j = 0; j < n; j++) {
            for (let q = 0; q < j; q++) ref[y + j] -= L(ref, j, q) * ref[y + q];
            ref[y + j] /= L(ref, j, j);
          }
        });
        check(`triangularSolveTransposed ${n}${kind}`, total, () => k.triangularSolveTransposed(triangle(), n, y, single), (ref) => {
          for (let i = 0; i < n; i++) ref[l + i * n + i] = 2 + i;
          for (let j = n - 1; j >= 0; j--) {
            for (let q = j + 1; q < n; q++) ref[y + j] -= L(ref, q, j) * ref[y + q];
            ref[y + j] /= L(ref, j, j);
          }
        });
      }
    }
    // column scaling and the finishing pass of a column pair, with a stride
    k.allocate(0, 200);
    check('scaleStrided', 200, () => k.scaleStrided(3, 7, 20, 0.37), (ref) => {
      for (let i = 0; i < 20; i++) ref[3 + 7 * i] *= 0.37;
    });
    check('finishColumnPair', 200, () => k.finishColumnPair(5, 9, 17, 0.5, -0.3, 1.7), (ref) => {
      for (let i = 0; i < 17; i++) {
        const o = 5 + 9 * i;
        ref[o] *= 0.5;
        ref[o + 1] = (ref[o + 1] - ref[o] * -0.3) * 1.7;
      }
    });
    // extend-add: rows of a child update land in the parent's panel (columns < kp) or its update matrix, by node
    // triples (three consecutive DOFs)
    const kp = 6;
    const m = 21;
    const rp = m - kp;
    const rel = [3, 4, 5, 9, 10, 11, 12, 13, 14, 18, 19, 20]; // increasing local rows of the parent front
    const rc = rel.length;
    k.allocate(rel.length + 2, 0);
    k.ints.set(rel, 2);
    const src = 5;
    const panel = src + rc * rc + 3;
    const upd = panel + m * kp + 2;
    const total = upd + rp * rp + 5;
    k.allocate(rel.length + 2, total);
    k.ints.set(rel, 2);
    check('extendAdd', total, () => k.extendAdd(src, rc, 2, panel, upd, kp, rp), (ref) => {
      for (let a = 0; a < rc; a++)
        for (let b = 0; b <= a; b++) {
          const ra = rel[a];
          const cb = rel[b];
          const dst = cb < kp ? panel + ra * kp + cb : upd + (ra - kp) * rp + (cb - kp);
          ref[dst] += ref[src + a * rc + b];
        }
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------
// orderings and symbolic analysis

test('orderings are permutations; column counts match a dense symbolic factorization', () => {
  const rand = rng(11);
  const pattern = randomPattern(60, 70, rand);
  const g = graphFromPattern(pattern);
  for (const perm of [approximateMinimumDegree(g), nestedDissection(g, { leafSize: 8 })]) {
    assert.ok(isPermutation(perm, g.n));
    const iperm = inversePermutation(perm);
    const parent = eliminationTree(g, perm, iperm);
    const counts = columnCounts(g, perm, iperm, parent);
    // dense boolean elimination on the permuted node graph
    const n = g.n;
    const S = Array.from({ length: n }, () => new Uint8Array(n));
    for (let v = 0; v < n; v++) {
      S[iperm[v]][iperm[v]] = 1;
      for (let t = g.xadj[v]; t < g.xadj[v + 1]; t++) S[iperm[v]][iperm[g.adj[t]]] = 1;
    }
    for (let j = 0; j < n; j++) {
      const rows: number[] = [];
      for (let i = j + 1; i < n; i++) if (S[i][j]) rows.push(i);
      for (const a of rows) for (const b of rows) S[a][b] = 1;
      assert.equal(counts[j], rows.length + 1, `column ${j}`);
      // etree parent = first off-diagonal row
      assert.equal(parent[j], rows.length > 0 ? rows[0] : -1);
    }
    const post = postorder(parent, counts);
    assert.ok(isPermutation(post, n));
    const pos = inversePermutation(post);
    for (let j = 0; j < n; j++) if (parent[j] >= 0) assert.ok(pos[j] < pos[parent[j]], 'children before parents');
  }
});

/** Pattern of a grid of nx^3 nodes, each cube split into 6 tets (the benchmark meshes' structure). */
function tetGridPattern(nx: number): BsrPattern {
  const id = (i: number, j: number, k: number): number => i + nx * (j + nx * k);
  const builder = new PatternBuilder(nx ** 3);
  for (let k = 0; k + 1 < nx; k++)
    for (let j = 0; j + 1 < nx; j++)
      for (let i = 0; i + 1 < nx; i++)
        for (const order of [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]) {
          const c = [i, j, k];
          const tet = [id(i, j, k)];
          for (const axis of order) {
            c[axis]++;
            tet.push(id(c[0], c[1], c[2]));
          }
          builder.addClique(tet);
        }
  return builder.build();
}

test('on a 3D tet mesh nested dissection beats AMD, and AMD beats the natural order', () => {
  const g = graphFromPattern(tetGridPattern(12));
  const natural = Int32Array.from({ length: g.n }, (_, i) => i);
  const nat = rateOrdering(g, natural);
  const amd = rateOrdering(g, approximateMinimumDegree(g));
  const nd = rateOrdering(g, nestedDissection(g));
  assert.ok(amd.flops < nat.flops, `amd ${amd.flops} natural ${nat.flops}`);
  assert.ok(nd.flops < amd.flops, `nd ${nd.flops} amd ${amd.flops}`);
  assert.ok(nd.nnzL < nat.nnzL);
});

test('nested dissection handles disconnected graphs', () => {
  const b = new PatternBuilder(300);
  for (let i = 0; i + 1 < 150; i++) b.addClique([i, i + 1]);
  for (let i = 150; i + 2 < 300; i++) b.addClique([i, i + 2]); // two more components (even and odd)
  const g = graphFromPattern(b.build());
  assert.ok(isPermutation(nestedDissection(g, { leafSize: 10 }), 300));
  assert.ok(isPermutation(approximateMinimumDegree(g), 300));
});

/** Exact minimum degree by dense elimination (smallest true degree first, ties to the lowest node): the reference. */
function exactMinimumDegree(g: NodeGraph): Int32Array {
  const n = g.n;
  const adj = Array.from({ length: n }, (_, v) => new Set(g.adj.subarray(g.xadj[v], g.xadj[v + 1])));
  const done = new Uint8Array(n);
  const perm = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    let p = -1;
    for (let v = 0; v < n; v++) if (!done[v] && (p < 0 || adj[v].size < adj[p].size)) p = v;
    perm[k] = p;
    done[p] = 1;
    const neighbours = [...adj[p]];
    for (const a of neighbours) {
      adj[a].delete(p);
      for (const b of neighbours) if (a !== b) adj[a].add(b);
    }
  }
  return perm;
}

test('AMD: no fill on a tree, and within 2% of exact minimum degree on meshes', () => {
  const rand = rng(31);
  const tree = new PatternBuilder(200);
  for (let i = 1; i < 200; i++) tree.addClique([i, Math.floor(rand() * i)]);
  const treeGraph = graphFromPattern(tree.build());
  const treeFill = rateOrdering(treeGraph, approximateMinimumDegree(treeGraph));
  assert.equal(treeFill.nnzL, 9 * (200 + 199) - 3 * 200, 'L of a tree has the pattern of A'); // 3x3 blocks, lower half of the diagonal ones
  const grid2d = new PatternBuilder(15 * 15);
  for (let j = 0; j < 15; j++)
    for (let i = 0; i < 15; i++) {
      if (i + 1 < 15) grid2d.addClique([i + 15 * j, i + 1 + 15 * j]);
      if (j + 1 < 15) grid2d.addClique([i + 15 * j, i + 15 * (j + 1)]);
    }
  for (const [name, g] of [['2D grid', graphFromPattern(grid2d.build())], ['tet grid', graphFromPattern(tetGridPattern(6))]] as const) {
    const amd = approximateMinimumDegree(g);
    assert.ok(isPermutation(amd, g.n));
    const ours = rateOrdering(g, amd);
    const exact = rateOrdering(g, exactMinimumDegree(g));
    assert.ok(ours.nnzL <= 1.02 * exact.nnzL, `${name}: AMD nnz(L) ${ours.nnzL}, exact minimum degree ${exact.nnzL}`);
  }
});

test('supernodes: a node is never split, row structures match the column counts', () => {
  const A = gridLaplacian(9, 8, 7);
  const sym = analyzeLdlt(A.pattern);
  assert.equal(sym.superStart[sym.supernodes], A.pattern.n);
  for (let s = 0; s < sym.supernodes; s++) {
    const k = 3 * (sym.superStart[s + 1] - sym.superStart[s]);
    assert.ok(k >= 3);
    const m = sym.frontRowStart[s + 1] - sym.frontRowStart[s];
    assert.equal((m - k) % 3, 0);
  }
  assert.ok(sym.storedL >= sym.nnzL);
});

// ---------------------------------------------------------------------------------------------------------------
// LDLT against dense Cholesky

test('ldlt matches dense Cholesky on random SPD BSR matrices (every ordering, both kernels)', () => {
  const rand = rng(5);
  for (const n of [1, 2, 7, 40, 130]) {
    const pattern = randomPattern(n, 2 * n, rand);
    const A = randomSpd(pattern, rand);
    const b = randomVector(3 * n, rand);
    const ref = denseSolve(A.toDense(), b);
    for (const ordering of ['auto', 'amd', 'nd', 'natural'] as const) {
      for (const forceJsKernel of [false, true]) {
        const solver = new LdltSolver({ ordering, forceJsKernel });
        const x = new Float64Array(3 * n);
        const stats = solver.solve(A, b, x);
        const err = relativeError(x, ref);
        assert.ok(err < 1e-10, `n=${n} ${ordering} js=${forceJsKernel}: error ${err}`);
        assert.ok(stats.residual < 1e-12, `residual ${stats.residual}`);
      }
    }
  }
});

test('ldlt on a grid Laplacian (x) I3 with Dirichlet rows matches dense Cholesky and keeps fixed DOFs', () => {
  const rand = rng(9);
  const A = gridLaplacian(6, 5, 4, 0.05);
  const size = A.size;
  const mask = new Uint8Array(size);
  for (let node = 0; node < A.pattern.n; node++) if (node % 6 === 0) mask.fill(1, 3 * node, 3 * node + 3);
  mask[3 * 7 + 1] = 1; // a single fixed component too
  A.applyDirichlet(mask);
  const b = randomVector(size, rand);
  const ref = denseSolve(A.toDense(), b);
  const x = new Float64Array(size);
  createLinearSolver('ldlt').solve(A, b, x);
  assert.ok(relativeError(x, ref) < 1e-12);
  for (let d = 0; d < size; d++) if (mask[d]) assert.ok(Math.abs(x[d] - b[d]) < 1e-12, `fixed DOF ${d}`);
});

test('applyDirichlet: constrained rows and columns become the identity, every other entry is kept', () => {
  for (const fixed of [[] as number[], [0, 1, 2, 22], [3 * 17 + 2]]) {
    const A = gridLaplacian(4, 3, 3, 0.05);
    const before = A.toDense();
    const mask = new Uint8Array(A.size);
    for (const d of fixed) mask[d] = 1;
    A.applyDirichlet(mask);
    const after = A.toDense();
    for (let r = 0; r < A.size; r++) {
      for (let c = 0; c < A.size; c++) {
        const expected = mask[r] || mask[c] ? (r === c ? 1 : 0) : before[r][c];
        assert.equal(after[r][c], expected, `entry (${r}, ${c}) with DOFs ${fixed.join(', ') || 'none'} fixed`);
      }
    }
  }
});

test('ldlt reuses the symbolic analysis while the pattern stays, and re-analyzes a new pattern', () => {
  const rand = rng(21);
  const pattern = randomPattern(50, 90, rand);
  const solver = new LdltSolver();
  for (let round = 0; round < 3; round++) {
    assertSolvesLikeDense(solver, randomSpd(pattern, rand), rand); // new values, same pattern object
  }
  assert.equal(solver.timing.analyses, 1);
  assert.equal(solver.timing.factorizations, 3);
  const other = randomSpd(randomPattern(30, 40, rand), rand);
  const b = randomVector(other.size, rand);
  const x = new Float64Array(other.size);
  solver.solve(other, b, x);
  assert.equal(solver.timing.analyses, 2);
  assert.ok(relativeError(x, denseSolve(other.toDense(), b)) < 1e-10);
  // factor once, solve several right-hand sides
  solver.factor(other);
  const b2 = randomVector(other.size, rand);
  solver.solveFactored(b2, x);
  assert.ok(relativeError(x, denseSolve(other.toDense(), b2)) < 1e-10);
});

test('ldlt: a new pattern of the same system reuses the permutation, or the winning method once the fill outgrew it; both methods are compared every 16th analysis', () => {
  const rand = rng(22);
  const solver = new LdltSolver();
  const tried: number[] = [];
  let first = '';
  for (let k = 0; k < 18; k++) {
    assertSolvesLikeDense(solver, randomSpd(randomPattern(40, 70 + k, rand), rand), rand, `analysis ${k}: `); // same node count, new pattern each time
    const sym = solver.analysis!;
    tried.push(Object.keys(sym.orderingEstimates).length);
    if (k === 0) first = sym.ordering;
    else if (k < 16) assert.equal(sym.ordering, first);
  }
  assert.equal(tried[0], 2);
  assert.equal(tried[16], 2);
  const between = [...tried.slice(1, 16), tried[17]];
  assert.ok(between.every((t) => t <= 1), `${tried}`);
  // Unrelated random patterns: the kept permutation soon fills more than the slack allows, and the next orders afresh.
  assert.ok(between.includes(0) && between.includes(1), `${tried}`);
  // a system of another size is compared afresh
  const other = randomSpd(randomPattern(25, 40, rand), rand);
  solver.solve(other, randomVector(other.size, rand), new Float64Array(other.size));
  assert.equal(Object.keys(solver.analysis!.orderingEstimates).length, 2);
});

test('ldlt: a changed pattern keeps the previous permutation (no ordering) until the fill grows past the slack', () => {
  const rand = rng(23);
  const solver = new LdltSolver();
  const n = 60;
  // A chain plus random cliques; each next pattern adds a few couplings (contacts), keeping every earlier block.
  const edges: Array<[number, number]> = [];
  for (let i = 0; i + 1 < n; i++) edges.push([i, i + 1]);
  const build = () => {
    const b = new PatternBuilder(n);
    for (const [i, j] of edges) b.addClique([i, j]);
    return b.build();
  };
  const orderingsTried: number[] = [];
  let previous: BsrPattern | null = null;
  for (let k = 0; k < 12; k++) {
    const pattern = build();
    if (previous) assert.ok(containsPattern(pattern, previous), 'test setup: the pattern grew');
    assertSolvesLikeDense(solver, randomSpd(pattern, rand), rand, `analysis ${k}: `);
    const sym = solver.analysis!;
    orderingsTried.push(Object.keys(sym.orderingEstimates).length);
    if (orderingsTried[k] === 0) assert.ok(isPermutation(sym.perm, n), 'a reused permutation is a permutation');
    previous = pattern;
    for (let e = 0; e < 2 + k; e++) edges.push([Math.floor(rand() * n), Math.floor(rand() * n)].sort((a, b) => a - b) as [number, number]);
    for (let e = edges.length - 1; e >= 0; e--) if (edges[e][0] === edges[e][1]) edges.splice(e, 1);
  }
  assert.equal(orderingsTried[0], 2, 'the first analysis compares both methods');
  assert.ok(orderingsTried.slice(1).some((t) => t === 0), `no permutation was reused: ${orderingsTried}`);
  assert.ok(orderingsTried.slice(1).some((t) => t === 1), `random couplings grow the fill past the slack, forcing a fresh ordering: ${orderingsTried}`);
  // Patterns that lost blocks (contacts that parted) keep the permutation too: the chain alone (ordered afresh
  // if the last grown pattern had outgrown the slack), then the chain with one coupling, on the same permutation.
  for (const extra of [[], [[3, 40]]]) {
    const smaller = new PatternBuilder(n);
    for (let i = 0; i + 1 < n; i++) smaller.addClique([i, i + 1]);
    for (const clique of extra) smaller.addClique(clique);
    assertSolvesLikeDense(solver, randomSpd(smaller.build(), rand), rand, `smaller pattern (${extra.length} extra): `);
  }
  assert.equal(Object.keys(solver.analysis!.orderingEstimates).length, 0);
});

test('PatternBuilder: grown from a base pattern, the result equals a fresh build of all the cliques', () => {
  const rand = rng(31);
  const n = 50;
  const cliques: number[][] = [];
  for (let c = 0; c < 40; c++) cliques.push([0, 1, 2, 3].map(() => Math.floor(rand() * n)).filter((v, i, a) => a.indexOf(v) === i));
  const early = new PatternBuilder(n);
  for (const c of cliques.slice(0, 25)) early.addClique(c);
  const base = early.build();
  const grown = new PatternBuilder(n, base);
  for (const c of cliques.slice(25)) grown.addClique(c);
  grown.addClique(cliques[3]); // a clique the base has already
  const fresh = new PatternBuilder(n);
  for (const c of cliques) fresh.addClique(c);
  const a = grown.build();
  const b = fresh.build();
  assert.deepEqual(Array.from(a.rowStart), Array.from(b.rowStart));
  assert.deepEqual(Array.from(a.col), Array.from(b.col));
  assert.deepEqual(Array.from(a.diagSlot), Array.from(b.diagSlot));
  assert.ok(containsPattern(a, base));
  assert.throws(() => new PatternBuilder(n + 1, base), /base pattern has 50 nodes, not 51/);
});

test('containsPattern: every block of the inner pattern in the outer one', () => {
  const a = new PatternBuilder(4);
  a.addClique([0, 1]);
  const b = new PatternBuilder(4);
  b.addClique([0, 1]);
  b.addClique([2, 3]);
  assert.ok(containsPattern(b.build(), a.build()));
  assert.ok(!containsPattern(a.build(), b.build()));
  assert.ok(containsPattern(a.build(), a.build()));
  assert.ok(!containsPattern(new PatternBuilder(5).build(), new PatternBuilder(4).build()), 'another node count');
});

test('ldlt compactCopy: the float32 copy solves to float32 accuracy (a preconditioner), the float64 factor stays exact', () => {
  const rand = rng(43);
  const A = gridLaplacian(7, 6, 5, 0.05);
  const b = randomVector(A.size, rand);
  const ref = denseSolve(A.toDense(), b);
  const solver = new LdltSolver({ compactCopy: true });
  solver.factor(A);
  const x = new Float64Array(A.size);
  solver.solveFactored(b, x);
  assert.ok(relativeError(x, ref) < 1e-12, `float64 solve: ${relativeError(x, ref)}`);
  solver.solveFactored(b, x, true);
  const err = relativeError(x, ref);
  assert.ok(err < 1e-5 && err > 1e-12, `float32 copy: error ${err} (rounded entries, so not exact)`);
  // the copy follows each new factorization
  const B = new BsrMatrix(A.pattern);
  for (let i = 0; i < A.values.length; i++) B.values[i] = 2 * A.values[i];
  solver.factor(B);
  solver.solveFactored(b, x, true);
  for (let i = 0; i < ref.length; i++) ref[i] *= 0.5;
  assert.ok(relativeError(x, ref) < 1e-5);
  // the copy is made by the first solve that reads it: a factor only used exactly (or not at all) leaves none behind
  solver.factor(A);
  solver.solveFactored(b, x);
  solver.solveFactored(b, x, true);
  for (let i = 0; i < ref.length; i++) ref[i] *= 2;
  assert.ok(relativeError(x, ref) < 1e-5, `the copy of the latest factor: ${relativeError(x, ref)}`);
  assert.throws(() => new LdltSolver().solveFactored(b, x, true), /before factor|compactCopy/);
});

test('ldlt: analyzing another pattern leaves the current factor in place; factoring replaces it', () => {
  const rand = rng(44);
  const A = gridLaplacian(5, 4, 4, 0.05);
  const solver = new LdltSolver();
  solver.factor(A);
  const b = randomVector(A.size, rand);
  const other = randomSpd(randomPattern(A.pattern.n, 150, rand), rand);
  solver.plan(other.pattern);
  assert.equal(solver.analysis!.patternId, other.pattern.id);
  assert.equal(solver.factorAnalysis!.patternId, A.pattern.id);
  const x = new Float64Array(A.size);
  solver.solveFactored(b, x);
  assert.ok(relativeError(x, denseSolve(A.toDense(), b)) < 1e-12, 'still the factor of A');
  solver.factor(other);
  solver.solveFactored(b, x);
  assert.ok(relativeError(x, denseSolve(other.toDense(), b)) < 1e-10, 'now the factor of the other matrix');
});

test('ldlt throws a clear error on a matrix that is not positive definite', () => {
  const A = gridLaplacian(4, 3, 3);
  const node = 17;
  A.values[9 * A.pattern.diagSlot[node] + 4] = -5; // DOF 3*17+1
  const x = new Float64Array(A.size);
  const b = new Float64Array(A.size).fill(1);
  assert.throws(() => new LdltSolver().solve(A, b, x), /not positive definite.*DOF 52/);
});

test('zero right-hand side gives x = 0 at once (both solvers)', () => {
  const A = gridLaplacian(3, 3, 3);
  for (const name of ['pcg', 'ldlt'] as const) {
    const solver = createLinearSolver(name);
    const x = new Float64Array(A.size).fill(3);
    const stats = solver.solve(A, new Float64Array(A.size), x);
    assert.equal(stats.iterations, 0);
    assert.ok(x.every((v) => v === 0));
  }
});

// ---------------------------------------------------------------------------------------------------------------
// PCG

test('auto: the lagged Cholesky while a factorization stays within the flop and memory limits, PCG beyond', () => {
  const rand = rng(41);
  const A = gridLaplacian(6, 5, 4, 0.05);
  const sym = analyzeLdlt(A.pattern);
  const within = new AutoLinearSolver({}, { maxFactorFlops: sym.flops, maxFactorBytes: factorBytes(sym, true) });
  assertSolvesLikeDense(within, A, rand);
  assert.equal(within.name, 'ldlt-lagged');
  assert.equal(within.timing.factorizations, 1);
  for (const limits of [{ maxFactorFlops: sym.flops - 1, maxFactorBytes: Infinity }, { maxFactorFlops: Infinity, maxFactorBytes: factorBytes(sym, true) - 1 }]) {
    const beyond = new AutoLinearSolver({ tolerance: 1e-12 }, limits);
    assertSolvesLikeDense(beyond, A, rand);
    assert.equal(beyond.name, 'pcg', JSON.stringify(limits));
  }
  // a pattern that grew past the limits (contacts) switches to PCG for good
  const grown = new PatternBuilder(A.pattern.n, A.pattern);
  for (let i = 0; i + 40 < A.pattern.n; i += 7) grown.addClique([i, i + 40]);
  const B = randomSpd(grown.build(), rand);
  const switching = new AutoLinearSolver({ tolerance: 1e-12 }, { maxFactorFlops: sym.flops, maxFactorBytes: Infinity });
  assertSolvesLikeDense(switching, A, rand);
  assert.equal(switching.name, 'ldlt-lagged');
  assertSolvesLikeDense(switching, B, rand);
  assert.equal(switching.name, 'pcg');
  assertSolvesLikeDense(switching, A, rand);
  assert.equal(switching.name, 'pcg');
  // the default limits: the bench's 10^3-cell cube factors, a 30^3-cell box (86k unknowns, ~150 GFlop) does not
  assert.equal(new AutoLinearSolver().choose(tetGridPattern(11)), 'ldlt-lagged');
  assert.equal(new AutoLinearSolver().choose(tetGridPattern(31)), 'pcg');
});

test('pcg (Jacobi and block Jacobi) agrees with ldlt on a Dirichlet grid Laplacian', () => {
  const rand = rng(4);
  const A = gridLaplacian(12, 10, 9, 0.2);
  const mask = new Uint8Array(A.size);
  for (let node = 0; node < 12 * 10; node++) mask.fill(1, 3 * node, 3 * node + 3); // the face k = 0
  A.applyDirichlet(mask);
  const b = randomVector(A.size, rand);
  const direct = new Float64Array(A.size);
  createLinearSolver('ldlt').solve(A, b, direct);
  for (const preconditioner of ['jacobi', 'block-jacobi'] as const) {
    const x = new Float64Array(A.size);
    const stats = createLinearSolver('pcg', { tolerance: 1e-10, preconditioner }).solve(A, b, x);
    assert.ok(stats.residual <= 1e-10, `${preconditioner}: residual ${stats.residual}`);
    assert.ok(stats.iterations > 1);
    assert.ok(relativeError(x, direct) < 1e-7, `${preconditioner}: differs from ldlt by ${relativeError(x, direct)}`);
  }
});

test('pcg: loose tolerance stops early; the initial guess is used; exact preconditioners converge at once', () => {
  const rand = rng(8);
  const A = gridLaplacian(8, 8, 8, 0.1);
  const b = randomVector(A.size, rand);
  const loose = new PcgSolver({ tolerance: 1e-2 });
  const tight = new PcgSolver({ tolerance: 1e-9 });
  const x1 = new Float64Array(A.size);
  const s1 = loose.solve(A, b, x1);
  const x2 = new Float64Array(A.size);
  const s2 = tight.solve(A, b, x2);
  assert.ok(s1.residual <= 1e-2 && s2.residual <= 1e-9);
  assert.ok(s1.iterations < s2.iterations);
  // the converged solution as initial guess: no iteration needed
  const s3 = tight.solve(A, b, x2);
  assert.equal(s3.iterations, 0);
  // block-diagonal matrix: block Jacobi is exact, one iteration
  const pattern = new PatternBuilder(5).build();
  const D = randomSpd(pattern, rand);
  const xb = new Float64Array(15);
  const sb = new PcgSolver({ preconditioner: 'block-jacobi', tolerance: 1e-12 }).solve(D, randomVector(15, rand), xb);
  assert.equal(sb.iterations, 1);
  // the default cap stops a hopeless tolerance and still reports the residual
  const capped = new PcgSolver({ tolerance: 1e-30, maxIterations: 5 }).solve(A, b, new Float64Array(A.size));
  assert.equal(capped.iterations, 5);
  assert.ok(capped.residual > 0 && capped.residual < 1);
});
