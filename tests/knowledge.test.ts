/**
 * Issue 38, what the team already knows, through the CLI (subprocesses) and the API (`oas serve`
 * as a subprocess on the same data_dir, its users and roles), against an engine of the test that
 * records what it is asked and judges by a score:
 * - the allowlist at run time: `oas allow add/list/remove`, GET/POST /api/allowlist, DELETE
 *   /api/allowlist/<value> (URL-encoded); an allowlisted CIDR, wildcard domain and hash reach no
 *   engine; an expired entry no longer applies; the configuration's entries are listed (by config)
 *   and cannot be removed at run time; authors `cli:<account>` and the signed-in user;
 * - marks: `oas mark`, `oas mark --remove`, `oas marks`, GET/POST /api/marks, DELETE
 *   /api/marks/<value>; a mark decides the verdict of later analyses (shown with its author, date
 *   and note), the engines' verdict kept as computed_verdict; false_positive is clean with the
 *   engines' verdict struck through; an expired mark no longer applies; earlier analyses are not
 *   rewritten;
 * - roles (viewers read, analysts change: 403 naming the role) and the audit lines of every change.
 * No timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { BIN, spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const EICAR = '44d88612fea8a8f36de82e1278abb02f';
const ME = `cli:${userInfo().username}`;

interface Row {
  observable: string;
  verdict: string;
  reasons: string[];
  computed_verdict?: { verdict: string; reasons: string[] };
  mark?: Record<string, unknown>;
  intel: unknown;
  withheld?: Record<string, string>;
  allowlisted?: Record<string, unknown>;
}

describe('what the team already knows: allowlist and marks', { timeout: 180_000 }, () => {
  let upstreams: Upstreams;
  let intel: FakeHttpServer;
  let dir: string;
  let file: string;
  let auditFile: string;
  let server: ServeProcess | undefined;
  const tokens = new Map<string, string>();

  before(async () => {
    upstreams = await startUpstreams();
    // 185.220.101.0/24 scores 95 (malicious); everything else 10 (clean).
    intel = await startFakeHttp({ 'GET /intel/*': (req) => ({ json: { score: req.path.includes('185.220.101.') ? 95 : 10 } }) });
    const config = configFor(upstreams, {
      custom_engines: {
        intel: {
          types: ['IPv4', 'FQDN', 'URL', 'MD5'],
          request: { url: `${intel.url}/intel/{value}` },
          fields: { score: '/score' },
          summary: 'score {score}',
          evidence: [{ field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' }, { field: 'score', op: '<', value: 80, verdict: 'clean', reason: 'score {score}' }],
        },
      },
      allowlist: [{ value: '*.vendor-cdn.net', reason: 'a vendor we use' }],
    });
    dir = config.dir;
    file = config.file;
    auditFile = join(dir, 'audit.jsonl');
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...written, audit_log: auditFile }));
  });
  after(async () => {
    await server?.stop();
    await Promise.all([upstreams?.close(), intel?.close()]);
  });

  async function oas(args: string[], code = 0): Promise<Run> {
    const run = await runOas(dir, args);
    assert.equal(run.code, code, `oas ${args.join(' ')}: ${run.stderr}`);
    noStack(run.stderr);
    return run;
  }
  const oneLine = (run: Run, message: RegExp) => {
    assert.match(run.stderr, message);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  };
  const analyze = async (text: string, extra: string[] = []) => (JSON.parse((await oas(['analyze', text, '-e', 'intel', '--json', '--ignore-cache', ...extra])).stdout) as Row[]);
  const byValue = (rows: Row[]) => new Map(rows.map((row) => [row.observable, row]));
  const asked = () => intel.hits('GET /intel/').map((hit) => decodeURIComponent(hit.path.slice('/intel/'.length))).sort();
  const auditLines = () => readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

  test('oas allow: bad input is one line, exit 2, and nothing is added', async () => {
    oneLine(await oas(['allow', 'add', '*.com', '--reason', 'far too wide'], 2), /"\*\.com" is no domain pattern/);
    oneLine(await oas(['allow', 'add', 'example.org'], 2), /--reason is required/);
    oneLine(await oas(['allow', 'add', 'example.org', '--reason', 'x', '--expires', 'soon'], 2), /expiry "soon" is neither a duration/);
    oneLine(await oas(['allow', 'add', 'example.org', '--reason', 'x', '--expires', '2020-01-01'], 2), /expiry "2020-01-01" is in the past/);
    oneLine(await oas(['allow', 'remove', 'nothing.example'], 2), /nothing\.example is not on the allowlist/);
    oneLine(await oas(['allow', 'remove', '*.vendor-cdn.net'], 2), /on the allowlist of the configuration \(setting allowlist\): remove it there/);
    const listed = JSON.parse((await oas(['allow', 'list', '--json'])).stdout) as Record<string, unknown>[];
    assert.deepEqual(listed, [{ value: '*.vendor-cdn.net', reason: 'a vendor we use', by: 'config', expires: null, active: true }]);
  });

  test('an allowlisted CIDR, wildcard domain and hash reach no engine; removed, they do again', async () => {
    await oas(['allow', 'add', '45.33.0.0/16', '--reason', 'our scanners']);
    await oas(['allow', 'add', '*.acme-corp.com', '--reason', 'our own domains', '--expires', '30d']);
    const added = await oas(['allow', 'add', EICAR.toUpperCase(), '--reason', 'the EICAR test file']);
    assert.match(added.stderr, new RegExp(`^oas: ${EICAR} added to the allowlist`));
    const list = (await oas(['allow', 'list'])).stdout;
    assert.match(list, /^Value\s+Reason\s+By\s+Added\s+Expires$/m);
    assert.match(list, /^\*\.vendor-cdn\.net\s+a vendor we use\s+config\s+-\s+never$/m);
    assert.match(list, new RegExp(`^45\\.33\\.0\\.0/16\\s+our scanners\\s+${ME.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+never$`, 'm'));
    intel.reset();
    const rows = byValue(await analyze(`45.33.32.156 acme-corp.com hxxps://intranet.acme-corp[.]com/x ${EICAR} cdn.vendor-cdn.net 8.8.8.8`));
    assert.deepEqual(asked(), ['8.8.8.8'], 'only what no entry covers was sent');
    for (const [value, entry, reason, by] of [
      ['45.33.32.156', '45.33.0.0/16', 'our scanners', ME],
      ['acme-corp.com', '*.acme-corp.com', 'our own domains', ME],
      ['https://intranet.acme-corp.com/x', '*.acme-corp.com', 'our own domains', ME],
      [EICAR, EICAR, 'the EICAR test file', ME],
      ['cdn.vendor-cdn.net', '*.vendor-cdn.net', 'a vendor we use', 'config'],
    ] as const) {
      const row = rows.get(value)!;
      assert.ok(row, value);
      assert.equal(row.intel, null);
      assert.deepEqual(row.withheld, { intel: `allowlisted: ${reason}` });
      assert.equal(row.allowlisted!['value'], entry);
      assert.equal(row.allowlisted!['by'], by);
      assert.equal(row.verdict, 'clean');
      assert.deepEqual(row.reasons, [`allowlisted by ${by}: ${reason}`]);
    }
    await oas(['allow', 'remove', '45.33.0.0/16']);
    intel.reset();
    await analyze('45.33.32.156');
    assert.deepEqual(asked(), ['45.33.32.156'], 'removed, the range covers nothing');
    // --ignore-allowlist asks the engines about everything.
    intel.reset();
    await analyze(`acme-corp.com ${EICAR}`, ['--ignore-allowlist']);
    assert.deepEqual(asked(), [EICAR, 'acme-corp.com']);
  });

  test('oas mark: a mark decides later analyses, shown with its author; false_positive strikes the engines\' verdict', async () => {
    oneLine(await oas(['mark', '185.220.101.7', 'evil', '--note', 'x'], 2), /"verdict" must be one of malicious, suspicious, clean, false_positive/);
    oneLine(await oas(['mark', '185.220.101.7', 'clean'], 2), /--note is required/);
    oneLine(await oas(['mark', '10.0.0.0/8', 'clean', '--note', 'x'], 2), /a mark is on one observable, not on a range/);
    oneLine(await oas(['mark', '--remove', '104.16.1.1'], 2), /104\.16\.1\.1 has no mark/);
    const before = byValue(await analyze('185.220.101.7 185.220.101.8 104.16.1.1'));
    assert.equal(before.get('185.220.101.7')!.verdict, 'malicious');

    await oas(['mark', '185.220.101.7', 'false_positive', '--note', 'the CDN of our vendor']);
    await oas(['mark', '104.16.1.1', 'malicious', '--note', 'red-team C2 for exercise X', '--expires', '90d']);
    const marks = JSON.parse((await oas(['marks', '--json'])).stdout) as Record<string, unknown>[];
    assert.deepEqual(marks.map((m) => [m['value'], m['verdict'], m['by'], m['active']]), [['104.16.1.1', 'malicious', ME, true], ['185.220.101.7', 'false_positive', ME, true]]);
    assert.match((await oas(['marks'])).stdout, /^104\.16\.1\.1\s+malicious\s+red-team C2 for exercise X\s+cli:/m);

    const today = new Date().toISOString().slice(0, 10);
    const rows = byValue(await analyze('185.220.101.7 185.220.101.8 104.16.1.1'));
    const fp = rows.get('185.220.101.7')!;
    assert.equal(fp.verdict, 'clean');
    assert.deepEqual(fp.reasons, [`marked false positive by ${ME} on ${today}: the CDN of our vendor`]);
    assert.deepEqual(fp.computed_verdict, { verdict: 'malicious', reasons: ['intel: score 95'] });
    assert.equal(fp.mark!['verdict'], 'false_positive');
    assert.equal(fp.mark!['by'], ME);
    const c2 = rows.get('104.16.1.1')!;
    assert.equal(c2.verdict, 'malicious');
    assert.deepEqual(c2.reasons, [`marked malicious by ${ME} on ${today}: red-team C2 for exercise X`]);
    assert.equal(c2.computed_verdict!.verdict, 'clean');
    assert.equal(rows.get('185.220.101.8')!.verdict, 'malicious', 'a mark is on its one observable');
    assert.equal(rows.get('185.220.101.8')!.mark, undefined);

    // The terminal's block: the mark as the reason, the engines' verdict beside it.
    const table = (await oas(['analyze', '185.220.101.7', '-e', 'intel'])).stdout;
    assert.match(table, /^clean\s+185\.220\.101\.7/m);
    assert.match(table, /marked false positive by cli:\S+ on \d{4}-\d\d-\d\d: the CDN of our vendor/);
    assert.match(table, /the engines said ~~malicious~~ \(a false positive, as marked\)/);

    // The exports carry the analyst's verdict and the note.
    for (const format of ['csv', 'stix', 'misp']) {
      const exported = (await oas(['analyze', '104.16.1.1', '-e', 'intel', '-f', format])).stdout;
      assert.match(exported, /marked malicious by cli:\S+ on \d{4}-\d\d-\d\d: red-team C2 for exercise X/, format);
    }
    // MCP's answer: the mark's verdict, the mark as the first reason, the engines' beside it.
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: dir, env: { ...process.env } as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'oas-tests', version: '1.0.0' });
    await client.connect(transport);
    try {
      await client.listTools();
      const answer = (await client.callTool({ name: 'analyze', arguments: { text: '104.16.1.1', engines: ['intel'] } })) as CallToolResult;
      const text = answer.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      assert.match(text, /"104\.16\.1\.1" \(IPv4\): malicious \(marked by an analyst; the engines said clean\)/);
      assert.match(text, /why: "marked malicious by cli:\S+ on \d{4}-\d\d-\d\d: red-team C2 for exercise X"/);
      const observables = (answer.structuredContent as { observables: { verdict: string; computed_verdict?: string }[] }).observables;
      assert.deepEqual([observables[0]!.verdict, observables[0]!.computed_verdict], ['malicious', 'clean']);
    } finally {
      await client.close();
    }

    await oas(['mark', '--remove', '185.220.101.7']);
    assert.equal(byValue(await analyze('185.220.101.7')).get('185.220.101.7')!.verdict, 'malicious', 'removed, the engines decide again');
  });

  test('the API: viewers read, analysts change, the author is the signed-in user, every change audited; earlier analyses keep their verdict', async () => {
    for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
      const run = await oas(['users', 'add', name, '--role', role]);
      tokens.set(name, run.stdout.trim());
    }
    server = await spawnServe(file, { cwd: dir });
    const call = (name: string, method: string, path: string, body?: unknown) => fetch(`${server!.url}/api/${path}`, {
      method,
      headers: { Authorization: `Bearer ${tokens.get(name)}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

    const refused = await call('vera', 'POST', 'allowlist', { value: '91.198.174.0/24', reason: 'lab' });
    assert.equal(refused.status, 403);
    assert.match(((await refused.json()) as { error: string }).error, /vera is a viewer; changing the allowlist or the marks needs the analyst or admin role/);
    assert.equal((await call('vera', 'POST', 'marks', { value: '91.198.174.1', verdict: 'clean', note: 'x' })).status, 403);

    const added = await call('alice', 'POST', 'allowlist', { value: '91.198.174.0/24', reason: 'the lab', expires: '12h' });
    assert.equal(added.status, 201);
    const entry = (await added.json()) as Record<string, unknown>;
    assert.equal(entry['by'], 'alice');
    assert.equal(entry['value'], '91.198.174.0/24');
    assert.equal((await call('alice', 'POST', 'allowlist', { value: '*.com', reason: 'x' })).status, 400);
    assert.equal((await call('alice', 'POST', 'allowlist', { value: '91.198.174.0/24' })).status, 400);
    const listed = (await (await call('vera', 'GET', 'allowlist')).json()) as Record<string, unknown>[];
    assert.ok(listed.some((e) => e['value'] === '91.198.174.0/24' && e['by'] === 'alice' && e['active'] === true));
    assert.ok(listed.some((e) => e['value'] === '*.vendor-cdn.net' && e['by'] === 'config'));

    // Analysed through the API: the range reaches no engine.
    intel.reset();
    const start = await call('alice', 'POST', 'analyze', { text: '91.198.174.55 185.220.101.9', engines: ['intel'], ignore_cache: true });
    const { analysis_id: first } = (await start.json()) as { analysis_id: string };
    const results = async (id: string) => {
      for (;;) {
        const done = (await (await call('vera', 'GET', `is_analysis_complete/${id}`)).json()) as { complete: boolean };
        if (done.complete) return byValue((await (await call('vera', 'GET', `results/${id}`)).json()) as Row[]);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const firstRows = await results(first);
    assert.deepEqual(asked(), ['185.220.101.9']);
    assert.equal(firstRows.get('91.198.174.55')!.allowlisted!['by'], 'alice');

    // A mark by alice; the next analysis carries it, the earlier one is not rewritten.
    const marked = await call('alice', 'POST', 'marks', { value: '185.220.101.9', verdict: 'suspicious', note: 'seen in <b>phishing</b> kit' });
    assert.equal(marked.status, 201);
    assert.equal(((await marked.json()) as Record<string, unknown>)['by'], 'alice');
    const again = (await (await call('alice', 'POST', 'analyze', { text: '185.220.101.9', engines: ['intel'] })).json()) as { analysis_id: string };
    const second = (await results(again.analysis_id)).get('185.220.101.9')!;
    assert.equal(second.mark!['by'], 'alice');
    assert.equal(second.mark!['note'], 'seen in <b>phishing</b> kit');
    assert.equal((await results(first)).get('185.220.101.9')!.mark, undefined, 'an earlier analysis is not rewritten');
    const marks = (await (await call('vera', 'GET', 'marks')).json()) as Record<string, unknown>[];
    assert.ok(marks.some((m) => m['value'] === '185.220.101.9' && m['verdict'] === 'suspicious' && m['by'] === 'alice'));

    // DELETE with the value URL-encoded.
    assert.equal((await call('vera', 'DELETE', `allowlist/${encodeURIComponent('91.198.174.0/24')}`)).status, 403);
    const removed = await call('alice', 'DELETE', `allowlist/${encodeURIComponent('91.198.174.0/24')}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(await removed.json(), { removed: '91.198.174.0/24' });
    assert.equal((await call('alice', 'DELETE', `allowlist/${encodeURIComponent('91.198.174.0/24')}`)).status, 404);
    assert.equal((await call('alice', 'DELETE', `allowlist/${encodeURIComponent('*.vendor-cdn.net')}`)).status, 400);
    assert.equal((await call('alice', 'DELETE', `marks/${encodeURIComponent('185.220.101.9')}`)).status, 200);
    assert.equal((await call('alice', 'DELETE', `marks/${encodeURIComponent('185.220.101.9')}`)).status, 404);

    // Every change, from the CLI and the API, is an audit line.
    const lines = auditLines();
    const of = (action: string) => lines.filter((line) => line['action'] === action);
    assert.ok(of('allowlist_added').some((l) => l['outcome'] === 'success' && l['client'] === 'cli' && l['user'] === ME && l['value'] === '45.33.0.0/16'));
    assert.ok(of('allowlist_added').some((l) => l['outcome'] === 'failure' && l['client'] === 'cli' && /no domain pattern/.test(String(l['reason']))));
    assert.ok(of('allowlist_added').some((l) => l['outcome'] === 'success' && l['user'] === 'alice' && l['origin'] === 'api' && l['value'] === '91.198.174.0/24'));
    assert.ok(of('allowlist_removed').some((l) => l['outcome'] === 'success' && l['user'] === 'alice' && l['value'] === '91.198.174.0/24'));
    assert.ok(of('allowlist_removed').some((l) => l['outcome'] === 'failure' && l['user'] === 'alice'));
    assert.ok(of('mark_added').some((l) => l['outcome'] === 'success' && l['user'] === 'alice' && l['verdict'] === 'suspicious'));
    assert.ok(of('mark_added').some((l) => l['outcome'] === 'success' && l['client'] === 'cli' && l['verdict'] === 'false_positive'));
    assert.ok(of('mark_removed').some((l) => l['outcome'] === 'success' && l['user'] === 'alice' && l['value'] === '185.220.101.9'));
  });

  test('an expired entry or mark no longer applies', async () => {
    // Written as a stored entry that expired a moment ago (no clock is waited for).
    const { openKnowledge } = await import('../src/app.js');
    const opened = await openKnowledge({ file, env: {} });
    try {
      const past = new Date(Date.now() - 1_000).toISOString();
      const lists = (opened.knowledge as unknown as { sources: { allowlist: { put(k: string, v: unknown): Promise<boolean> }; marks: { put(k: string, v: unknown): Promise<boolean> } } }).sources;
      await lists.allowlist.put('185.220.101.50', { value: '185.220.101.50', reason: 'was fine', by: 'alice', at: past, expires: past });
      await lists.marks.put('185.220.101.51', { value: '185.220.101.51', verdict: 'clean', note: 'was fine', by: 'alice', at: past, expires: past });
      const entries = await opened.knowledge.allowEntries();
      assert.equal(entries.find((e) => e.value === '185.220.101.50')!.active, false);
    } finally {
      await opened.close();
    }
    assert.match((await oas(['allow', 'list'])).stdout, /^185\.220\.101\.50\s+was fine\s+alice\s+\S+\s+\S+ \(expired\)$/m);
    intel.reset();
    const rows = byValue(await analyze('185.220.101.50 185.220.101.51'));
    assert.deepEqual(asked(), ['185.220.101.50', '185.220.101.51']);
    assert.equal(rows.get('185.220.101.50')!.allowlisted, undefined);
    assert.equal(rows.get('185.220.101.51')!.mark, undefined);
    assert.equal(rows.get('185.220.101.51')!.verdict, 'malicious');
  });
});
