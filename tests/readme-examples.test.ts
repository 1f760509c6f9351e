/**
 * Every example of the docs runs (issues 21 and 40): README.md and every page of docs/, each page
 * in a describe of its own, in that order. Each `oas ...` command of a page's `sh` code blocks,
 * and each `$ oas ...` line of its terminal captures, is run as written by bash (stdin, files and
 * pipes as shown) with `oas` on the PATH, in a folder whose `oas.config.json` points every engine
 * at the loopback fakes, and its exit code is checked. What an example needs from outside
 * (the network, a key, a Redis, a port) is given here, each replacement named in `given`, on
 * whichever page the example is. `npm` lines are the set-up commands: .ci/run and the
 * clean-clone install test run them. A page whose examples need fakes of their own is run by its
 * own test, named in `RUN_ELSEWHERE`.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { startUrlhaus, type UrlhausFake } from './fakes/urlhaus.js';
import * as virustotal from './fakes/virustotal.js';
import { runProcess, type Run } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { freePort, redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { killAtExit, tempDir } from './helpers/temp.js';
import { startWebhookReceiver, type WebhookReceiver } from './fakes/webhook-receiver.js';
import { Webhook } from 'standardwebhooks';
import { startMispPushFake, type MispPushFake } from './fakes/misp-push.js';
import { startOpenCtiPush, type OpenCtiPushFake } from './fakes/opencti-push.js';
import { DEFAULT_KEY as THEHIVE_KEY, startFakeTheHive, type FakeTheHive } from './fakes/thehive.js';

const ROOT = new URL('../../', import.meta.url);
/** A page of the docs, by its path from the repository's root. */
const page = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
/** The pages whose examples another test runs, against fakes of their own, and that test. */
const RUN_ELSEWHERE: Record<string, string> = {
  'docs/custom-engines.md': 'tests/custom-engines-docs.test.ts', // its captures need the URLhaus and MalwareBazaar fakes' data
  'docs/completion.md': 'tests/completion.test.ts', // it writes into HOME, then checks what the installed script proposes
  'docs/doctor.md': 'tests/doctor.test.ts', // its checks need the Shodan and MISP fakes with their keys
  'docs/upgrades.md': 'tests/upgrades.test.ts', // its restore needs the server it backs up to be stopped
};
/** README.md first (its quick start's server serves the later pages' curl examples), then docs/, by name. */
const PAGES = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
/** Where the JSON blocks this test puts in its configuration are shown. */
const ENGINES_PAGE = 'docs/engines.md';
const AUTOMATION_PAGE = 'docs/automation.md';

interface Example {
  /** The page's line (continuations joined), comment removed. */
  command: string;
  /** Its code block, in the page's order. */
  block: number;
  /** For a `$ oas ...` line of a terminal capture: the lines the capture shows it printing. */
  prints?: string[];
}

/** The commands of a page's code blocks that run oas (and the lines they depend on). */
export function readmeExamples(readme: string): Example[] {
  const examples: Example[] = [];
  const blocks = [...readme.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)];
  blocks.forEach((match, block) => {
    const [, indent, lang, body] = match;
    const lines = body!.split('\n').map((line) => line.slice(indent!.length));
    const joined: string[] = [];
    for (const line of lines) {
      const previous = joined.at(-1);
      if (previous?.endsWith('\\')) joined[joined.length - 1] = `${previous.slice(0, -1).trimEnd()} ${line.trim()}`;
      else joined.push(line);
    }
    joined.forEach((raw, index) => {
      const line = lang === 'sh' ? raw.trim() : raw.startsWith('$ ') ? raw.slice(2).trim() : '';
      if (line === '' || line.startsWith('#')) return;
      const command = stripComment(line);
      if (lang !== 'sh') {
        // A terminal capture: what follows the command, up to the next command or the block's end.
        const next = joined.findIndex((other, i) => i > index && other.startsWith('$ '));
        examples.push({ command, block, prints: joined.slice(index + 1, next === -1 ? undefined : next) });
      } else if (/(^|[|;&]\s*|^\S+=\S+\s+)oas\b/.test(command)) examples.push({ command, block });
      else if (/^(export|curl|cat) /.test(command)) examples.push({ command, block });
    });
  });
  return examples;
}

/** The line without its trailing `# comment` (a `#` outside quotes, after a space). */
function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && line[i - 1] === ' ') return line.slice(0, i).trim();
  }
  return line.trim();
}

