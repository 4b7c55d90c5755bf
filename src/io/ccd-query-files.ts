import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseCcdQueries, type CcdQuery } from '../contact/ccd-queries.js';

export interface CcdQueryFile {
  path: string;
  /** Edge-edge queries (the folder says so); vertex-face otherwise. */
  edgeEdge: boolean;
  queries: CcdQuery[];
}

/** Every `*.csv` of a Sample-Queries tree (`<scene>/{vertex-face,edge-edge}/data_*.csv`), in sorted order. */
export function readCcdQueryTree(root: string): CcdQueryFile[] {
  const paths: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.csv')) paths.push(path);
    }
  };
  walk(root);
  return paths.map((path) => ({ path, edgeEdge: path.includes('edge-edge'), queries: parseCcdQueries(readFileSync(path, 'utf8')) }));
}
