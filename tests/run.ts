/**
 * `npm test`: runs `node --test` on the test files under dist/tests/ (or on ARGS when given paths;
 * a directory among them stands for its test files) with TMPDIR
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
 * Two test files run at once (OAS_TEST_CONCURRENCY). The exit code is the test runner's, or 1
 * when something was left. Nothing is added to standard
 * output, whose last lines are the runner's summary.
 *
 * Not a test file: node's runner only takes `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
 * `test.js` and files under a `test` folder, so `node --test dist/tests/` leaves this one alone.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The test files under a directory, found as Node 20's runner finds them (`*.test.js`, `*-test.js`,
 * `*_test.js`, `test-*.js`, `test.js`, and any file under a `test` folder). Node 22 and 24 read a
 * path given to `--test` as a glob that names files, and a directory as no test at all (the run
 * fails with MODULE_NOT_FOUND), so a directory is expanded here, the same way on every Node.
 */
function testFiles(dir: string, underTest = false): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path, underTest || entry.name === 'test');
      const isTest = /\.[cm]?js$/.test(entry.name)
        && (underTest || /(^|[.\-_])test\.[cm]?js$/.test(entry.name) || /^test-.*\.[cm]?js$/.test(entry.name));
      return entry.isFile() && isTest ? [path] : [];
    });
}

const isDirectory = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();
const args = process.argv.slice(2);
const given = args.some((arg) => !arg.startsWith('-')) ? args : [...args, 'dist/tests/'];
const testArgs = given.flatMap((arg) => (!arg.startsWith('-') && isDirectory(arg) ? testFiles(arg) : [arg]));

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

/**
 * Test files run side by side: 2 unless OAS_TEST_CONCURRENCY says otherwise (`--test-concurrency`
 * given wins). Node's own default is one less than the cores, which is one file at a time on the
 * 2-core machines CI runs on; most files wait on the processes and servers they start, so two at
 * once took the whole suite from about 15 to about 10 minutes there.
 */
const concurrency = given.some((arg) => arg.startsWith('--test-concurrency')) ? [] : [`--test-concurrency=${process.env.OAS_TEST_CONCURRENCY ?? '2'}`];
const child = spawn(process.execPath, ['--test', ...concurrency, ...testArgs], {
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

// Node's compile cache (on Node 22.1 and later, `oas` keeps its compiled modules in
// os.tmpdir()/node-compile-cache: bin/oas.js) is Node's own, not something a test left behind.
const left = readdirSync(runDir).filter((name) => name !== 'node-compile-cache').map((name) => join(runDir, name)).sort();
if (left.length > 0) {
  process.stderr.write(`tests left these in the temporary directory:\n${left.map((path) => `  ${path}\n`).join('')}`);
}
rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });

process.exitCode = code !== 0 ? code : left.length > 0 || processes.length > 0 ? 1 : 0;