/** What the examples need from outside, and what this test gives them instead. */
interface Given {
  port8080: number;
  port8081: number;
  redis?: RedisServer;
  securedRedis?: RedisServer;
  token: string;
  config: string;
  analysisId?: string;
}

function given(command: string, g: Given): string {
  let out = command
    .replaceAll('8080', String(g.port8080))
    .replaceAll('8081', String(g.port8081))
    .replaceAll('/etc/oas/oas.config.json', g.config)
    .replace('OAS_API_TOKEN=...', `OAS_API_TOKEN=${g.token}`)
    .replace('ABUSE_CH_AUTH_KEY=...', `ABUSE_CH_AUTH_KEY=${ABUSE_CH_KEY}`);
  if (g.redis) out = out.replaceAll('redis://127.0.0.1:6379', g.redis.url);
  if (g.securedRedis) out = out.replaceAll('redis.internal:6379', `127.0.0.1:${g.securedRedis.port}`);
  if (g.analysisId) out = out.replaceAll('5d0c...', g.analysisId);
  if (soar) out = out.replaceAll('https://soar.example.org', origin(soar));
  return out;
}

const origin = (receiver: WebhookReceiver) => new URL(receiver.url).origin;

/** The `push` setting of the JSON block that shows it ("Automation"), each platform's URL at its loopback fake. */
function readmePush(readme: string): Record<string, unknown> {
  const block = [...readme.matchAll(/^```json\n([\s\S]*?)^```/gm)].map((m) => m[1]!).find((body) => body.includes('"push"'));
  assert.ok(block, `${AUTOMATION_PAGE} shows the push setting`);
  const config = JSON.parse(block) as { push: Record<string, { url: string }> };
  const urls: Record<string, string> = { misp: misp.url, opencti: opencti.url, thehive: thehive.url };
  for (const [target, settings] of Object.entries(config.push)) {
    assert.ok(urls[target], `a fake for the docs' push target ${target}`);
    settings.url = urls[target]!;
  }
  return config;
}

/**
 * The webhook settings of the JSON block that shows them ("Automation"), each endpoint's
 * URL and the callback host at a loopback receiver: `soar` (Standard Webhooks) and `slack`.
 */
function readmeWebhooks(readme: string): Record<string, unknown> {
  const block = [...readme.matchAll(/^```json\n([\s\S]*?)^```/gm)].map((m) => m[1]!).find((body) => body.includes('"webhooks"'));
  assert.ok(block, `${AUTOMATION_PAGE} shows the webhooks setting`);
  const config = JSON.parse(block) as { webhooks: { name: string; url: string }[]; callback_hosts: string[] } & Record<string, unknown>;
  const receivers: Record<string, WebhookReceiver> = { soar, slack };
  for (const webhook of config.webhooks) {
    assert.ok(receivers[webhook.name], `a receiver for the docs' webhook ${webhook.name}`);
    webhook.url = receivers[webhook.name]!.url;
  }
  assert.deepEqual(config.callback_hosts, ['soar.example.org']);
  config.callback_hosts = [new URL(soar.url).host];
  return config;
}

const ABUSE_CH_KEY = 'readme-example-abuse-ch-key-0123456789';

/**
 * The `custom_engines` and `engine_sets` of the JSON block that defines them ("Your own engines"), each
 * request's URL at `origin` instead of URLhaus's public one.
 */
function readmeCustomEngines(readme: string, origin: string): { custom_engines: Record<string, { request: { url: string } }>; engine_sets: Record<string, string[]> } {
  const block = [...readme.matchAll(/^```json\n([\s\S]*?)^```/gm)].map((m) => m[1]!).find((body) => body.includes('"custom_engines"'));
  assert.ok(block, `${ENGINES_PAGE} shows a custom engine`);
  const config = JSON.parse(block) as ReturnType<typeof readmeCustomEngines>;
  for (const definition of Object.values(config.custom_engines)) {
    definition.request.url = definition.request.url.replace('https://urlhaus-api.abuse.ch', origin);
    assert.ok(definition.request.url.startsWith(origin), definition.request.url);
  }
  return { custom_engines: config.custom_engines, engine_sets: config.engine_sets };
}

