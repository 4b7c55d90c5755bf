/**
 * The 3D view: one WebGL canvas, one orbit camera, and one viewport per run side by side (each run alone in its
 * viewport) or a single viewport with every run overlaid. Bodies are surfaces coloured per body (or per run when
 * overlaid), particles are spheres, springs lines, planes translucent squares with a grid.
 */

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import type { BodyGroups } from './body-groups.js';
import { bodyColour, OBSTACLE_COLOUR } from './palette.js';

export interface PlaneObstacle {
  name: string;
  point: [number, number, number];
  normal: [number, number, number];
}

export interface RunTopology {
  vertexCount: number;
  triangles: Uint32Array;
  groups: BodyGroups;
  /** Vertex pairs drawn as lines (springs), when known. */
  lines?: Uint32Array;
}

/** One run's drawing: its surfaces, particles and springs, updated in place every frame. */
export class RunDrawing {
  readonly root = new THREE.Group();
  private readonly geometry = new THREE.BufferGeometry();
  private readonly position: THREE.BufferAttribute;
  private readonly colour: THREE.BufferAttribute;
  private readonly particles: THREE.InstancedMesh | null = null;
  private readonly springs: THREE.LineSegments | null = null;
  private readonly matrix = new THREE.Matrix4();
  private particleRadius = 0.01;
  readonly bounds = new THREE.Box3();

  constructor(private readonly topology: RunTopology) {
    const n = topology.vertexCount;
    this.position = new THREE.BufferAttribute(new Float32Array(3 * n), 3);
    this.colour = new THREE.BufferAttribute(new Float32Array(3 * n), 3);
    this.geometry.setAttribute('position', this.position);
    this.geometry.setAttribute('color', this.colour);
    this.geometry.setIndex(new THREE.BufferAttribute(topology.triangles, 1));
    const material = new THREE.MeshStandardMaterial({ vertexColors: true, roughness: 0.6, metalness: 0.0, side: THREE.DoubleSide });
    if (topology.triangles.length > 0) this.root.add(new THREE.Mesh(this.geometry, material));
    const np = topology.groups.particles.length;
    if (np > 0) {
      this.particles = new THREE.InstancedMesh(new THREE.SphereGeometry(1, 20, 14), new THREE.MeshStandardMaterial({ roughness: 0.5 }), np);
      this.root.add(this.particles);
    }
    if (topology.lines && topology.lines.length > 0) {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', this.position);
      g.setIndex(new THREE.BufferAttribute(topology.lines, 1));
      this.springs = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0x555555 }));
      this.root.add(this.springs);
    }
    this.colourBy(null);
  }

  /** Colours bodies by body (runColour null) or the whole run in one colour with lighter and darker bodies. */
  colourBy(runColour: string | null): void {
    const { vertexGroup, obstacle } = this.topology.groups;
    const c = new THREE.Color();
    const obstacleColour = new THREE.Color(OBSTACLE_COLOUR);
    const a = this.colour.array as Float32Array;
    for (let i = 0; i < vertexGroup.length; i++) {
      const g = vertexGroup[i];
      if (g >= 0 && obstacle[g]) c.copy(obstacleColour);
      else if (runColour) c.set(runColour).offsetHSL(0, 0, g >= 0 ? ((g % 5) - 2) * 0.04 : 0);
      else c.set(bodyColour(Math.max(g, 0)));
      a[3 * i] = c.r;
      a[3 * i + 1] = c.g;
      a[3 * i + 2] = c.b;
    }
    this.colour.needsUpdate = true;
    if (this.particles) {
      for (let k = 0; k < this.topology.groups.particles.length; k++) this.particles.setColorAt(k, c.set(runColour ?? bodyColour(k)));
      if (this.particles.instanceColor) this.particles.instanceColor.needsUpdate = true;
    }
  }

  setPositions(p: Float32Array): void {
    (this.position.array as Float32Array).set(p);
    this.position.needsUpdate = true;
    if (this.topology.triangles.length > 0) this.geometry.computeVertexNormals();
    this.geometry.computeBoundingSphere();
    if (this.particles) {
      const ids = this.topology.groups.particles;
      for (let k = 0; k < ids.length; k++) {
        const i = ids[k];
        this.matrix.makeScale(this.particleRadius, this.particleRadius, this.particleRadius).setPosition(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
        this.particles.setMatrixAt(k, this.matrix);
      }
      this.particles.instanceMatrix.needsUpdate = true;
      this.particles.computeBoundingSphere();
    }
  }

  /** Bounds of the given positions (used to frame the camera), and the particle size that suits them. */
  measure(p: Float32Array): THREE.Box3 {
    this.bounds.makeEmpty();
    const v = new THREE.Vector3();
    for (let i = 0; i < p.length; i += 3) this.bounds.expandByPoint(v.set(p[i], p[i + 1], p[i + 2]));
    return this.bounds;
  }

  setParticleRadius(r: number): void {
    this.particleRadius = r;
  }
}

export type Layout = 'side-by-side' | 'overlay';

