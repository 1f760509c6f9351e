/**
 * The exports where users meet them: the `/export/<id>?format=` route (formats, headers, 400 with
 * the list, 404, 409 until complete; the API's own results unchanged) and `oas analyze --format
 * --output` (every format, xlsx refused without a file or to a terminal, jsonl printing each
 * observable as it finishes, the remote mode). Loopback only; no timing assertion: the jsonl test
 * holds one upstream answer until the first line has been read.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { createApp, type App } from '../src/app.js';
import { outputChoice } from '../src/cli/output.js';
import { UsageError } from '../src/cli/errors.js';
import { CSV_COLUMNS } from '../src/export/csv.js';
import { listen, type RunningServer } from '../src/server/listen.js';
import { dohHandler } from './fakes/doh.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { BIN, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, ZONE, type Upstreams } from './helpers/upstreams.js';

const cwd = tempDir('oas-export-');
const oas = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> => runOas(cwd, args, options);

/** A DNS-over-HTTPS upstream whose answers about www.example.com wait until `release()`. */
function gatedDoh(): Promise<FakeHttpServer & { release(): void; held(): number }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const answer = dohHandler(ZONE);
  return startFakeHttp({
    'GET /resolve': async (req) => {
      if (req.query.get('name')?.startsWith('www.example.com')) {
        held++;
        await gate;
      }
      return answer(req);
    },
  }).then((server) => Object.assign(server, { release, held: () => held }));
}

let upstreams: Upstreams;
let config: ReturnType<typeof configFor>;
let app: App;
let server: RunningServer;
let gated: Awaited<ReturnType<typeof gatedDoh>>;

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams);
  gated = await gatedDoh();
  const appConfig = configFor(upstreams, { engines: { public_dns: { base_url: `${gated.url}/resolve` } } });
  app = await createApp({ file: appConfig.file, flags: { port: 0 }, env: {} });
  server = await listen(app);
});
after(async () => {
  gated?.release();
  await server?.close();
  await app?.close();
  await gated?.close();
  await upstreams?.close();
});

const analyze = (text: string, engines: string[]): Promise<string> => startAnalysis(server.url, text, engines);

const get = (path: string) => fetch(`${server.url}${path}`);

async function loadWorkbook(bytes: Buffer): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ExcelJS.Buffer);
  return workbook;
}