let upstreams: Upstreams;
let vt: FakeHttpServer;
let urlhaus: UrlhausFake;
/** The docs' webhook endpoints: every request recorded, verified afterwards with the secret the docs export. */
let soar: WebhookReceiver;
let slack: WebhookReceiver;
/** The platforms of "Sending results to MISP, OpenCTI and TheHive". */
let misp: MispPushFake;
let opencti: OpenCtiPushFake;
let thehive: FakeTheHive;
/** The variables the docs' blocks export, as bash gave them. */
const exportedVars: Record<string, string> = {};
/** The analysis the latest example made (its id printed, or answered by the API). */
let lastAnalysisId: string | undefined;
/** The secret the test's own environment holds for the docs' OAS_SOAR_SECRET (a block exports its own). */
const SOAR_SECRET = 'whsec_cmVhZG1lLWV4YW1wbGUtc29hci1zZWNyZXQtMDEyMw==';
let cwd: string;
let shims: string;
let env: Record<string, string>;
const background: ChildProcess[] = [];

before(async () => {
  upstreams = await startUpstreams();
  vt = await startFakeHttp(virustotal.fakeRoutes());
  urlhaus = await startUrlhaus({ key: ABUSE_CH_KEY });
  soar = await startWebhookReceiver({ verify: false });
  slack = await startWebhookReceiver({ verify: false });
  [misp, opencti, thehive] = await Promise.all([startMispPushFake(), startOpenCtiPush(), startFakeTheHive()]);
  // The docs' "oas.config.json" of this folder: every engine at the fakes; VirusTotal's key
  // comes from the environment, as the README's capture says. The custom engine and engine set
  // of "Your own engines" are that page's own JSON, its URL's origin pointed at a loopback
  // URLhaus, its key given as ABUSE_CH_AUTH_KEY; webhooks and push are Automation's JSON.
  cwd = configFor(upstreams, { engines: { provider_24: virustotal.fakeSettings(vt.url) }, ...readmeCustomEngines(page(ENGINES_PAGE), urlhaus.url), ...readmeWebhooks(page(AUTOMATION_PAGE)), ...readmePush(page(AUTOMATION_PAGE)) }).dir;
  shims = tempDir('oas-readme-bin-');
  writeFileSync(join(shims, 'oas'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(shims, 'oas'), 0o755);
  writeFileSync(join(cwd, 'alert.txt'), 'Alert 4711: beacon from 8.8.8.8 to example.com, then hxxps://www[.]example[.]com/login; sample 44d88612fea8a8f36de82e1278abb02f\n');
  writeFileSync(join(cwd, 'big-list.txt'), ['8.8.8.8', '1.1.1.1', 'example.com', 'cyberbro.net', 'hxxp://evil[.]example[.]com/payload.exe'].join('\n'));
  // "Files in": a reported e-mail and a spreadsheet of indicators.
  writeFileSync(join(cwd, 'reported.eml'), [
    'Received: from mx.example.net (mx.example.net [8.8.4.4]) by mail.example.org; Tue, 3 Nov 2026 10:00:00 +0000',
    'Authentication-Results: mail.example.org; spf=fail smtp.mailfrom=example.com; dkim=none; dmarc=fail header.from=example.com',
    'From: "Billing" <billing@example.com>',
    'To: analyst@example.org',
    'Subject: Your invoice',
    'Message-ID: <1234@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Please <a href="https://www.example.com/invoice">View your invoice</a> today.</p>',
    '',
  ].join('\r\n'));
  writeFileSync(join(cwd, 'indicators.csv'), 'host,first_seen,comment\n8.8.8.8,2026-10-01,resolver seen in proxy logs\nwww.example.com,2026-10-02,\nprinter-3,2026-10-02,no observable here\n');
  writeFileSync(join(cwd, 'ioc-list.csv'), 'host,ip\nexample.com,8.8.8.8\ncyberbro.net,1.1.1.1\n');
  env = { PATH: `${shims}:${process.env.PATH ?? ''}`, HOME: cwd, COLUMNS: '100', OAS_VIRUSTOTAL_API_KEY: 'readme-example-vt-key-0123456789', ABUSE_CH_AUTH_KEY: ABUSE_CH_KEY, OAS_SOAR_SECRET: SOAR_SECRET, OAS_PUSH_MISP_API_KEY: misp.key, OAS_PUSH_OPENCTI_TOKEN: opencti.token, OAS_PUSH_THEHIVE_API_KEY: THEHIVE_KEY };
});

after(async () => {
  for (const child of background) child.kill('SIGKILL');
  await Promise.all([upstreams?.close(), vt?.close(), urlhaus?.close(), soar?.close(), slack?.close(), misp?.close(), opencti?.close(), thehive?.close()]);
});

function bash(command: string, extraEnv: Record<string, string>): Promise<Run> {
  return runProcess('bash', ['-c', command], { cwd, env: { ...env, ...extraEnv } });
}

/**
 * A long-running command (`oas serve`, `oas worker`), started and waited for until it is ready.
 * `exec` (after the variables it sets): the process the test stops is oas itself, not a bash around it.
 */
function startLongRunning(command: string, extraEnv: Record<string, string>): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = killAtExit(spawn('bash', ['-c', command.replace(/&$/, '').trim().replace(/^((?:\w+=\S*\s+)*)/, '$1exec ')], { cwd, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] }));
    background.push(child);
    let output = '';
    const timer = setTimeout(() => reject(new Error(`not ready after 20 s: ${command}\n${output}`)), 20_000);
    const onData = (d: Buffer) => {
      output += d;
      if (/listening on http|taking engine jobs/.test(output)) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`));
    });
  });
}

/** SIGTERM, then its exit code ('SIGKILL' when it had to be killed after 15 s, or the signal that ended it). */
async function stopped(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  const exit = new Promise<number | string | null>((done) => child.once('exit', (code, signal) => done(code ?? signal)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  try {
    return await exit;
  } finally {
    clearTimeout(timer);
  }
}

/** A capture's lines as compared: trailing spaces and blank lines off, the analysis id a placeholder. */
const capture = (text: string) => text.trimEnd().split('\n').map((line) => line.trimEnd().replace(/analysis [0-9a-f-]{36}$/, 'analysis <id>'));

const isLongRunning = (command: string) => /\boas (serve|worker)\b/.test(command);

/** The README's quick-start server: it serves every later curl example, on any page. */
let server: { child: ChildProcess; output: () => string } | undefined;

describe('the docs show the commands this test runs', () => {
  const oasCommands = (path: string) => readmeExamples(page(path)).filter((e) => /\boas\b/.test(e.command));

  test('the README has the tour, the pages the rest', () => {
    assert.ok(oasCommands('README.md').length >= 12, `oas commands in README.md: ${oasCommands('README.md').length}`);
    const all = PAGES.filter((path) => !RUN_ELSEWHERE[path]).flatMap(oasCommands);
    assert.ok(all.length >= 60, `oas commands in README.md and docs/: ${all.length}`);
  });

  test('the examples use oas, not npx oas', () => {
    for (const path of PAGES) assert.ok(!/npx oas (analyze|serve)/.test(page(path)), path);
  });

  test('a page run elsewhere is run by the test named', () => {
    for (const [path, runner] of Object.entries(RUN_ELSEWHERE)) {
      assert.ok(PAGES.includes(path), `${path} is a page of docs/`);
      assert.match(page(runner), new RegExp(path.replace('.', '\\.')), `${runner} reads ${path}`);
    }
  });
});

for (const path of PAGES.filter((p) => !RUN_ELSEWHERE[p])) describe(`${path} examples`, () => {
  // One test per code block, its commands in order (a block's server serves the next block's curl).
  const byBlock = new Map<number, Example[]>();
  for (const example of readmeExamples(page(path))) byBlock.set(example.block, [...(byBlock.get(example.block) ?? []), example]);
  const blocks = [...byBlock.values()];

  for (const block of blocks) {
    const needsRedis = block.some((e) => /OAS_REDIS_URL|--redis/.test(e.command));
    const tool = ['jq', 'curl'].find((name) => block.some((e) => new RegExp(`(^|\\| )${name} `).test(e.command)) && spawnSync('sh', ['-c', `command -v ${name}`]).status !== 0);
    const skip = needsRedis && redisSkip ? redisSkip : tool ? `no ${tool} on this machine (the Debian package ${tool}, as .ci/run installs it)` : false;
    const title = block.map((e) => e.command).join(' ; ');
    test(`runs: ${title.length > 150 ? `${title.slice(0, 150)}…` : title}`, { skip }, async () => {
      // `5d0c...` names the analysis an earlier example made, in this block or before.
      const g: Given = { port8080: await freePort(), port8081: await freePort(), token: 'readme-example-token-Vb7Qx2Lm9Tz4Rw8K', config: join(cwd, 'oas.config.json'), ...(lastAnalysisId ? { analysisId: lastAnalysisId } : {}) };
      if (block.some((e) => e.command.includes('redis://127.0.0.1:6379'))) g.redis = await startRedis();
      if (block.some((e) => e.command.includes('redis.internal'))) g.securedRedis = await startRedis({ requirepass: 'the-redis-password' });
      const blockEnv: Record<string, string> = {};
      const started: ChildProcess[] = [];
      try {
        for (const example of block) {
          const command = given(example.command, g);
          const exported = /^export (\w+)=(.*)$/.exec(command);
          if (exported) {
            blockEnv[exported[1]!] = (await bash(`printf %s ${exported[2]}`, {})).stdout;
            exportedVars[exported[1]!] = blockEnv[exported[1]!]!;
            continue;
          }
          if (isLongRunning(command)) {
            const running = await startLongRunning(command, blockEnv);
            started.push(running.child);
            // The quick start's server (the first in the foreground) serves every later curl example.
            if (/oas serve/.test(command) && !command.endsWith('&') && !server) server = running;
            continue;
          }
          if (command.startsWith('curl')) {
            // The curl examples follow the README's server example: aim them at it.
            assert.ok(server || !example.command.includes('localhost:8080'), `the README's server runs before ${path}'s ${command}`);
            const port = server ? /listening on http:\/\/[^:]+:(\d+)/.exec(server.output())![1]! : '';
            const ran = await bash(given(command, g).replaceAll(`localhost:${g.port8080}`, `127.0.0.1:${port}`), blockEnv);
            assert.equal(ran.code, 0, `${command}\n${ran.stderr}`);
            const id = /"analysis_id":"([^"]+)"/.exec(ran.stdout)?.[1];
            if (id) g.analysisId = lastAnalysisId = id;
            if (command.includes('/api/results/')) assert.match(ran.stdout, /"observable": "example\.com"/);
            if (command.includes('callback_url')) assert.ok(id, `the callback example is accepted: ${ran.stdout}`);
            if (command.includes('/api/watchlists')) assert.match(ran.stdout, /"name":"partners"/);
            if (command.includes('/push')) assert.match(ran.stdout, /"target":"misp"/);
            // MISP's enrichment (issue 39): the modules MISP lists, and a query's answer in the simple form.
            if (command.includes('/modules')) assert.match(ran.stdout, /^\[\{"name":"oas","type":"expansion"/);
            if (command.includes('/query')) assert.match(ran.stdout, /^\{"results":\[\{"types":\["text"\],"values":\["oas verdict: /);
            // The Cortex API (issue 39): the analyzers of a data type, a job run (its id the next example's), its report.
            if (command.includes('/cortex/api/analyzer/type/')) assert.match(ran.stdout, /^\[\{"id":"oas_Verdict_1_0"/);
            if (command.includes('/cortex/api/analyzer/oas_Verdict_1_0/run')) {
              const job = /^\{"id":"([0-9a-f-]{36})".*"analyzerId":"oas_Verdict_1_0"/.exec(ran.stdout)?.[1];
              assert.ok(job, ran.stdout);
              g.analysisId = lastAnalysisId = job;
            }
            if (command.includes('/waitreport')) assert.match(ran.stdout, /"status":"Success".*"report":\{"summary":\{"taxonomies":\[\{"level":"\w+","namespace":"oas","predicate":"Verdict"/);
            continue;
          }
          // A terminal capture is a reader's first run: a data directory of its own, so that the
          // earlier examples' analyses of the same observables add no "seen" line (issue 38).
          const ran = await bash(command, example.prints ? { ...blockEnv, OAS_DATA_DIR: tempDir('oas-readme-capture-') } : blockEnv);
          assert.equal(ran.code, 0, `${command}\nstdout: ${ran.stdout.slice(0, 2000)}\nstderr: ${ran.stderr}`);
          // The analysis a command made is the one the block's later `5d0c...` examples name.
          const made = /analysis ([0-9a-f-]{36})/.exec(ran.stdout)?.[1];
          if (made) g.analysisId = lastAnalysisId = made;
          assert.doesNotMatch(ran.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
          // A terminal capture shows what the command prints, as it prints it (the analysis id aside).
          if (example.prints) assert.deepEqual(capture(ran.stdout), capture(example.prints.join('\n')), `${path}'s capture of ${command}`);
        }
        // Written files exist and are what they say.
        for (const example of block) {
          const output = /(?:-o|>)\s*(\S+\.(?:json|csv|xlsx))/.exec(example.command)?.[1];
          if (output) assert.ok(existsSync(join(cwd, output)), `${example.command} wrote ${output}`);
          if (output === 'bundle.json') {
            const bundle = JSON.parse(readFileSync(join(cwd, output), 'utf8')) as { type: string; objects: { type: string; value?: string }[] };
            assert.equal(bundle.type, 'bundle');
            assert.ok(bundle.objects.some((o) => o.type === 'url' && o.value === 'http://evil.example.com/payload.exe'), 'the STIX example holds its URL');
          }
        }
      } finally {
        // Every process is stopped and every Redis closed before any exit code is judged.
        const exits = [];
        for (const child of started) {
          if (child === server?.child) continue; // serves the next block's curl examples
          exits.push(await stopped(child));
        }
        await Promise.all([g.redis?.close(), g.securedRedis?.close()]);
        for (const code of exits) assert.equal(code, 0, 'stops cleanly on SIGTERM');
      }
    });
  }

});

