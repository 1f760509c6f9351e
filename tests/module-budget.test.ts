/**
 * Start-up budgets (issue 33): for each CLI command, the modules it loads, recorded from Node's
 * own module loading (an `--import` hook: every ES module resolved, every CommonJS module in
 * require.cache at exit), compared with the budget written below. Nothing here is timed: the
 * count of modules a command loads is what its start-up time follows, and it does not vary from
 * run to run. A change that pulls the server, MCP, Redis, exceljs, prom-client, cheerio or undici
 * into `oas --version` or a cached lookup fails here; so does any new package at a command's
 * start, and any growth of our own modules past the budget. A change that needs more says so by
 * raising the budget, in the same commit.
 *
 * `ours`: modules of dist/src and dist/engines, at most. `packages`: the npm packages loaded,
 * exactly. Every local command also stays clear of NEVER.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runOas, type Run } from './helpers/cli.js';
import { moduleRecorder } from './helpers/module-log.js';
import { tempDir } from './helpers/temp.js';
import { oneEngineConfig, startUpstreams, type Upstreams } from './helpers/upstreams.js';

interface Budget {
  /** The command's words; `CONFIG` stands for the test's configuration file. */
  args: string[];
  /** Runs before the measured one (same folder and cache): filling the engine cache, the declarations. */
  warm?: number;
  ours: number;
  packages: string[];
}

/** The packages of the SQLite store and engine cache. */
const STORE = ['@keyv/serialize', '@keyv/sqlite', 'bindings', 'file-uri-to-path', 'keyv', 'sqlite3'];
/** cli-table3 and what it loads. */
const TABLE = ['ansi-regex', 'cli-table3', 'emoji-regex', 'is-fullwidth-code-point', 'string-width', 'strip-ansi'];

// src/text/inert.ts (issue 34: what is written from outside is inert) is one module more for the
// commands that write an engine's, a configuration's or a user's text: engines, analyze, users.
// src/marking/levels.ts (issue 34: the TLP and PAP levels the configuration's default_tlp,
// default_pap and engines.<id>.max_tlp are checked against) is one more for every command that
// reads the configuration; src/marking/policy.ts (whether an engine may be sent an observable,
// asked by the runner before each call) one more for an analysis.
// Issue 38: an analysis reads what the team already knows as it starts (src/analysis/knowledge.ts,
// over the team lists of src/store/team-lists.ts) and the earlier analyses that held its
// observables (src/analysis/seen.ts, over src/store/seen.ts): four modules more for an analysis.
const BUDGETS: Budget[] = [
  // Answered by bin/oas.js from package.json: not even commander.
  { args: ['--version'], ours: 0, packages: [] },
  { args: ['-V'], ours: 0, packages: [] },
  { args: ['--help'], ours: 3, packages: ['commander'] },
  // The catalog from the engines' cached declarations (the first run imports the engines).
  { args: ['engines', '--json'], warm: 1, ours: 17, packages: ['commander', 'valibot'] },
  { args: ['engines'], warm: 1, ours: 18, packages: ['commander', 'valibot', ...TABLE] },
  { args: ['analyze', '--help'], warm: 1, ours: 16, packages: ['commander', 'valibot'] },
  // A lookup answered from the cache: no HTTP client (undici), no server, no spinner.
  { args: ['analyze', '1.1.1.1', '-e', 'ipquery', '--json', '--config', 'CONFIG'], warm: 1, ours: 60, packages: ['commander', 'ipaddr.js', 'valibot', ...STORE] },
  { args: ['analyze', '1.1.1.1', '-e', 'ipquery', '--config', 'CONFIG'], warm: 1, ours: 61, packages: ['commander', 'ipaddr.js', 'valibot', ...STORE, ...TABLE] },
  { args: ['analyze', '1.1.1.1', '-e', 'ipquery', '-f', 'csv', '--config', 'CONFIG'], warm: 1, ours: 62, packages: ['commander', 'ipaddr.js', 'valibot', ...STORE] },
  { args: ['users', 'list', '--json', '--config', 'CONFIG'], warm: 1, ours: 20, packages: ['commander', 'valibot', ...STORE] },
  // What a completion script asks at each TAB on --engines or --set (issue 40): the catalog from the
  // cached declarations and the configuration, nothing of the script writers.
  { args: ['completion', '--list', 'engines', '--config', 'CONFIG'], warm: 1, ours: 17, packages: ['commander', 'valibot'] },
];

