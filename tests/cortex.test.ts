/**
 * Issue 39, Cortex: `oas serve` (a subprocess, engines at loopback fakes) answering the Cortex REST
 * API under /cortex, asked as its clients ask and read as they read:
 * - TheHive 4.1's Cortex connector (cortex/client CortexClient.scala and client-common
 *   BaseClient.scala; cortex/dto v0 Job.scala, Worker.scala, Artifact.scala): GET api/status
 *   (versions.Cortex), GET api/user/current (id), GET api/analyzer?range=all, GET
 *   api/analyzer/type/<dataType>?range=all, POST api/analyzer/_search with SearchQuery's body
 *   {"query": {"_field", "_value"}, "range"}, POST api/analyzer/<id>/run with InputArtifact's body
 *   {tlp, pap, dataType, message, data, parameters}, GET api/job/<id>/waitreport?atMost=<a Scala
 *   Duration's toString, "1 minute">; each answer checked against the fields OutputWorker's and
 *   OutputJob's reads require.
 * - cortex4py (cortex4py/api.py, controllers/): `Authorization: Bearer <key>`, POST
 *   analyzer/_search with {"query": ...} and `range` in the query string, run_by_id's body and
 *   `?force=1`, job/<id>/report, job/<id>/waitreport?atMost=Inf, job/<id>/artifacts, POST
 *   job/_search, DELETE job/<id>.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { runOas } from './helpers/cli.js';
import { moduleRecorder } from './helpers/module-log.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'cortex-test-token-0123456789abcdef';

let upstreams: Upstreams;
let intel: FakeHttpServer;
let server: ServeProcess;
let audit: string;
let base: string;
let configFile: string;
const tokens = new Map<string, string>();

async function call(method: string, path: string, options: { body?: unknown; key?: string } = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${base}/api/${path}`, {
    method,
    headers: { Authorization: `Bearer ${options.key ?? TOKEN}`, ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** OutputWorker's reads (TheHive's cortex/dto v0 Worker.scala). */
function readWorker(json: any): { id: string; name: string; dataTypeList: string[]; maxTlp: number; maxPap: number } {
  for (const field of ['id', 'name', 'version', 'description']) assert.equal(typeof json[field], 'string', `worker.${field}`);
  assert.ok(Array.isArray(json.dataTypeList));
  assert.ok(Number.isInteger(json.maxTlp) && Number.isInteger(json.maxPap));
  return json;
}

/** OutputJob's reads (Job.scala): id, workerId or analyzerId, date, status, organization, dataType, type; report's. */
function readJob(json: any): any {
  assert.equal(typeof json.id, 'string');
  assert.equal(typeof (json.workerId ?? json.analyzerId), 'string');
  assert.equal(typeof json.date, 'number', 'date as epoch milliseconds');
  assert.ok(['InProgress', 'Success', 'Failure', 'Waiting', 'Deleted'].includes(json.status), json.status);
  assert.equal(typeof json.organization, 'string');
  assert.equal(typeof json.dataType, 'string');
  assert.ok(['analyzer', 'responder'].includes(json.type));
  if (json.report && typeof json.report === 'object') {
    for (const t of json.report.summary?.taxonomies ?? []) {
      assert.deepEqual(Object.keys(t).sort(), ['level', 'namespace', 'predicate', 'value']);
      assert.ok(['info', 'safe', 'suspicious', 'malicious'].includes(t.level), t.level);
    }
    for (const a of json.report.artifacts ?? []) {
      assert.equal(typeof a.dataType, 'string');
      assert.equal(typeof a.tlp, 'number');
      assert.ok(Array.isArray(a.tags));
    }
  }
  return json;
}

