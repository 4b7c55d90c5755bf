/** Fuzz-corpus inputs too large to commit (50 MB files, deep nesting), written at test time into a scratch folder. */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Inputs too large to commit, written at test time; each returns the scene file's path. */
export const GENERATORS: Record<string, (dir: string) => string> = {
  /** 50 MB of a valid scene's whitespace-padded description, then a syntax error on the last line. */
  'syntax-error-after-50mb': (dir) => {
    const file = join(dir, 'syntax-error-after-50mb.json');
    const filler = `${' '.repeat(99)}\n`.repeat(500_000);
    writeFileSync(file, `{\n  "name": "big",\n${filler}  "dt": 0.1,,\n}\n`);
    return file;
  },
  /** 50 MB of particles (1.6 million) with one mass too few. */
  'particles-50mb-mass-count': (dir) => {
    const file = join(dir, 'particles-50mb-mass-count.json');
    const n = 1_600_000;
    const positions = Array.from({ length: n }, (_, i) => `[${i},0.5,0.25]`).join(',');
    const masses = Array.from({ length: n - 1 }, () => '1').join(',');
    writeFileSync(file, `{"name":"big","duration":0.1,"dt":0.1,"gravity":[0,0,0],"bodies":[{"name":"dust","mesh":{"type":"particles","positions":[${positions}],"masses":[${masses}]}}]}`);
    return file;
  },
  /** 50 MB of negative masses: one issue per particle, and the message must stay short. */
  'masses-50mb-negative': (dir) => {
    const file = join(dir, 'masses-50mb-negative.json');
    const n = 2_000_000;
    writeFileSync(file, `{"name":"big","duration":0.1,"dt":0.1,"bodies":[{"mesh":{"type":"particles","positions":[[0,0,0]],"masses":[${Array.from({ length: n }, () => '-1e-300').join(',')}]}}]}`);
    return file;
  },
  /** A 50 MB scene name. */
  'name-50mb': (dir) => {
    const file = join(dir, 'name-50mb.json');
    writeFileSync(file, `{"name":"${'n'.repeat(50_000_000)}","duration":0.1,"dt":0.1,"bodies":[{"mesh":{"type":"particles","positions":[[0,0,0]],"masses":[1]}}]}`);
    return file;
  },
  /** Half a million integrator parameters (7 MB), none of them a number (one zod issue each used to overflow the stack). */
  'params-500k': (dir) => {
    const file = join(dir, 'params-500k.json');
    const params = Array.from({ length: 500_000 }, (_, i) => `"p${i}":"x"`).join(',');
    writeFileSync(file, `{"name":"big","duration":0.1,"dt":0.1,"integrator":{"name":"a-search","params":{${params}}},"bodies":[{"mesh":{"type":"particles","positions":[[0,0,0]],"masses":[1]}}]}`);
    return file;
  },
  /** Half a million misspelt fields in a body (6 MB). */
  'unknown-fields-500k': (dir) => {
    const file = join(dir, 'unknown-fields-500k.json');
    const fields = Array.from({ length: 500_000 }, (_, i) => `"f${i}":0`).join(',');
    writeFileSync(file, `{"name":"big","duration":0.1,"dt":0.1,"bodies":[{${fields},"mesh":{"type":"particles","positions":[[0,0,0]],"masses":[1]}}]}`);
    return file;
  },
  /** A million nested arrays in a field. */
  'nesting-1e6-in-field': (dir) => {
    const file = join(dir, 'nesting-1e6-in-field.json');
    const d = 1_000_000;
    writeFileSync(file, `{"name":"deep","duration":0.1,"dt":0.1,"gravity":${'['.repeat(d)}${']'.repeat(d)},"bodies":[{"mesh":{"type":"particles","positions":[[0,0,0]],"masses":[1]}}]}`);
    return file;
  },
  /** A hundred thousand nested objects, then a missing bracket at the very end. */
  'nesting-1e5-unclosed': (dir) => {
    const file = join(dir, 'nesting-1e5-unclosed.json');
    const d = 100_000;
    writeFileSync(file, `{"name":"deep","x":${'{"a":'.repeat(d)}1${'}'.repeat(d - 1)}`);
    return file;
  },
  /** A TetGen .node of 50 MB (1.2 million nodes) whose last line has a bad coordinate. */
  'mesh-node-50mb-bad-last-line': (dir) => {
    const base = join(dir, 'big-mesh');
    const n = 1_200_000;
    const lines = Array.from({ length: n }, (_, i) => `${i} 0.123456789 0.246913578 0.987654321`);
    lines[n - 1] = `${n - 1} 0.5 oops 0.5`;
    writeFileSync(`${base}.node`, `${n} 3 0 0\n${lines.join('\n')}\n`);
    writeFileSync(`${base}.ele`, '1 4 0\n0 0 1 2 3\n');
    const file = join(dir, 'mesh-node-50mb.json');
    writeFileSync(file, JSON.stringify({ name: 'big-mesh', duration: 0.1, dt: 0.1, bodies: [{ mesh: { type: 'file', path: 'big-mesh.node' }, material: { youngsModulus: 1e5 } }] }));
    return file;
  },
};

