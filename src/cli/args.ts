/**
 * Parsers of command-line values. They throw commander's InvalidArgumentError, which commander reports as
 * "option '--dt <h>' argument 'abc' is invalid. <reason>" (so the message names the flag).
 */

import { InvalidArgumentError } from 'commander';
import type { IntegratorParams } from '../integrators/integrator.js';
import type { SceneOverrides } from '../io/scene-files.js';

/** A bad command-line value found after parsing (names the flag); the CLI exits with code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The flag that sets each override, for error messages. */
export const overrideFlags: Record<keyof SceneOverrides, string> = {
  integrator: '--integrator',
  dt: '--dt',
  duration: '--duration',
  params: '--param',
  linear: '--linear',
  tolerance: '--tol',
  frameRate: '--frame-rate',
  solver: '--linear/--tol',
};

const decimal = /^[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A non-negative decimal ("0.01", "1e-3") or fraction ("1/120"). */
export function parseRational(text: string): number {
  const s = text.trim();
  const slash = s.indexOf('/');
  if (slash >= 0) {
    const num = s.slice(0, slash).trim();
    const den = s.slice(slash + 1).trim();
    if (!decimal.test(num) || !decimal.test(den)) return NaN;
    return Number(num) / Number(den);
  }
  return decimal.test(s) ? Number(s) : NaN;
}

/** --dt: a positive decimal or fraction such as 1/120. */
export function parseTimeStep(text: string): number {
  const h = parseRational(text);
  if (!(h > 0) || !Number.isFinite(h)) throw new InvalidArgumentError('Expected a positive number of seconds, as a decimal (0.01) or a fraction (1/120).');
  return h;
}

/** --duration: a positive number of seconds (decimal or fraction); a run of no time has no step. */
export function parseDuration(text: string): number {
  const t = parseRational(text);
  if (!(t > 0) || !Number.isFinite(t)) throw new InvalidArgumentError('Expected a positive number of seconds (a run of 0 s has no step).');
  return t;
}

/** A positive whole number (--checkpoint-every, --max-steps). */
export function parsePositiveInt(text: string): number {
  const s = text.trim();
  const n = /^\d+$/.test(s) ? Number(s) : NaN;
  if (!(n >= 1) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('Expected a whole number of steps, at least 1.');
  return n;
}

/** A positive number (--tol, --frame-rate). */
export function parsePositive(text: string): number {
  const x = parseRational(text);
  if (!(x > 0) || !Number.isFinite(x)) throw new InvalidArgumentError('Expected a positive number.');
  return x;
}

/** One --param k=v, added to the ones before it; v is a number or true/false. */
export function collectParam(text: string, previous: IntegratorParams | undefined): IntegratorParams {
  const eq = text.indexOf('=');
  const key = eq > 0 ? text.slice(0, eq).trim() : '';
  const raw = eq > 0 ? text.slice(eq + 1).trim() : '';
  if (!/^[A-Za-z_][\w-]*$/.test(key) || raw === '') throw new InvalidArgumentError('Expected name=value, e.g. --param alphaMax=1.2.');
  let value: number | boolean;
  if (raw === 'true' || raw === 'false') value = raw === 'true';
  else {
    value = parseRational(raw.replace(/^-/, ''));
    if (raw.startsWith('-')) value = -value;
    if (!Number.isFinite(value)) throw new InvalidArgumentError(`The value of '${key}' must be a number or true/false (got '${raw}').`);
  }
  return { ...(previous ?? {}), [key]: value };
}

/** A parser of a comma-separated list of `what` (integrator names, column names): non-empty, without repeats. */
function listParser(what: string): (text: string) => string[] {
  return (text) => {
    const items = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    if (items.length === 0) throw new InvalidArgumentError(`Expected a comma-separated list of ${what}.`);
    const seen = new Set<string>();
    for (const s of items) {
      if (seen.has(s)) throw new InvalidArgumentError(`'${s}' is listed twice.`);
      seen.add(s);
    }
    return items;
  };
}

/** --integrators a,b,c. */
export const parseList = listParser('integrator names');
/** vivace plot --columns total,alpha. */
export const parseColumnList = listParser('metrics.csv column names');

/** One --scene-param name=value (a number: decimal, fraction or negative), added to the ones before it. */
export function collectSceneParam(text: string, previous: Record<string, number> | undefined): Record<string, number> {
  const eq = text.indexOf('=');
  const key = eq > 0 ? text.slice(0, eq).trim() : '';
  const raw = eq > 0 ? text.slice(eq + 1).trim() : '';
  if (!/^[A-Za-z_][\w-]*$/.test(key) || raw === '') throw new InvalidArgumentError('Expected name=value, e.g. --scene-param phase=0.25.');
  const magnitude = parseRational(raw.replace(/^-/, ''));
  const value = raw.startsWith('-') ? -magnitude : magnitude;
  if (!Number.isFinite(value)) throw new InvalidArgumentError(`The value of scene parameter '${key}' must be a number (got '${raw}').`);
  return { ...(previous ?? {}), [key]: value };
}
