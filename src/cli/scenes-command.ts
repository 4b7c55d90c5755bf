/** `vivace scenes`: the built-in scenes, the integrators and their parameters, or the scene JSON schema. */

import { z } from 'zod';
import { integrators } from '../integrators/registry.js';
import { listScenes } from '../io/scene-files.js';
import { sceneSchema } from '../scene/schema.js';

function num(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(6))) : '?';
}

/** Word-wraps text to `width` columns, each line indented. */
export function wrap(text: string, indent: string, width = 100): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines.join('\n');
}

export function scenesText(): string {
  const rows = listScenes();
  const w = Math.max(4, ...rows.map((r) => r.name.length));
  const out = [`${'name'.padEnd(w)}  ${'h (s)'.padEnd(10)} ${'duration (s)'.padEnd(12)} ${'bodies'.padEnd(6)} integrator`];
  for (const r of rows) {
    if (r.error) {
      out.push(`${r.name.padEnd(w)}  (invalid: ${r.error.split('\n').join(' ')})`);
      continue;
    }
    out.push(`${r.name.padEnd(w)}  ${num(r.dt).padEnd(10)} ${num(r.duration).padEnd(12)} ${String(r.bodies).padEnd(6)} ${r.integrator}`);
    if (r.description) out.push(wrap(r.description, '    '));
  }
  out.push('', 'Run one with: vivace run <name> [--integrator NAME] [--dt H] [--duration S] [--out DIR]', '');
  return out.join('\n');
}

export function integratorsText(): string {
  const out: string[] = [];
  for (const spec of integrators) {
    out.push(`${spec.name} (${spec.implicit ? 'implicit' : 'explicit'}): ${spec.summary}`);
    for (const [key, p] of Object.entries(spec.params)) out.push(`    --param ${`${key}=${String(p.default)}`.padEnd(22)} ${p.doc}`);
  }
  out.push('', 'Pick one with --integrator NAME; set its parameters with --param name=value (repeatable).', '');
  return out.join('\n');
}

/** The scene format as a JSON Schema (input side: defaults shown, optional fields optional). */
export function schemaText(): string {
  return `${JSON.stringify(z.toJSONSchema(sceneSchema, { io: 'input' }), null, 2)}\n`;
}