/** TheHive's InputArtifact for an observable of a case. */
const artifact = (dataType: string, data: string, tlp = 2, pap = 2) => ({ tlp, pap, dataType, message: '42', data, parameters: { organisation: 'soc', user: 'alice' } });

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({
    'GET /intel/*': (req) => ({ json: req.path.endsWith('/45.33.32.156')
      ? { score: 90, related: 'beacons to 198.51.100.7 and http://bad.example/payload.bin' }
      : { score: 5, related: 'none' } }),
  });
  const dir = tempDir('oas-cortex-');
  audit = join(dir, 'audit.log');
  const config = configFor(upstreams, {
    cortex: true,
    audit_log: audit,
    api_token: TOKEN,
    // Reverse DNS may see TLP:RED here: a Verdict job at RED runs it and withholds the others.
    engines: { reverse_dns: { max_tlp: 'RED', max_pap: 'AMBER' } },
    custom_engines: {
      intel: {
        label: 'Intel',
        types: ['IPv4', 'FQDN', 'MD5'],
        request: { url: `${intel.url}/intel/{value}` },
        fields: { score: '/score', related: '/related' },
        summary: 'score {score}',
        max_tlp: 'AMBER',
        evidence: [{ field: 'score', op: '>=', value: 50, verdict: 'malicious', reason: 'score {score}' }, { field: 'score', op: '<', value: 50, verdict: 'clean', reason: 'score {score}' }],
      },
    },
  });
  for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
    const run = await runOas(config.dir, ['users', 'add', name, '--role', role, '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    tokens.set(name, run.stdout.trim());
  }
  configFile = config.file;
  server = await spawnServe(config.file);
  base = `${server.url}/cortex`;
});

after(async () => {
  await server?.stop();
  await Promise.all([upstreams?.close(), intel?.close()]);
});

