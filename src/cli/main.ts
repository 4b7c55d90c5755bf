/**
 * The vivace command line. `main(argv)` runs one command in-process and returns its exit code:
 *   0 done, 1 unexpected failure, 2 invalid scene / flag / value or a run beyond the work limits (nothing written),
 *   3 the run stopped early (or, with --strict, a step ended at the Newton iteration limit), 130 Ctrl-C (143 SIGTERM).
 * Run as a script (`tsx src/cli/main.ts ...`, or bin/vivace.js), it sets the process exit code.
 */

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { MeshFileError } from '../io/mesh-files.js';
import '../sim/node-wasm-features.js';
import '../sim/node-threads.js';
import { listScenes, PACKAGE_ROOT } from '../io/scene-files.js';
import { describeRange } from '../scene/parametric.js';
import { DEFAULT_FRAME_FORMAT, FRAME_FORMATS } from '../scene/run-options.js';
import { bytes, WORK_LIMITS } from '../scene/work-estimate.js';
import { SceneError } from '../scene/schema.js';
import { collectParam, collectSceneParam, parseDuration, parseList, parsePositive, parsePositiveInt, parseTimeStep, UsageError } from './args.js';
import { compareCommand, EXIT, runCommand, type CliIo, type CompareFlags, type RunFlags } from './run-command.js';
import { integratorsText, scenesText, schemaText } from './scenes-command.js';
import { addPlotCommand } from './plot-command.js';
import { addViewCommands } from './view-command.js';

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Options shared by run and compare. */
function addRunOptions(cmd: Command): Command {
  return cmd
    .option('--dt <h>', 'time step in seconds, a decimal or a fraction like 1/120 (default: the scene\'s dt)', parseTimeStep)
    .option('--duration <s>', 'simulated time in seconds (default: the scene\'s duration)', parseDuration)
    .option('--out <dir>', 'output folder (default: out/<scene>-<integrator> for run, out/<scene>-compare for compare)')
    .addOption(new Option('--linear <solver>', 'linear solver of the Newton steps (default: the scene\'s)').choices(['auto', 'pcg', 'ldlt', 'ldlt-lagged']))
    .option('--tol <x>', 'Newton tolerance: stop when |dx|_inf <= tol * h (default: the scene\'s, 0.01)', parsePositive)
    .option('--frame-rate <f>', 'output frames per second (default: the scene\'s frameRate)', parsePositive)
    .addOption(new Option('--frames <format>', `frame files: obj (what vivace view plays), vtu (ParaView, with frames.pvd) or both (default: ${DEFAULT_FRAME_FORMAT})`).choices(FRAME_FORMATS))
    .option('--quiet', 'no progress display and no summary')
    .option('--strict', 'exit with code 3 when a step ended at the Newton iteration limit (not converged to --tol)')
    .option('--max-steps <n>', `refuse a run of more steps than this (default ${WORK_LIMITS.steps.toLocaleString('en-US')})`, parsePositiveInt)
    .option('--allow-large', `lift the work limits: steps (--max-steps), bodies (${WORK_LIMITS.bodies.toLocaleString('en-US')}), estimated memory (${bytes(WORK_LIMITS.memoryBytes)}) and output size (${bytes(WORK_LIMITS.outputBytes)})`)
    .option('--scene-param <name=value>', 'parameter of a parametric scene, a number (repeatable; see `vivace scenes`)', collectSceneParam);
}

function buildProgram(io: CliIo, setCode: (code: number) => void, cwd: string): Command {
  const program = new Command('vivace')
    .description('Elastic bodies with energy-controllable time integration (A-search) on tetrahedral FEM.')
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`vivace: ${s}`),
    })
    .showHelpAfterError('(vivace help <command> shows its options)')
    .showSuggestionAfterError(true);

  addRunOptions(
    program
      .command('run')
      .description('simulate a scene and write metrics.csv, bodies.csv, frames/, energy.svg and summary.json')
      .argument('<scene>', 'a built-in scene name (see `vivace scenes`) or a path to a scene JSON file')
      .option('--integrator <name>', 'time integrator (see `vivace scenes --integrators`; default: the scene\'s)')
      .option('--param <name=value>', 'integrator parameter, a number or true/false (repeatable)', collectParam)
      .option('--checkpoint-every <n>', 'save the run state to <out>/checkpoint.json every n steps, so that --resume can go on after an interruption', parsePositiveInt)
      .option('--resume', 'go on from <out>/checkpoint.json (same scene and flags; a longer --duration extends a finished run), keeping the rows and frames up to it; checkpoints continue every --checkpoint-every steps (default 10)'),
  ).action(async (scene: string, flags: RunFlags) => {
    setCode(await runCommand(scene, flags, io, cwd));
  });

  addRunOptions(
    program
      .command('compare')
      .description('run one scene with several integrators; writes <out>/<integrator>/, report.md and energy plots')
      .argument('<scene>', 'a built-in scene name or a path to a scene JSON file')
      .requiredOption('--integrators <list>', 'comma-separated integrator names, e.g. a-search,bdf2,implicit-midpoint', parseList),
  ).action(async (scene: string, flags: CompareFlags) => {
    setCode(await compareCommand(scene, flags, io, cwd));
  });

  program
    .command('scenes')
    .description('list the built-in scenes (or the integrators, or the scene file schema)')
    .option('--integrators', 'list the integrators with their parameters instead')
    .option('--schema', 'print the scene file format as a JSON Schema instead')
    .action((flags: { integrators?: boolean; schema?: boolean }) => {
      io.stdout.write(flags.schema ? schemaText() : flags.integrators ? integratorsText() : scenesText() + parametricScenesText());
      setCode(EXIT.ok);
    });

  addPlotCommand(program, io, setCode, cwd);
  addViewCommands(program, io, setCode, cwd);
  return program;
}

/** The parameters of the parametric scenes, after the scene list of `vivace scenes`. */
function parametricScenesText(): string {
  const rows = listScenes().filter((r) => r.parameters);
  if (rows.length === 0) return '';
  const out = ['Parametric scenes take --scene-param name=value (repeatable) on run and compare:'];
  for (const r of rows) {
    out.push(`  ${r.name}`);
    for (const [key, p] of Object.entries(r.parameters!)) {
      const range = describeRange(p);
      out.push(`    ${`${key}=${p.default}`.padEnd(16)} ${p.description}${range ? `; range ${range}` : ''}`);
    }
  }
  out.push('');
  return `${out.join('\n')}\n`;
}

/** Runs the CLI on argv (the arguments after the program name) and returns the exit code. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }, cwd = process.cwd()): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => (code = c), cwd);
  if (argv.length === 0) {
    io.stderr.write(program.helpInformation());
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already printed its message (it names the flag and the allowed values).
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof UsageError || err instanceof SceneError || err instanceof MeshFileError) {
      io.stderr.write(`vivace: error: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    const e = err as Error;
    io.stderr.write(`vivace: failed: ${e?.message ?? String(err)}\n`);
    if (process.env.VIVACE_DEBUG && e?.stack) io.stderr.write(`${e.stack}\n`);
    return EXIT.failure;
  }
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  process.exitCode = await main(process.argv.slice(2));
}