/** The canvas, camera, lights and planes shared by all runs. */
export class Stage {
  readonly renderer: THREE.WebGLRenderer;
  readonly camera = new THREE.PerspectiveCamera(40, 1, 0.001, 1000);
  readonly controls: OrbitControls;
  private readonly scene = new THREE.Scene();
  private readonly planes = new THREE.Group();
  private runs: RunDrawing[] = [];
  private labels: HTMLElement[] = [];
  layout: Layout = 'side-by-side';
  private pending = false;

  constructor(private readonly container: HTMLElement) {
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.setScissorTest(true);
    container.appendChild(this.renderer.domElement);
    this.scene.background = new THREE.Color('#f4f5f7');
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(3, 6, 4);
    this.scene.add(sun);
    this.scene.add(this.planes);
    this.camera.position.set(1, 1, 1);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener('change', () => this.requestRender());
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
  }

  setRuns(runs: RunDrawing[], names: string[]): void {
    for (const r of this.runs) this.scene.remove(r.root);
    this.runs = runs;
    for (const r of runs) this.scene.add(r.root);
    for (const l of this.labels) l.remove();
    this.labels = names.map((name) => {
      const el = document.createElement('div');
      el.className = 'viewport-label';
      el.textContent = name;
      this.container.appendChild(el);
      return el;
    });
    this.setLayout(this.layout);
  }

  setLayout(layout: Layout): void {
    this.layout = layout;
    this.runs.forEach((r, i) => r.colourBy(layout === 'overlay' && this.runs.length > 1 ? bodyColour(i) : null));
    this.placeLabels();
    this.resize();
  }

  /** Draws the scene's planes as squares of side `size` around the point nearest `centre`, with a grid. */
  setPlanes(planes: PlaneObstacle[], centre: THREE.Vector3, size: number): void {
    this.planes.clear();
    for (const p of planes) {
      const n = new THREE.Vector3(...p.normal).normalize();
      const point = new THREE.Vector3(...p.point);
      const anchor = centre.clone().sub(n.clone().multiplyScalar(centre.clone().sub(point).dot(n)));
      const q = new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 1, 0), n);
      const quad = new THREE.Mesh(
        new THREE.PlaneGeometry(size, size).rotateX(-Math.PI / 2),
        new THREE.MeshStandardMaterial({ color: '#d9dce1', roughness: 0.9, side: THREE.DoubleSide, transparent: true, opacity: 0.85, polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 }),
      );
      const grid = new THREE.GridHelper(size, 20, 0x9aa0a8, 0xbfc4ca);
      for (const o of [quad, grid]) {
        o.quaternion.copy(q);
        o.position.copy(anchor);
        this.planes.add(o);
      }
    }
    this.requestRender();
  }

  /** Points the camera at the box from the front right, a little above, so that the box fills a viewport. */
  frame(box: THREE.Box3): void {
    const centre = box.getCenter(new THREE.Vector3());
    const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-3);
    const vertical = (this.camera.fov * Math.PI) / 180;
    const horizontal = 2 * Math.atan(Math.tan(vertical / 2) * this.viewportAspect());
    const distance = (radius / Math.sin(Math.min(vertical, horizontal) / 2)) * 1.15;
    this.controls.target.copy(centre);
    this.camera.position.copy(centre).add(new THREE.Vector3(0.5, 0.28, 1).normalize().multiplyScalar(distance));
    this.camera.near = distance / 1000;
    this.camera.far = distance * 100;
    this.camera.updateProjectionMatrix();
    this.controls.update();
    this.requestRender();
  }

  private columns(): number {
    return this.layout === 'overlay' ? 1 : Math.max(1, this.runs.length);
  }

  private viewportAspect(): number {
    const { width, height } = this.size();
    return width / this.columns() / Math.max(1, height);
  }

  requestRender(): void {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  /** Renders now (the page's frame loop and the tests call this directly). */
  render(): void {
    const { width, height } = this.size();
    const columns = this.columns();
    const w = Math.floor(width / columns);
    this.camera.aspect = this.viewportAspect();
    this.camera.updateProjectionMatrix();
    for (let c = 0; c < columns; c++) {
      this.runs.forEach((r, i) => (r.root.visible = this.layout === 'overlay' || i === c));
      this.renderer.setViewport(c * w, 0, w, height);
      this.renderer.setScissor(c * w, 0, w, height);
      this.renderer.render(this.scene, this.camera);
    }
  }

  private size(): { width: number; height: number } {
    return { width: this.container.clientWidth, height: this.container.clientHeight };
  }

  private resize(): void {
    const { width, height } = this.size();
    this.renderer.setSize(width, height, true);
    this.placeLabels();
    this.render();
  }

  private placeLabels(): void {
    const w = this.size().width / this.columns();
    this.labels.forEach((el, i) => {
      const overlay = this.layout === 'overlay';
      el.style.left = `${overlay ? 8 : i * w + 8}px`;
      el.style.top = `${overlay ? 8 + 22 * i : 8}px`;
      el.style.borderLeftColor = overlay && this.runs.length > 1 ? bodyColour(i) : 'transparent';
    });
  }

  /** Sets a run's label text (name and the current time or energy). */
  setLabel(i: number, text: string): void {
    if (this.labels[i]) this.labels[i].textContent = text;
  }
}