describe('TheHive 4.1\'s Cortex connector', () => {
  test('status and the current user, as getVersion, getHealth and getCurrentUser read them', async () => {
    const status = await call('GET', 'status');
    assert.equal(status.status, 200);
    assert.equal(typeof status.json.versions.Cortex, 'string');
    assert.ok(Array.isArray(status.json.config.authType));
    // As Cortex's: the status answers without a key (TheHive sends one all the same).
    const open = await fetch(`${base}/api/status`);
    assert.equal(open.status, 200);
    assert.equal(typeof ((await open.json()) as { versions: { Cortex: string } }).versions.Cortex, 'string');
    const user = await call('GET', 'user/current', { key: tokens.get('alice')! });
    assert.equal(user.status, 200);
    assert.equal(user.json.id, 'alice');
    assert.deepEqual(user.json.roles, ['read', 'analyze']);
  });

  test('the analyzers, all and by data type: one per engine that can run here, and oas_Verdict_1_0', async () => {
    const all = await call('GET', 'analyzer?range=all');
    assert.equal(all.status, 200);
    const workers = (all.json as unknown[]).map(readWorker);
    const ids = workers.map((w) => w.id);
    assert.equal(ids[0], 'oas_Verdict_1_0');
    for (const id of ['oas_Ipapi_1_0', 'oas_Reverse_Dns_1_0', 'oas_Intel_1_0']) assert.ok(ids.includes(id), id);
    assert.ok(!ids.includes('oas_Virustotal_1_0'), 'an engine without its key is not offered');
    assert.equal(all.headers.get('x-total'), String(ids.length));
    for (const w of workers) assert.equal(w.name, w.id);
    const intelWorker = workers.find((w) => w.id === 'oas_Intel_1_0')!;
    assert.deepEqual(intelWorker.dataTypeList, ['ip', 'domain', 'fqdn', 'hash']);
    assert.equal(intelWorker.maxTlp, 2, 'its max_tlp AMBER, as Cortex\'s number');
    assert.deepEqual(workers.find((w) => w.id === 'oas_Ipapi_1_0')!.dataTypeList, ['ip', 'domain', 'fqdn', 'url'], 'an IP engine runs on what a domain or URL resolves to');

    const byIp = ((await call('GET', 'analyzer/type/ip?range=all')).json as unknown[]).map(readWorker).map((w) => w.id);
    assert.ok(byIp.includes('oas_Verdict_1_0') && byIp.includes('oas_Ipapi_1_0') && byIp.includes('oas_Intel_1_0'));
    const byHash = ((await call('GET', 'analyzer/type/hash')).json as unknown[]).map(readWorker).map((w) => w.id);
    assert.ok(byHash.includes('oas_Intel_1_0') && !byHash.includes('oas_Ipapi_1_0'));
    assert.deepEqual((await call('GET', 'analyzer/type/registry')).json, []);

    const named = await call('POST', 'analyzer/_search', { body: { query: { _field: 'name', _value: 'oas_Intel_1_0' }, range: '0-1' } });
    assert.deepEqual((named.json as unknown[]).map(readWorker).map((w) => w.id), ['oas_Intel_1_0']);
    assert.equal(readWorker((await call('GET', 'analyzer/oas_Intel_1_0')).json).id, 'oas_Intel_1_0');
    const missing = await call('GET', 'analyzer/oas_Nothing_1_0');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.type, 'NotFoundError');

    // TheHive's responder menus search responders by data type: oas has none, and says so as Cortex would.
    const responders = await call('POST', 'responder/_search', { body: { query: { dataTypeList: 'thehive:case' }, range: 'all' }, key: tokens.get('vera')! });
    assert.deepEqual([responders.status, responders.json, responders.headers.get('x-total')], [200, [], '0']);
    assert.deepEqual((await call('GET', 'responder')).json, []);
    assert.equal((await call('GET', 'responder/Mailer_1_0')).json.type, 'NotFoundError');
  });

  test('a job run, waited for (atMost as a Scala Duration prints), its report and artifacts read', async () => {
    const run = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: artifact('ip', '45.33.32.156'), key: tokens.get('alice')! });
    assert.equal(run.status, 200);
    const job = readJob(run.json);
    assert.equal(job.analyzerId, 'oas_Intel_1_0');
    assert.equal(job.tlp, 2);
    assert.equal(job.pap, 2);
    assert.equal(job.data, '45.33.32.156');
    assert.equal(job.message, '42');

    const done = readJob((await call('GET', `job/${job.id}/waitreport?atMost=${encodeURIComponent('1 minute')}`)).json);
    assert.equal(done.status, 'Success');
    assert.equal(done.report.success, true);
    assert.deepEqual(done.report.summary.taxonomies, [{ level: 'malicious', namespace: 'oas', predicate: 'Intel', value: 'score 90' }]);
    assert.equal(done.report.full.score, 90, 'full: the engine\'s result object');
    const found = done.report.artifacts.map((a: any) => `${a.dataType} ${a.data}`);
    assert.ok(found.includes('ip 198.51.100.7') && found.includes('url http://bad.example/payload.bin'), found.join(', '));
    assert.ok(done.report.artifacts.every((a: any) => a.tlp === 2));

    const artifacts = await call('GET', `job/${job.id}/artifacts`);
    assert.equal(artifacts.status, 200);
    assert.deepEqual(artifacts.json.map((a: any) => `${a.dataType} ${a.data}`), found);

    const report = readJob((await call('GET', `job/${job.id}/report`)).json);
    assert.deepEqual(report.report, done.report);
    assert.equal(readJob((await call('GET', `job/${job.id}`)).json).status, 'Success');

    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.some((l) => l.action === 'analysis_started' && l.origin === 'cortex' && l.analysis_id === job.id && l.user === 'alice' && l.analyzer === 'oas_Intel_1_0'));
    assert.ok(lines.some((l) => l.action === 'results_read' && l.origin === 'cortex' && l.analysis_id === job.id));
  });

  test('the Verdict analyzer: the default engines, the verdict first in the summary', async () => {
    const run = await call('POST', 'analyzer/oas_Verdict_1_0/run', { body: artifact('domain', 'cyberbro.net') });
    const done = readJob((await call('GET', `job/${run.json.id}/waitreport?atMost=1minute`)).json);
    assert.equal(done.status, 'Success');
    assert.equal(done.report.summary.taxonomies[0].predicate, 'Verdict');
    assert.ok(done.report.summary.taxonomies.length > 1);
    assert.equal(done.report.full.observable, 'cyberbro.net');
    assert.ok(typeof done.report.full.verdict === 'string' && typeof done.report.full.engines === 'object');
  });

  test('TLP refusals: a job nothing of which may run is a Failure saying why; a Verdict job with engines withheld succeeds and lists them', async () => {
    // An address no earlier job asked about: a cached answer at TLP:RED sends nothing out, and is given.
    const refused = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: artifact('ip', '45.33.32.157', 3) });
    assert.equal(refused.status, 200);
    const failed = readJob((await call('GET', `job/${refused.json.id}/waitreport?atMost=30seconds`)).json);
    assert.equal(failed.status, 'Failure');
    assert.equal(failed.report.success, false);
    assert.match(failed.report.errorMessage, /^nothing of this job may run at TLP:RED \/ PAP:AMBER: Intel: /);
    assert.equal(failed.errorMessage, failed.report.errorMessage);

    const verdict = await call('POST', 'analyzer/oas_Verdict_1_0/run', { body: artifact('ip', '45.33.32.158', 3) });
    const done = readJob((await call('GET', `job/${verdict.json.id}/waitreport?atMost=1minute`)).json);
    assert.equal(done.status, 'Success', JSON.stringify(done.report));
    assert.ok(Object.keys(done.report.full.withheld).length > 0, JSON.stringify(done.report.full));
    assert.ok('reverse_dns' in done.report.full.engines && !('reverse_dns' in done.report.full.withheld));
  });
});