describe('/export/<id>?format=', () => {
  let id: string;
  before(async () => {
    id = await analyze('example.com 8.8.8.8', ['reverse_dns', 'rdap_whois']);
    await app.analyses.idle();
  });

  test('every format: its type, its file name, its content', async () => {
    const expected: Record<string, [RegExp, string]> = {
      csv: [/^text\/csv/, 'csv'],
      json: [/^application\/json/, 'json'],
      xlsx: [/^application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet$/, 'xlsx'],
      stix: [/^application\/stix\+json;version=2\.1/, 'stix.json'],
      misp: [/^application\/json/, 'misp.json'],
    };
    for (const [format, [type, extension]] of Object.entries(expected)) {
      const res = await get(`/export/${id}?format=${format}`);
      assert.equal(res.status, 200, format);
      assert.match(res.headers.get('content-type')!, type, format);
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="oas-${id}.${extension}"`);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const body = Buffer.from(await res.arrayBuffer());
      if (format === 'csv') {
        const lines = body.toString('utf8').trimEnd().split('\r\n');
        assert.equal(lines[0], CSV_COLUMNS.join(','));
        assert.ok(lines.slice(1).every((l) => /,(malicious|suspicious|clean|unknown),[^,]*,TLP:AMBER,$/.test(l)), lines.join('\n'));
      } else if (format === 'xlsx') {
        const workbook = await loadWorkbook(body);
        assert.deepEqual(workbook.worksheets.map((s) => s.name), ['Observables', 'reverse_dns', 'rdap_whois']);
        // The first line says the marking (the defaults), the column names follow.
        assert.equal(workbook.getWorksheet('Observables')!.getRow(1).getCell(1).value, 'TLP:AMBER · PAP:GREEN');
        assert.equal(workbook.getWorksheet('Observables')!.getRow(3).getCell(1).value, 'example.com');
      } else if (format === 'json') {
        const elements = JSON.parse(body.toString('utf8')) as { observable: string; verdict: string }[];
        assert.deepEqual(elements.map((e) => [e.observable, e.verdict]), [['example.com', 'unknown'], ['8.8.8.8', 'unknown']]);
      } else if (format === 'stix') {
        const bundle = JSON.parse(body.toString('utf8')) as { type: string; objects: { type: string; value?: string }[] };
        assert.equal(bundle.type, 'bundle');
        assert.deepEqual(bundle.objects.filter((o) => o.value).map((o) => `${o.type}:${o.value}`), ['domain-name:example.com', 'ipv4-addr:8.8.8.8']);
      } else {
        const event = (JSON.parse(body.toString('utf8')) as { Event: { Attribute: { type: string; value: string }[] } }).Event;
        assert.deepEqual(event.Attribute.map((a) => `${a.type}:${a.value}`), ['domain:example.com', 'ip-dst:8.8.8.8']);
      }
    }
    // The API's own results keep the spec's format: no verdict there.
    const results = (await (await get(`/api/results/${id}`)).json()) as Record<string, unknown>[];
    assert.ok(results.every((r) => !('verdict' in r) && !('reasons' in r)));
  });

  test('anything else is a 400 listing the formats; unknown 404; incomplete 409 until it completes', async () => {
    for (const query of ['format=pdf', 'format=', 'format=CSV', 'format=csv&format=json']) {
      const res = await get(`/export/${id}?${query}`);
      assert.equal(res.status, 400, query);
      const { error } = (await res.json()) as { error: string };
      if (!query.includes('&')) assert.equal(error, '"format" must be one of: csv, json, xlsx, stix, misp');
    }
    assert.equal((await get('/export/00000000-0000-4000-8000-000000000000?format=stix')).status, 404);
    assert.equal((await get('/export/not-an-id?format=misp')).status, 404);

    const running = await analyze('www.example.com', ['public_dns']);
    const early = await get(`/export/${running}?format=xlsx`);
    assert.equal(early.status, 409);
    assert.match(((await early.json()) as { error: string }).error, /not complete/);
    gated.release();
    await app.analyses.idle();
    assert.equal((await get(`/export/${running}?format=xlsx`)).status, 200);
  });
});

describe('oas analyze --format / --output', () => {
  const base = ['analyze', 'example.com 8.8.8.8', '--engines', 'reverse_dns'];

  test('json (and --json), csv, stix and misp on standard output', async () => {
    const [json, legacy, csv, stix, misp] = await Promise.all([
      oas([...base, '--format', 'json', '--config', config.file]),
      oas([...base, '--json', '--config', config.file]),
      oas([...base, '--format', 'csv', '--config', config.file]),
      oas([...base, '-f', 'stix', '--config', config.file]),
      oas([...base, '--format', 'misp', '--config', config.file]),
    ]);
    for (const run of [json, legacy, csv, stix, misp]) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
    }
    // Seen before (issue 38) set apart: the five runs go side by side, so whether one counts
    // another depends on which looked first.
    const unseen = (text: string) => (JSON.parse(text) as Record<string, unknown>[]).map(({ seen: _seen, ...rest }) => rest);
    assert.deepEqual(unseen(json.stdout), unseen(legacy.stdout), '--json is --format json');
    assert.deepEqual((JSON.parse(json.stdout) as { verdict: string }[]).map((r) => r.verdict), ['unknown', 'unknown']);
    const lines = csv.stdout.trimEnd().split('\r\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.ok(lines.includes('8.8.8.8,IPv4,,reverse_dns,ok,dns.google,"{""reverse_dns"":[""dns.google""]}",unknown,,TLP:AMBER,'), csv.stdout);
    assert.equal((JSON.parse(stix.stdout) as { type: string }).type, 'bundle');
    assert.equal((JSON.parse(misp.stdout) as { Event: { Attribute: unknown[] } }).Event.Attribute.length, 2);
  });

  test('jsonl: one line per observable, each printed as soon as it is done', { timeout: 120_000 }, async () => {
    const doh = await gatedDoh();
    const slow = configFor(upstreams, { engines: { public_dns: { base_url: `${doh.url}/resolve` } } });
    try {
      const child = spawn(process.execPath, [BIN, 'analyze', 'example.com www.example.com', '--engines', 'public_dns', '--format', 'jsonl', '--config', slow.file], {
        cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // The first line comes while www.example.com's answers are still held upstream.
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (d) => {
          stdout += d;
          if (stdout.includes('\n')) resolve();
        });
      });
      const [first] = stdout.split('\n');
      assert.equal((JSON.parse(first!) as { observable: string }).observable, 'example.com');
      assert.ok(doh.held() > 0, 'www.example.com is still waiting for its answers');
      doh.release();
      assert.equal(await exited, 0, stderr);
      const lines = stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { observable: string; verdict: string; reasons: string[]; public_dns: unknown });
      assert.deepEqual(lines.map((l) => l.observable), ['example.com', 'www.example.com']);
      for (const line of lines) {
        assert.equal(line.verdict, 'unknown');
        assert.deepEqual(line.reasons, []);
        assert.ok(line.public_dns, 'the engine result is there');
      }
    } finally {
      doh.release();
      await doh.close();
    }
  });

  test('--output FILE: the output goes to the file, nothing to standard output', async () => {
    const dir = tempDir('oas-output-');
    const xlsx = join(dir, 'out.xlsx');
    const table = join(dir, 'table.txt');
    const misp = join(dir, 'event.json');
    writeFileSync(misp, 'old content, longer than nothing');
    const runs = await Promise.all([
      oas([...base, '--format', 'xlsx', '--output', xlsx, '--config', config.file]),
      oas([...base, '--output', table, '--config', config.file]),
      oas([...base, '--format', 'misp', '-o', misp, '--config', config.file]),
    ]);
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, '');
    }
    const workbook = await loadWorkbook(readFileSync(xlsx));
    assert.deepEqual(workbook.worksheets.map((s) => s.name), ['Observables', 'reverse_dns']);
    const main = workbook.getWorksheet('Observables')!;
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => main.getRow(4).getCell(n).text), ['8.8.8.8', 'IPv4', '', 'unknown', '', '', 'dns.google']);
    const text = readFileSync(table, 'utf8');
    assert.match(text, /8\.8\.8\.8/);
    assert.match(text, /2 observable\(s\), 1 engine\(s\)/);
    assert.doesNotMatch(text, /\u001b\[/, 'no colours in a file');
    assert.equal((JSON.parse(readFileSync(misp, 'utf8')) as { Event: { Attribute: unknown[] } }).Event.Attribute.length, 2, 'the file is replaced');
  });

  test('xlsx to a pipe with --output -', async () => {
    const child = spawn(process.execPath, [BIN, ...base, '--format', 'xlsx', '--output', '-', '--config', config.file], {
      cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const parts: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => parts.push(d));
    assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0);
    const bytes = Buffer.concat(parts);
    assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK', 'a zip file');
    assert.equal((await loadWorkbook(bytes)).worksheets.length, 2);
  });

  test('usage errors (exit 2, one line, nothing run): format, --json with another format, xlsx without a file, an unwritable file', async () => {
    const dir = tempDir('oas-usage-');
    const cases: [string[], RegExp][] = [
      [['--format', 'pdf'], /^oas: --format must be one of: table, json, jsonl, csv, xlsx, stix, misp \(not "pdf"\)\n$/],
      [['--json', '--format', 'csv'], /^oas: --json is --format json: give --format csv or --json, not both\n$/],
      [['--format', 'xlsx'], /^oas: --format xlsx writes a binary workbook: give --output FILE \(or --output - to send it to a pipe\)\n$/],
      [['--format', 'csv', '--output', join(dir, 'missing', 'out.csv')], /^oas: --output .*out\.csv: cannot write it \(ENOENT\)\n$/],
      [['--output', ''], /^oas: --output needs a file name/],
    ];
    for (const [args, message] of cases) {
      const data = join(dir, `data-${args.join('')}`.replace(/[^\w-]/g, '_'));
      const run = await oas([...base, ...args, '--config', config.file, '--data-dir', data]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, '');
      noStack(run.stderr);
      // Flags are checked before anything opens the data directory (no quota spent).
      if (!args.includes('csv')) assert.ok(!existsSync(data), `${args.join(' ')}: nothing ran`);
    }
  });

  test('xlsx is never written to a terminal', async (t) => {
    assert.throws(() => outputChoice({ format: 'xlsx', output: '-' }, true), (e: Error) => e instanceof UsageError && /refusing to write a binary workbook to a terminal/.test(e.message));
    assert.deepEqual(outputChoice({ format: 'xlsx', output: '-' }, false), { format: 'xlsx', file: undefined });
    assert.deepEqual(outputChoice({ json: true }, true), { format: 'json', file: undefined });
    assert.deepEqual(outputChoice({}, true), { format: 'table', file: undefined });
    // Through a real pseudo-terminal, when util-linux's script(1) is there.
    if (spawnSync('script', ['--version']).status !== 0) {
      t.skip('script(1) not installed: no pseudo-terminal to test with');
      return;
    }
    const command = [process.execPath, BIN, ...base, '--format', 'xlsx', '--output', '-', '--config', config.file].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const run = spawnSync('script', ['-qec', command, '/dev/null'], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, encoding: 'utf8' });
    assert.equal(run.status, 2, run.stdout + run.stderr);
    assert.match(run.stdout, /refusing to write a binary workbook to a terminal/);
    assert.doesNotMatch(run.stdout, /PK/);
  });
});

describe('oas analyze --server --format', () => {
  let serve: ServeProcess;
  before(async () => {
    serve = await spawnServe(config.file, { cwd });
  });
  after(() => serve?.stop());

  test('the remote mode writes the same formats, verdicts included', async () => {
    // With --tlp and --pap the remote mode knows the marking and writes it as the local mode does.
    const remote = ['analyze', 'example.com 8.8.8.8', '--engines', 'reverse_dns', '--tlp', 'AMBER', '--pap', 'GREEN', '--server', serve.url];
    const [misp, jsonl, csv, json] = await Promise.all([
      oas([...remote, '--format', 'misp']),
      oas([...remote, '--format', 'jsonl']),
      oas([...remote, '--format', 'csv']),
      oas([...remote, '--format', 'json']),
    ]);
    for (const run of [misp, jsonl, csv, json]) assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((JSON.parse(misp.stdout) as { Event: { Attribute: { type: string }[] } }).Event.Attribute.map((a) => a.type), ['domain', 'ip-dst']);
    assert.deepEqual(jsonl.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { verdict: string }).verdict), ['unknown', 'unknown']);
    assert.equal(csv.stdout.split('\r\n')[0], CSV_COLUMNS.join(','));
    const local = await oas(['analyze', 'example.com 8.8.8.8', '--engines', 'reverse_dns', '--format', 'json', '--config', config.file]);
    // Seen before (issue 38) says what the store held before each run: the local run, after these
    // four on the same store, counts them. The rest is the same.
    type Seen = { count: number } | null;
    const remoteResults = JSON.parse(json.stdout) as { seen: Seen }[];
    const localResults = JSON.parse(local.stdout) as { seen: Seen }[];
    localResults.forEach((result, i) => assert.ok((result.seen?.count ?? 0) > (remoteResults[i]!.seen?.count ?? 0), 'the local run counts the remote ones'));
    const unseen = (list: { seen: Seen }[]) => list.map(({ seen: _seen, ...rest }) => rest);
    assert.deepEqual(unseen(remoteResults), unseen(localResults), 'the same JSON as the local mode');
  });
});