/** What no local command loads: the server, MCP, Redis and the queue, the heavy exports, the scraper, the HTTP client. */
const NEVER_PACKAGES = ['hono', '@hono/node-server', '@modelcontextprotocol/sdk', 'ioredis', 'bullmq', 'exceljs', 'prom-client', 'cheerio', 'undici', 'ora', 'rate-limiter-flexible', 'cytoscape'];
const NEVER_OURS = [/\/dist\/src\/server\//, /\/dist\/src\/mcp\//, /\/dist\/src\/scale\//, /\/dist\/src\/cli\/(remote|serve|worker|mcp)\.js$/];

const dir = tempDir('oas-budget-');
const recorder = moduleRecorder(dir);
let upstreams: Upstreams;
let config: string;
before(async () => {
  upstreams = await startUpstreams();
  config = oneEngineConfig(upstreams);
});
after(() => upstreams.close());

let runs = 0;
async function recorded(home: string, args: string[]): Promise<Run & { modules: string[] }> {
  const log = join(dir, `modules-${++runs}.log`);
  const run = await runOas(home, args, { nodeArgs: recorder.nodeArgs, env: { ...recorder.env(log), XDG_CACHE_HOME: join(home, 'cache'), HOME: home } });
  return { ...run, modules: recorder.read(log) };
}

/** The package a module belongs to (`@scope/name` or `name`), or undefined for ours and Node's. */
function packageOf(module: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module);
  return match?.[1];
}

const ours = (modules: readonly string[]) => [...new Set(modules.filter((m) => !m.includes('/node_modules/') && /\/dist\/(src|engines)\//.test(m)))].sort();
const packages = (modules: readonly string[]) => [...new Set(modules.map(packageOf).filter((p): p is string => p !== undefined))].sort();

describe('start-up budgets: the modules each command loads', () => {
  for (const budget of BUDGETS) {
    const words = budget.args.join(' ');
    test(`oas ${words}`, async () => {
      const home = mkdtempSync(join(dir, 'home-'));
      const args = budget.args.map((a) => (a === 'CONFIG' ? config : a));
      for (let i = 0; i < (budget.warm ?? 0); i++) assert.equal((await recorded(home, args)).code, 0);
      // A build meanwhile (tsc rewrites every file of dist/) makes the engines' cached declarations
      // stale, and the next run imports every engine once: up to two more runs, the leanest counts.
      let run = await recorded(home, args);
      for (let i = 0; i < 2 && ours(run.modules).length > budget.ours; i++) {
        const again = await recorded(home, args);
        if (ours(again.modules).length < ours(run.modules).length) run = again;
      }
      assert.equal(run.code, 0, run.stderr);
      assert.ok(run.modules.some((m) => m.endsWith('/bin/oas.js')), 'the hook records modules');
      const own = ours(run.modules);
      const loaded = packages(run.modules);
      assert.deepEqual(loaded.filter((p) => NEVER_PACKAGES.includes(p)), [], `oas ${words} loads none of ${NEVER_PACKAGES.join(', ')}`);
      assert.deepEqual(own.filter((m) => NEVER_OURS.some((r) => r.test(m))), [], `oas ${words} loads no server, MCP, Redis or remote module`);
      assert.deepEqual(loaded, [...budget.packages].sort(), `oas ${words}: the packages it loads`);
      assert.ok(own.length <= budget.ours, `oas ${words} loads ${own.length} modules of ours, over its budget of ${budget.ours}:\n${own.map((m) => m.replace(/.*\/dist\//, '')).join('\n')}`);
    });
  }
});
