/**
 * The browser commands: `vivace view` (serve the viewer on run folders), `vivace render` (the viewer in headless
 * Chromium, to a video or PNG frames) and `vivace demo` (serve, or write out, the in-browser simulator).
 */

import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { pageDir } from '../viewer/pages.js';
import { renderRuns, RenderError, type RenderOptions } from '../viewer/render.js';
import { RunCatalog, RunFolderError } from '../viewer/run-folders.js';
import { startServer, type RunningServer, type ServerOptions } from '../viewer/server.js';
import { parsePositive, parsePositiveInt, UsageError } from './args.js';
import { EXIT, type CliIo } from './run-command.js';

/** Ports tried first; when taken (and no --port was given) the system picks a free one. */
export const DEFAULT_PORTS = { view: 8765, demo: 8766 } as const;

interface ServeFlags {
  port?: number;
  open?: boolean;
}

type RenderFlags = Omit<RenderOptions, 'runDirs' | 'progress'>;

function parsePort(text: string): number {
  const port = parsePositiveInt(text);
  if (port > 65535) throw new UsageError(`--port: ${text} is not a port number (1-65535)`);
  return port;
}

/** Adds view, render and demo to the program. `stop` resolves when a server should close (Ctrl-C by default). */
export function addViewCommands(program: Command, io: CliIo, setCode: (code: number) => void, cwd: string, stop: () => Promise<void> = untilInterrupted): void {
  program
    .command('view')
    .description('watch runs in the browser: serves a page on 127.0.0.1 that plays the runs side by side with their energy plots')
    .argument('<run-dir...>', 'run folders (as `vivace run` writes them) or `vivace compare` folders (all their runs); a run in progress is followed')
    .option('--port <n>', `port to listen on (default ${DEFAULT_PORTS.view}, or a free one if that is taken)`, parsePort)
    .option('--open', 'open the page in the default browser')
    .action(async (dirs: string[], flags: ServeFlags) => {
      const runs = catalogOf(dirs, cwd);
      const count = runs.runs().length;
      await serve({ pageDir: pageDir('viewer'), runs }, flags, DEFAULT_PORTS.view, `vivace view: ${count} run${count === 1 ? '' : 's'} at`, io, stop);
      setCode(EXIT.ok);
    });

  program
    .command('render')
    .description('render runs to a video (with ffmpeg) or PNG frames, through the viewer page in headless Chromium')
    .argument('<run-dir...>', 'run folders or compare folders, drawn side by side like `vivace view`')
    .requiredOption('--out <file>', 'movie.mp4 (.mov, .mkv, .webm, .gif: needs ffmpeg on the PATH; without it PNG frames go to <name>-png/) or a folder for PNG frames')
    .option('--fps <f>', 'frames per second of the output (default: the runs\' frame rate); the output plays in real time', parsePositive)
    .option('--width <px>', 'image width', parsePositiveInt, 1280)
    .option('--height <px>', 'image height', parsePositiveInt, 720)
    .addOption(new Option('--layout <layout>', 'runs side by side or overlaid in one view').choices(['side-by-side', 'overlay']).default('side-by-side'))
    .option('--no-plots', 'the 3D view alone, without the energy and alpha plots')
    .option('--chromium <path>', 'Chromium or Chrome binary (default: $VIVACE_CHROMIUM, /usr/bin/chromium, ...)')
    .action(async (dirs: string[], flags: RenderFlags) => {
      catalogOf(dirs, cwd);
      const out = resolve(cwd, flags.out);
      let last = -1;
      try {
        const result = await renderRuns({
          ...flags,
          runDirs: dirs.map((d) => resolve(cwd, d)),
          out,
          progress: (done, total) => {
            const tenth = Math.floor((10 * done) / total);
            if (tenth !== last) io.stderr.write(`render: frame ${done} / ${total}\n`);
            last = tenth;
          },
        });
        if (result.note) io.stderr.write(`vivace render: ${result.note}\n`);
        io.stdout.write(`${result.kind === 'video' ? 'video' : 'PNG frames'}: ${result.path} (${result.frames} frames at ${Number(result.fps.toPrecision(4))} fps)\n`);
        setCode(EXIT.ok);
      } catch (err) {
        if (err instanceof RenderError || err instanceof RunFolderError) throw new UsageError(err.message);
        throw err;
      }
    });

  program
    .command('demo')
    .description('the in-browser simulator: serves a static page that runs small built-in scenes in a Web Worker')
    .option('--port <n>', `port to listen on (default ${DEFAULT_PORTS.demo}, or a free one if that is taken)`, parsePort)
    .option('--open', 'open the page in the default browser')
    .option('--out <dir>', 'write the page\'s static files to this folder instead of serving them (host them anywhere)')
    .action(async (flags: ServeFlags & { out?: string }) => {
      if (flags.out) {
        const out = resolve(cwd, flags.out);
        if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${flags.out}: the folder exists and is not empty`);
        cpSync(pageDir('demo'), out, { recursive: true });
        io.stdout.write(`demo page written to ${out} (index.html, demo.js, demo.css, worker.js); serve the folder with any static web server\n`);
        setCode(EXIT.ok);
        return;
      }
      await serve({ pageDir: pageDir('demo') }, flags, DEFAULT_PORTS.demo, 'vivace demo: serving at', io, stop);
      setCode(EXIT.ok);
    });
}

function catalogOf(dirs: string[], cwd: string): RunCatalog {
  try {
    return new RunCatalog(dirs.map((d) => resolve(cwd, d)));
  } catch (err) {
    if (err instanceof RunFolderError) throw new UsageError(err.message);
    throw err;
  }
}

async function serve(options: ServerOptions, flags: ServeFlags, defaultPort: number, what: string, io: CliIo, stop: () => Promise<void>): Promise<void> {
  let server: RunningServer;
  try {
    server = await startServer({ ...options, port: flags.port ?? defaultPort });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
    if (flags.port !== undefined) throw new UsageError(`--port ${flags.port}: the port is in use or not allowed`);
    server = await startServer({ ...options, port: 0 });
  }
  io.stdout.write(`${what} ${server.url} (Ctrl-C stops)\n`);
  if (flags.open) openBrowser(server.url, io);
  await stop();
  await server.close();
}

function untilInterrupted(): Promise<void> {
  return new Promise((done) => {
    const end = () => {
      process.off('SIGINT', end);
      process.off('SIGTERM', end);
      done();
    };
    process.on('SIGINT', end);
    process.on('SIGTERM', end);
  });
}

function openBrowser(url: string, io: CliIo): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.on('error', () => io.stderr.write(`vivace: could not open a browser (${command}); open ${url} yourself\n`));
  child.unref();
}
