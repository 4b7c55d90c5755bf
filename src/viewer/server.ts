/**
 * The local web server of `vivace view` and `vivace demo`: the prebuilt page (dist/web/<page>/), and for the viewer
 * the run folders' files under /runs/<id>/... plus a listing at /api/runs. It listens on 127.0.0.1 only, answers
 * only requests addressed to that host (a page elsewhere cannot reach it through DNS rebinding), and serves only
 * regular files inside the page folder or a run folder: every path segment is decoded once and refused if it is
 * empty, `.` or `..`, hidden, or holds a slash, backslash or NUL, and the resolved real path must stay inside.
 */

import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, sep } from 'node:path';
import { listRun, type RunCatalog } from './run-folders.js';

export const VIEW_HOST = '127.0.0.1';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.obj': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.vtu': 'application/xml',
  '.pvd': 'application/xml',
  '.wasm': 'application/wasm',
};

export interface ServerOptions {
  /** Folder of the built page (index.html and its assets). */
  pageDir: string;
  /** The runs to serve (the viewer); absent for the demo. */
  runs?: RunCatalog;
  /** 0 picks a free port. */
  port?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const pageDir = realpathSync(options.pageDir);
  const server = createServer((req, res) => {
    try {
      handle(req, res, pageDir, options.runs);
    } catch (err) {
      send(res, 500, `server error: ${(err as Error).message}`);
    }
  });
  await listen(server, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${VIEW_HOST}:${port}/`,
    port,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, VIEW_HOST, () => {
      server.off('error', fail);
      done();
    });
  });
}

function handle(req: IncomingMessage, res: ServerResponse, pageDir: string, runs: RunCatalog | undefined): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'only GET and HEAD');
  if (!hostAllowed(req.headers.host)) return send(res, 403, 'this server answers only requests to 127.0.0.1 or localhost');
  const raw = (req.url ?? '/').split('?')[0];
  const segments = splitPath(raw);
  if (!segments) return send(res, 400, 'bad path');
  if (runs && segments[0] === 'api' && segments[1] === 'runs' && segments.length === 2) {
    return sendJson(res, runs.runs().map(listRun));
  }
  if (runs && segments[0] === 'runs' && segments.length >= 3) {
    const run = runs.get(segments[1]);
    if (!run) return send(res, 404, 'no such run');
    return sendFile(req, res, run.dir, segments.slice(2), 'no-store');
  }
  return sendFile(req, res, pageDir, segments.length === 0 ? ['index.html'] : segments, 'no-cache');
}

function hostAllowed(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.replace(/:\d+$/, '');
  return name === VIEW_HOST || name === 'localhost';
}

/**
 * The decoded segments of a URL path, or null when a segment could step out of its folder or is not plain: empty
 * (`//`), `.`, `..`, hidden (`.x`), or holding `/`, `\`, NUL after decoding (so `%2e%2e`, `%2f`, `%5c` are refused;
 * a doubly encoded `%252e` decodes once to the literal name `%2e`, which is simply not found).
 */
export function splitPath(rawPath: string): string[] | null {
  if (!rawPath.startsWith('/')) return null;
  const parts = rawPath.slice(1).split('/');
  if (parts.length === 1 && parts[0] === '') return [];
  const out: string[] = [];
  for (const part of parts) {
    let s: string;
    try {
      s = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (s === '' || s.startsWith('.') || /[/\\\0]/.test(s)) return null;
    out.push(s);
  }
  return out;
}

function sendFile(req: IncomingMessage, res: ServerResponse, root: string, segments: string[], cache: string): void {
  const path = join(root, ...segments);
  if (!path.startsWith(root + sep) || !existsSync(path)) return send(res, 404, 'not found');
  const real = realpathSync(path);
  if (!real.startsWith(root + sep)) return send(res, 404, 'not found');
  const stat = statSync(real);
  if (!stat.isFile()) return send(res, 404, 'not found');
  const headers: Record<string, string | number> = {
    'Content-Type': CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream',
    'Cache-Control': cache,
    'Accept-Ranges': 'bytes',
    'X-Content-Type-Options': 'nosniff',
  };
  // Ranges let the page read only the new part of a growing metrics.csv.
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = stat.size - 1;
  let status = 200;
  if (range) {
    start = Number(range[1]);
    if (range[2] !== '') end = Math.min(end, Number(range[2]));
    if (start >= stat.size || start > end) {
      res.writeHead(416, { 'Content-Range': `bytes */${stat.size}`, 'Cache-Control': cache });
      res.end();
      return;
    }
    status = 206;
    headers['Content-Range'] = `bytes ${start}-${end}/${stat.size}`;
  }
  headers['Content-Length'] = end - start + 1;
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || stat.size === 0) {
    res.end();
    return;
  }
  createReadStream(real, { start, end }).pipe(res);
}

function sendJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'Content-Type': CONTENT_TYPES['.json'], 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function send(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(`${message}\n`);
}
