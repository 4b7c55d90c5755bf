/**
 * Output folders: checked before a run starts (so that a run that cannot write its outputs is refused with nothing
 * written), and created one level at a time. Node's mkdir({ recursive: true }) loops forever at 100 % CPU on
 * paths it cannot create under /proc (each level answers ENOENT, so it climbs and retries without end).
 */

import { accessSync, constants, existsSync, mkdirSync, rmdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fsErrorText } from './fs-errors.js';

/** Free space a run needs at its start (metrics.csv's first rows, a frame, the plot and the summary). */
export const MIN_FREE_BYTES = 1 << 20;

/** statfs magic numbers of Linux file systems that hold no user files (linux/magic.h). */
const PSEUDO_FILE_SYSTEMS: Record<number, string> = {
  0x9fa0: 'proc',
  0x62656572: 'sysfs',
  0x1cd1: 'devpts',
  0x27e0eb: 'cgroup',
  0x63677270: 'cgroup2',
  0x64626720: 'debugfs',
  0x74726163: 'tracefs',
  0x73636673: 'securityfs',
  0x6165676c: 'pstore',
  0xcafe4a11: 'bpf',
  0x62656570: 'configfs',
  0xde5e81e4: 'efivarfs',
};

/** An output folder that cannot be created or written; the message names the folder and why. */
export class OutputDirError extends Error {
  override name = 'OutputDirError';
}

/** The folder itself when it exists, else the nearest ancestor that does. */
function firstExisting(dir: string): string {
  let p = dir;
  while (!existsSync(p)) {
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  return p;
}

/**
 * Checks, without creating anything, that `dir` can be created (or is already a folder) and written: its nearest
 * existing ancestor must be a writable folder on a real file system with at least MIN_FREE_BYTES free.
 */
export function checkOutputDir(dir: string): void {
  const target = resolve(dir);
  const base = firstExisting(target);
  const what = base === target ? `${target}` : `cannot create ${target}: ${base}`;
  if (!statSync(base).isDirectory()) throw new OutputDirError(`${what} ${base === target ? 'exists and ' : ''}is a file, not a folder`);
  try {
    accessSync(base, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new OutputDirError(`${what} is not writable: ${fsErrorText(err)}`);
  }
  const fs = statfsSync(base);
  const pseudo = PSEUDO_FILE_SYSTEMS[fs.type];
  if (pseudo) throw new OutputDirError(`${what} is on the ${pseudo} file system, which holds no files`);
  const free = fs.bavail * fs.bsize;
  if (free < MIN_FREE_BYTES) throw new OutputDirError(`${what}: no space left on the device (${free} bytes free, a run needs at least ${MIN_FREE_BYTES})`);
  if (fs.files > 0 && fs.ffree === 0) throw new OutputDirError(`${what}: no free inodes left on the device (no file can be created)`);
}

/**
 * Creates `dir` and its missing parents, one level at a time, and returns the folders it created (outermost first),
 * so that a failed start can remove them again (removeCreated). Errors name the folder.
 */
export function makeDirs(dir: string): string[] {
  const missing: string[] = [];
  for (let p = resolve(dir); !existsSync(p); p = dirname(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  const created: string[] = [];
  for (const p of missing) {
    try {
      mkdirSync(p);
    } catch (err) {
      // Made meanwhile by someone else: fine if it is a folder.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(p).isDirectory()) continue;
      removeCreated(created);
      throw new OutputDirError(`cannot create the folder ${p}: ${fsErrorText(err)}`);
    }
    created.push(p);
  }
  return created;
}

/** Removes folders makeDirs created (innermost first), if they are empty; never throws. */
export function removeCreated(created: readonly string[]): void {
  for (let i = created.length - 1; i >= 0; i--) {
    try {
      rmdirSync(created[i]);
    } catch {
      // Not empty or already gone: leave it.
    }
  }
}