describe('what the examples did', () => {
  test('"Your own engines" ran with its JSON in the folder\'s oas.config.json, as the page says', () => {
    const file = JSON.parse(readFileSync(join(cwd, 'oas.config.json'), 'utf8')) as Record<string, unknown>;
    const shown = readmeCustomEngines(page(ENGINES_PAGE), urlhaus.url);
    assert.deepEqual(file['custom_engines'], shown.custom_engines);
    assert.deepEqual(file['engine_sets'], shown.engine_sets);
    assert.match(page(ENGINES_PAGE), /It goes in the configuration file: `oas\.config\.json` in the folder you run oas from/);
  });

  test('the engine set of "Your own engines" ran its custom engine, a form POST with the key', () => {
    const calls = urlhaus.server.hits('POST /v1/host/');
    assert.ok(calls.length > 0, 'oas analyze --set triage called the custom engine');
    for (const call of calls) assert.equal(call.headers['auth-key'], ABUSE_CH_KEY);
    assert.ok(calls.some((call) => new URLSearchParams(call.body).get('host') === 'example.com'));
  });

  test('"Automation": each webhook got its ping, signed with the secret the page exports; the callback its analysis, signed with the server\'s', async () => {
    /** The delivery's signature, as the Standard Webhooks library computes it with `secret` (its timestamp as sent: the check of age is the receiver's). */
    const signedWith = (secret: string, request: { headers: Record<string, string | string[] | undefined>; body: string }) =>
      new Webhook(secret).sign(String(request.headers['webhook-id']), new Date(Number(request.headers['webhook-timestamp']) * 1000), request.body) === request.headers['webhook-signature'];
    const secret = exportedVars['OAS_SOAR_SECRET'] ?? '';
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the docs\' export makes a whsec_ secret of 32 random bytes');
    const pings = soar.received.filter((r) => (r.json as { type?: string } | undefined)?.type === 'ping');
    assert.equal(pings.length, 1, 'oas webhooks test soar sent one ping');
    assert.ok(signedWith(secret, pings[0]!), 'the ping is signed with the exported secret');
    assert.ok(slack.received.some((r) => JSON.stringify(r.json).includes('oas: test delivery') && Array.isArray((r.json as { blocks?: unknown }).blocks)), 'oas webhooks test slack sent a Block Kit message');
    const [callback] = (await soar.until((all) => all.some((r) => r.path === '/hooks/run-42'))).filter((r) => r.path === '/hooks/run-42');
    assert.equal((callback!.json as { type: string }).type, 'analysis.completed');
    assert.ok(signedWith(SOAR_SECRET, callback!), 'the callback is signed with callback_secret_env\'s secret');
    assert.equal(soar.received.filter((r) => r.path !== '/hooks/run-42' && !signedWith(SOAR_SECRET, r) && !signedWith(secret, r)).length, 0, 'every delivery to soar is signed');
  });

  test('"Sending results": oas analyze --push misp, oas push thehive and opencti, and the API reached the platforms', () => {
    assert.ok(misp.events.length >= 1 || opencti.observables.length >= 1, 'something was pushed');
    assert.ok(opencti.observables.length >= 1, 'oas push opencti --all made observables');
    assert.ok(misp.events.length >= 1, 'POST /api/analyses/<id>/push made a MISP event');
  });

  test('the server of the quick start stops cleanly', async () => {
    if (server) assert.equal(await stopped(server.child), 0);
  });
});
