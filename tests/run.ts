/**
 * `npm test`: runs `node --test dist/tests/` (or `node --test ARGS` when given paths) with TMPDIR
 * pointing at a fresh folder of its own under the OS temporary directory, standard streams
 * inherited, then checks the tests left nothing behind:
 *
 * - anything still in that folder (temporary folders and files of the tests, of the `oas`
 *   processes they start, of redis-server, Chromium or Playwright) is listed on standard error,
 *   removed, and the run fails;
 * - any process still running with that TMPDIR in its environment (a server, worker, redis-server
 *   or browser a test did not stop; Linux only, read from /proc) is listed, killed, and the run
 *   fails.
 *
 * The exit code is the test runner's, or 1 when something was left. Nothing is added to standard
 * output, whose last lines are the runner's summary.
 *
 * Not a test file: node's runner only takes `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
 * `test.js` and files under a `test` folder, so `node --test dist/tests/` leaves this one alone.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const args = process.argv.slice(2);
const testArgs = args.some((arg) => !arg.startsWith('-')) ? args : [...args, 'dist/tests/'];

const runDir = mkdtempSync(join(tmpdir(), 'oas-test-run-'));
// Like /tmp: tests that run `oas` as another user (config-errors) reach their folders in it.
chmodSync(runDir, 0o1777);

/** The processes (not this one) whose environment holds TMPDIR=runDir: pid and command line. */
function processesOfTheRun(): { pid: number; command: string }[] {
  if (!existsSync('/proc/self/environ')) return [];
  const marker = `TMPDIR=${runDir}`;
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(marker)) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ');
      found.push({ pid: Number(entry), command: command || readlinkSync(`/proc/${entry}/exe`) });
    } catch {
      // gone meanwhile, a zombie, or not ours to read
    }
  }
  return found;
}

const child = spawn(process.execPath, ['--test', ...testArgs], {
  env: { ...process.env, TMPDIR: runDir },
  stdio: 'inherit',
});
const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, forward(signal));

const code = await new Promise<number>((resolve) => {
  child.once('error', (error) => {
    process.stderr.write(`cannot run the tests: ${error.message}\n`);
    resolve(1);
  });
  child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
});

// A process stopped as its test file ended may take a moment to go.
let processes = processesOfTheRun();
for (let i = 0; i < 20 && processes.length > 0; i++) {
  await sleep(100);
  processes = processesOfTheRun();
}
for (const { pid } of processes) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
if (processes.length > 0) {
  process.stderr.write(`tests left these processes running (killed now):\n${processes.map(({ pid, command }) => `  ${pid} ${command}\n`).join('')}`);
  await sleep(200);
}

const left = readdirSync(runDir).map((name) => join(runDir, name)).sort();
if (left.length > 0) {
  process.stderr.write(`tests left these in the temporary directory:\n${left.map((path) => `  ${path}\n`).join('')}`);
}
rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });

process.exitCode = code !== 0 ? code : left.length > 0 || processes.length > 0 ? 1 : 0;