describe('cortex4py', () => {
  test('run_by_id with force=1 asks the engine again; without, the cache answers', async () => {
    const before = intel.hits('GET /intel/').length;
    const cached = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { dataType: 'ip', tlp: 2, pap: 2, data: '45.33.32.156' } });
    assert.equal(readJob((await call('GET', `job/${cached.json.id}/waitreport?atMost=Inf`)).json).status, 'Success');
    assert.equal(intel.hits('GET /intel/').length, before, 'from the cache');
    const res = await fetch(`${base}/api/analyzer/oas_Intel_1_0/run?force=1`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ dataType: 'ip', tlp: 2, pap: 2, data: '45.33.32.156' }) });
    const forced = readJob(await res.json());
    assert.equal(readJob((await call('GET', `job/${forced.id}/waitreport?atMost=1 second`)).json).id, forced.id);
    await call('GET', `job/${forced.id}/waitreport?atMost=1minute`);
    assert.equal(intel.hits('GET /intel/').length, before + 1, 'force: the engine asked again');
  });

  test('jobs searched (Eq on a field, range in the query string) and deleted', async () => {
    const run = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { dataType: 'domain', tlp: 1, pap: 1, data: 'cyberbro.net' } });
    const id = run.json.id as string;
    const res = await fetch(`${base}/api/job/_search?range=0-50`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ query: { _field: 'dataType', _value: 'domain' } }) });
    const found = (await res.json()) as any[];
    assert.ok(found.map(readJob).some((j) => j.id === id));
    assert.ok(found.every((j) => j.dataType === 'domain'));
    const deleted = await fetch(`${base}/api/job/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(deleted.status, 204);
    const after = (await call('POST', 'job/_search', { body: { query: {} } })).json as any[];
    assert.ok(!after.some((j) => j.id === id));
    assert.equal((await call('GET', `job/${id}`)).json.status, 'Deleted');
  });

  test('a job outlives its server: after a restart it reads the same (analyzer, data type, message, parameters) and job/_search finds it; a deleted one stays deleted and unlisted', async () => {
    const body = { dataType: 'fqdn', tlp: 1, pap: 1, data: 'cyberbro.net', message: 'from case #42', parameters: { origin: 'thehive' } };
    const kept = (await call('POST', 'analyzer/oas_Intel_1_0/run', { body })).json.id as string;
    const gone = (await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { ...body, data: 'www.cyberbro.net' } })).json.id as string;
    for (const id of [kept, gone]) assert.equal((await call('GET', `job/${id}/waitreport?atMost=1minute`)).json.status, 'Success');
    assert.equal((await call('DELETE', `job/${gone}`)).status, 204);
    await server.stop();
    server = await spawnServe(configFile);
    base = `${server.url}/cortex`;
    const job = readJob((await call('GET', `job/${kept}`)).json);
    assert.deepEqual([job.workerId, job.dataType, job.data, job.message, job.parameters, job.status], ['oas_Intel_1_0', 'fqdn', 'cyberbro.net', 'from case #42', { origin: 'thehive' }, 'Success']);
    assert.equal((await call('GET', `job/${gone}`)).json.status, 'Deleted');
    const listed = ((await call('POST', 'job/_search?range=all', { body: { query: { _field: 'message', _value: 'from case #42' } } })).json as any[]).map(readJob);
    assert.deepEqual(listed.map((j) => [j.id, j.message]), [[kept, 'from case #42']], 'the store lists the jobs of before the restart, not the deleted one');
  });

  test('errors in Cortex\'s body: a wrong key (401), a viewer running a job (403), unknown job (404), a bad atMost or body (400)', async () => {
    const wrong = await call('GET', 'analyzer', { key: 'not-a-key' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.type, 'AuthenticationError');
    assert.equal(typeof wrong.json.message, 'string');
    const viewer = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: artifact('ip', '45.33.32.156'), key: tokens.get('vera')! });
    assert.equal(viewer.status, 403);
    assert.equal(viewer.json.type, 'AuthorizationError');
    assert.equal((await call('GET', 'analyzer/type/ip', { key: tokens.get('vera')! })).status, 200, 'listing is a viewer\'s');
    const unknown = await call('GET', 'job/0f6a1e1c-0000-4000-8000-000000000000/report');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.type, 'NotFoundError');
    const bad = await call('GET', 'job/0f6a1e1c-0000-4000-8000-000000000000/waitreport?atMost=soon');
    assert.ok(bad.status === 404 || bad.status === 400);
    const noData = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { dataType: 'ip', tlp: 2 } });
    assert.equal(noData.status, 400);
    assert.deepEqual(noData.json, { type: 'BadRequest', message: 'data is missing' });
    const badTlp = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { dataType: 'ip', tlp: 7, data: '45.33.32.156' } });
    assert.equal(badTlp.status, 400);
    assert.match(badTlp.json.message, /^tlp must be a number from 0 to 3/);
    const notIp = await call('POST', 'analyzer/oas_Intel_1_0/run', { body: { dataType: 'ip', data: 'cyberbro.net' } });
    assert.equal(notIp.status, 400);
  });
});

test('cortex off: /cortex is no path of oas and nothing of the Cortex API is loaded; a reload turns it on, and keeps the jobs', async () => {
  const config = configFor(upstreams);
  const dir = tempDir('oas-cortex-off-');
  const recorder = moduleRecorder(dir);
  const log = join(dir, 'modules.log');
  const serve = await spawnServe(config.file, { nodeArgs: recorder.nodeArgs, env: recorder.env(log) });
  const { child, url } = serve;
  try {
    assert.equal((await fetch(`${url}/cortex/api/status`)).status, 404);
    assert.equal((await fetch(`${url}/cortex/api/analyzer/oas_Verdict_1_0/run`, { method: 'POST', body: '{"dataType": "ip", "data": "8.8.8.8"}', headers: { 'Content-Type': 'application/json' } })).status, 404);
    const loaded = recorder.read(log).filter((m) => /\/dist\/src\/(enrichment\/cortex|server\/cortex)\.js/.test(m));
    assert.deepEqual(loaded, [], 'no module of the Cortex API is loaded');
    // SIGHUP with the setting on: the next requests meet it; a job run then outlives the next reload.
    const reload = async (count: number) => {
      child.kill('SIGHUP');
      for (let i = 0; i < 200 && (serve.log().match(/configuration (not )?reloaded/g) ?? []).length < count; i++) await new Promise((done) => setTimeout(done, 50));
      assert.equal((serve.log().match(/configuration reloaded/g) ?? []).length, count, serve.log());
    };
    writeFileSync(config.file, JSON.stringify({ ...JSON.parse(readFileSync(config.file, 'utf8')), cortex: true }));
    await reload(1);
    assert.equal((await fetch(`${url}/cortex/api/status`)).status, 200);
    const run = await fetch(`${url}/cortex/api/analyzer/oas_Reverse_Dns_1_0/run`, { method: 'POST', body: JSON.stringify({ dataType: 'fqdn', data: 'cyberbro.net', tlp: 1, pap: 1, message: 'case 7' }), headers: { 'Content-Type': 'application/json' } });
    const job = (await run.json()) as { id: string };
    await reload(2);
    const report = (await (await fetch(`${url}/cortex/api/job/${job.id}/waitreport?atMost=1minute`)).json()) as { message: string; dataType: string; status: string };
    assert.deepEqual([report.status, report.dataType, report.message], ['Success', 'fqdn', 'case 7']);
  } finally {
    await serve.stop();
  }
});

test('a job counts towards rate_limit_per_minute as an analysis does; over it, 429 in Cortex\'s error body', async () => {
  const limited = await spawnServe(configFor(upstreams, { cortex: true, rate_limit_per_minute: 1 }).file);
  try {
    const run = () => fetch(`${limited.url}/cortex/api/analyzer/oas_Reverse_Dns_1_0/run`, { method: 'POST', body: JSON.stringify({ dataType: 'domain', data: 'cyberbro.net', tlp: 1, pap: 1 }), headers: { 'Content-Type': 'application/json' } });
    assert.equal((await run()).status, 200);
    const over = await run();
    assert.equal(over.status, 429);
    const body = (await over.json()) as { type: string; message: string };
    assert.equal(body.type, 'TooManyRequests');
    assert.match(body.message, /^too many analyses: at most 1 per minute/);
    assert.match(over.headers.get('retry-after') ?? '', /^\d+$/);
  } finally {
    await limited.stop();
  }
});

/**
 * cortex4py's own code against oas serve: its source (2.1.0, TheHive-Project/Cortex4py at
 * 98365d0, AGPL-3.0, unmodified) is kept in tests/vendor/cortex4py, for this test only (tests never
 * reach the network to get it; OAS_TEST_CORTEX4PY names another checkout). python3 needs
 * `requests` (Debian's python3-requests, which .ci/run installs). python-magic, which cortex4py
 * imports for file uploads, is stood in for when missing.
 */
const cortex4py = process.env.OAS_TEST_CORTEX4PY ?? fileURLToPath(new URL('../../tests/vendor/cortex4py', import.meta.url));
const python = [process.env.OAS_PYTHON ?? 'python3', '/usr/bin/python3'].find((bin) => spawnSync(bin, ['-c', 'import requests']).status === 0);
const cortex4pySkip = !existsSync(join(cortex4py, 'cortex4py', 'api.py')) ? `no cortex4py source at ${cortex4py}`
  : !python ? 'python3 with requests (Debian\'s python3-requests) is needed for cortex4py' : false;

test('cortex4py\'s own code: analyzers by type and name, a job run with force, its report waited for, its artifacts, jobs found and deleted, a wrong key', { skip: cortex4pySkip }, async () => {
  const stub = tempDir('oas-cortex4py-');
  writeFileSync(join(stub, 'magic.py'), 'class Magic:\n    def __init__(self, **kwargs): pass\n    def from_file(self, path): return "application/octet-stream"\n');
  const script = join(stub, 'check.py');
  writeFileSync(script, `import sys, json, warnings
warnings.simplefilter('ignore')
try:
    import magic
except ImportError:
    sys.path.append(${JSON.stringify(stub)})
from cortex4py.api import Api
from cortex4py.query import Eq
from cortex4py.exceptions import AuthenticationError
api = Api(sys.argv[1], sys.argv[2])
out = {}
out['version'] = api.status().json()['versions']['Cortex']
out['by_type'] = [a.name for a in api.analyzers.get_by_type('ip')]
out['by_name'] = api.analyzers.get_by_name('oas_Intel_1_0').id
job = api.analyzers.run_by_name('oas_Intel_1_0', {'data': '45.33.32.156', 'dataType': 'ip', 'tlp': 1, 'pap': 1, 'message': 'c4py'}, force=1)
report = api.jobs.get_report_async(job.id, timeout='1minute')
out['status'] = report.status
out['taxonomies'] = report.report['summary']['taxonomies'] if 'summary' in report.report else report.report
out['artifacts'] = sorted(a.dataType + ' ' + a.data for a in api.jobs.get_artifacts(job.id))
out['found'] = [j.id for j in api.jobs.find_all(Eq('analyzerId', 'oas_Intel_1_0'), range='all')].count(job.id)
out['deleted'] = api.jobs.delete(job.id)
try:
    Api(sys.argv[1], 'not-a-key').analyzers.find_all({})
    out['wrong_key'] = 'accepted'
except AuthenticationError:
    out['wrong_key'] = 'AuthenticationError'
print(json.dumps(out))
`);
  // Not spawnSync: the engines' fakes answer from this process.
  const child = spawn(python!, [script, base, TOKEN], { env: { ...process.env, PYTHONPATH: cortex4py! }, stdio: ['ignore', 'pipe', 'pipe'] });
  const ran = { stdout: '', stderr: '', status: null as number | null };
  child.stdout.on('data', (d) => (ran.stdout += d));
  child.stderr.on('data', (d) => (ran.stderr += d));
  ran.status = await new Promise<number | null>((done) => child.once('exit', done));
  assert.equal(ran.status, 0, ran.stderr);
  const out = JSON.parse(ran.stdout) as Record<string, unknown>;
  assert.equal(typeof out.version, 'string');
  assert.ok((out.by_type as string[]).includes('oas_Intel_1_0'));
  assert.equal(out.by_name, 'oas_Intel_1_0');
  assert.equal(out.status, 'Success', JSON.stringify(out.taxonomies));
  assert.deepEqual(out.taxonomies, [{ level: 'malicious', namespace: 'oas', predicate: 'Intel', value: 'score 90' }]);
  assert.deepEqual(out.artifacts, ['ip 198.51.100.7', 'url http://bad.example/payload.bin']);
  assert.equal(out.found, 1);
  assert.equal(out.deleted, true);
  assert.equal(out.wrong_key, 'AuthenticationError');
});
