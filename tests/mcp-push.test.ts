/**
 * The MCP tool `push_results` (issue 37), driven by the official SDK's client against a loopback
 * MISP (tests/fakes/misp-push.ts), engines on loopback fakes:
 *
 * - `/mcp` on a real `oas serve` (api_token, users, audit_log; push.misp up to TLP:AMBER): the tool
 *   listed with its schemas; a complete analysis pushed makes the MISP event and answers its line
 *   and the API's JSON; pushing again adds nothing; a viewer's push, a target not configured, a TLP
 *   above max_tlp, a read-only key and an unknown analysis are tool errors in one line without the
 *   key; bad arguments the protocol's invalid-params error; each push an audit line
 *   `results_pushed` with origin mcp, target, analysis and counts, and no observable in the trail.
 * - `oas mcp` over stdio: the push made here, nothing written to an audit trail.
 * - `oas mcp --server`: the push is the server's `POST {prefix}analyses/<id>/push` (audited there,
 *   origin api); a Cyberbro server, which has no such endpoint, is a tool error saying so.
 *
 * Loopback only; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeCyberbro, type FakeCyberbro } from './fakes/cyberbro-server.js';
import type { FakeHttpServer } from './fakes/http.js';
import { INTEL_KEY, type InternalIntelFake } from './fakes/internal-intel.js';
import { startMispPushFake, type MispPushFake } from './fakes/misp-push.js';
import { noStack, runOas } from './helpers/cli.js';
import { call, Gate, invalid, startMcpUpstreams, textOf, toolError, type Analyzed, type McpSession } from './helpers/mcp.js';
import { BIN, spawnServe, type ServeProcess } from './helpers/serve.js';
import { killAtExit, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'OASSECRET-mcp-push-token-Qz4Lw8Rm2Tx6';
const ENV = { INTEL_API_KEY: INTEL_KEY };
/** 8.8.8.8 is malicious by the intel engine; 9.9.9.9 clean; 203.0.113.9 unknown to it. */
const TEXT = 'seen 8.8.8.8, 9.9.9.9 and 203.0.113.9 today';
const OBSERVABLES = ['8.8.8.8', '9.9.9.9', '203.0.113.9'];

type Line = Record<string, unknown>;

let upstreams: Upstreams;
let intel: InternalIntelFake;
let vt: FakeHttpServer;
const gate = new Gate();
let misp: MispPushFake;
let extra: Record<string, unknown>;
const sessions: McpSession[] = [];
/** Every message any server sent, as JSON: none may hold a secret. */
const messages: string[] = [];

before(async () => {
  upstreams = await startUpstreams();
  ({ intel, vt, extra } = await startMcpUpstreams(gate, {
    '8.8.8.8': { score: 92, category: 'c2', tags: ['botnet'] },
    '9.9.9.9': { score: 10, category: 'resolver', tags: [] },
  }));
  misp = await startMispPushFake();
});

after(async () => {
  gate.release();
  await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  await Promise.all([vt?.close(), intel?.close(), misp?.close()]);
  await upstreams?.close();
  const secrets = [API_TOKEN, INTEL_KEY, misp.key];
  for (const message of messages) for (const secret of secrets) assert.ok(!message.includes(secret), `a secret in ${message.slice(0, 200)}`);
});

/** The push setting of these tests: the loopback MISP, up to TLP:AMBER. */
const pushSetting = () => ({ misp: { url: misp.url, api_key: misp.key, max_tlp: 'AMBER' } });

async function http(base: string, token: string): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  transport.onmessage = (message) => messages.push(JSON.stringify(message));
  const client = new Client({ name: 'oas-push-tests', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const session: McpSession = { client, messages, close: () => client.close() };
  sessions.push(session);
  return session;
}

async function stdio(cwd: string, args: string[] = [], env: Record<string, string> = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], cwd, env: { ...tmpEnv(), HOME: cwd, ...ENV, ...env }, stderr: 'pipe' });
  transport.onmessage = (message) => messages.push(JSON.stringify(message));
  let stderr = '';
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'oas-push-tests', version: '1.0.0' });
  // A process that ends says why on its standard error.
  client.onclose = () => {
    if (stderr.includes('Error')) process.stderr.write(`oas mcp ${args.join(' ')} ended: ${stderr}\n`);
  };
  await client.connect(transport);
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  if (child) killAtExit(child);
  await client.listTools();
  const session: McpSession = { client, messages, close: () => client.close() };
  sessions.push(session);
  return session;
}

/** An analysis of `text` with the intel engine, complete: its id. */
async function analyzed(session: McpSession, tlp = 'GREEN', text = TEXT): Promise<string> {
  const result = await call(session, 'analyze', { text, engines: ['intel'], tlp, wait_seconds: 60 });
  assert.notEqual(result.isError, true, textOf(result));
  const structured = result.structuredContent as unknown as Analyzed;
  assert.equal(structured.complete, true, textOf(result));
  return structured.analysis_id;
}

interface Pushed {
  target: string; kind: string; id: string; link?: string; created: boolean; added: number; existing: number; selected: number; withheld: number; message: string;
}

/** A push that succeeded: its structured answer, its text checked to be the line then the JSON. */
async function pushed(session: McpSession, args: Record<string, unknown>): Promise<Pushed> {
  const result: CallToolResult = await call(session, 'push_results', args);
  const text = textOf(result);
  assert.notEqual(result.isError, true, text);
  const answer = result.structuredContent as unknown as Pushed;
  const [line, ...rest] = text.split('\n');
  assert.equal(line, answer.message, 'the first line is the push\'s line');
  assert.deepEqual(JSON.parse(rest.join('\n')), answer, 'then the answer as JSON');
  return answer;
}

function linesOf(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((raw) => JSON.parse(raw) as Line);
}

const pushLines = (file: string, since: number): Line[] => linesOf(file).slice(since).filter((line) => line.action === 'results_pushed');

describe('push_results over /mcp (oas serve)', () => {
  let server: ServeProcess;
  let trail: string;
  let analyst: string;
  let viewer: string;

  before(async () => {
    const config = configFor(upstreams, { ...extra, api_token: API_TOKEN, push: pushSetting() });
    trail = join(config.dir, 'audit', 'audit.log');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(config.file, JSON.stringify({ ...JSON.parse(readFileSync(config.file, 'utf8')) as object, audit_log: trail }, null, 2));
    for (const [name, role] of [['alice', 'analyst'], ['vera', 'viewer']] as const) {
      const added = await runOas(config.dir, ['users', 'add', name, '--role', role, '--config', config.file]);
      assert.equal(added.code, 0, added.stderr);
      if (name === 'alice') analyst = added.stdout.trim();
      else viewer = added.stdout.trim();
    }
    server = await spawnServe(config.file, { cwd: config.dir, env: ENV });
  });
  after(async () => {
    await server?.stop();
    assert.ok(!server.log().includes(misp.key), 'no push key in the server\'s log');
  });

  test('push_results is listed with its input and output schemas', async () => {
    const session = await http(server.url, analyst);
    const { tools } = await session.client.listTools();
    const tool = tools.find((t) => t.name === 'push_results');
    assert.ok(tool, `tools: ${tools.map((t) => t.name).join(', ')}`);
    assert.deepEqual(tool.inputSchema.required, ['analysis_id', 'target']);
    const properties = tool.inputSchema.properties as Record<string, { enum?: string[] }>;
    assert.deepEqual(Object.keys(properties), ['analysis_id', 'target', 'event_id', 'case_id', 'min_verdict', 'all']);
    assert.deepEqual(properties.target?.enum, ['misp', 'opencti', 'thehive']);
    assert.deepEqual(properties.min_verdict?.enum, ['malicious', 'suspicious', 'clean', 'unknown']);
    assert.ok(tool.outputSchema, 'an output schema');
    assert.match(tool.description ?? '', /MISP/);
    assert.match(tool.description ?? '', /TLP/);
    assert.match(tool.description ?? '', /only when the user asks/);
  });

  test('an analyst pushes a complete analysis: the MISP event made, its line answered, an audit line with counts and no observable', async () => {
    const session = await http(server.url, analyst);
    const id = await analyzed(session);
    const before = linesOf(trail).length;
    const events = misp.events.length;
    const answer = await pushed(session, { analysis_id: id, target: 'misp' });
    assert.equal(misp.events.length, events + 1, 'one MISP event made');
    const event = misp.events.at(-1)!;
    assert.deepEqual(event.Attribute.filter((a) => a.type === 'ip-dst').map((a) => a.value), ['8.8.8.8'], 'only the malicious observable (min_verdict suspicious by default)');
    assert.equal(event.info, `oas analysis ${id}`);
    assert.deepEqual(
      { target: answer.target, kind: answer.kind, id: answer.id, link: answer.link, created: answer.created, selected: answer.selected, withheld: answer.withheld, existing: answer.existing },
      { target: 'misp', kind: 'event', id: event.id, link: `${misp.url}/events/view/${event.id}`, created: true, selected: 1, withheld: 0, existing: 0 },
    );
    assert.ok(answer.added >= 1, `added ${answer.added}`);
    assert.match(answer.message, new RegExp(`^MISP event ${event.id} created: \\d+ attributes? added \\(${misp.url.replace(/[.]/g, '\\.')}/events/view/${event.id}\\)$`));

    const lines = pushLines(trail, before);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const line = lines[0]!;
    assert.deepEqual(
      [line.outcome, line.user, line.origin, line.target, line.analysis_id, line.kind, line.id, line.created, line.added, line.existing, line.selected, line.withheld],
      ['success', 'alice', 'mcp', 'misp', id, 'event', event.id, true, answer.added, 0, 1, 0],
    );
    const file = readFileSync(trail, 'utf8');
    for (const observable of OBSERVABLES) assert.ok(!file.includes(observable), `${observable} in the audit trail`);
    for (const secret of [API_TOKEN, analyst, viewer, misp.key]) assert.ok(!file.includes(secret), 'a secret in the audit trail');

    // Pushed again: the same event found, nothing added, nothing duplicated.
    const again = await pushed(session, { analysis_id: id, target: 'misp' });
    assert.deepEqual([again.created, again.added, again.existing, again.id], [false, 0, answer.added, event.id]);
    assert.equal(misp.events.length, events + 1, 'still one event');
    assert.equal(misp.event(event.uuid)!.Attribute.length, event.Attribute.length, 'no attribute added twice');
    assert.equal(pushLines(trail, before).length, 2, 'each push is a line');

    // all: every observable, whatever its verdict, into the same event.
    const all = await pushed(session, { analysis_id: id, target: 'misp', all: true });
    assert.equal(all.selected, 3);
    assert.equal(all.created, false);
    assert.deepEqual(misp.event(event.uuid)!.Attribute.filter((a) => a.type === 'ip-dst').map((a) => a.value).sort(), [...OBSERVABLES].sort());
  });

  test('a viewer\'s push is a tool error naming its role; nothing sent, nothing audited as a push', async () => {
    const admin = await http(server.url, analyst);
    const id = await analyzed(admin);
    const session = await http(server.url, viewer);
    const before = linesOf(trail).length;
    const events = misp.events.length;
    const refused = await toolError(session, 'push_results', { analysis_id: id, target: 'misp' });
    assert.match(refused, /^forbidden: vera is a viewer; pushing results to a platform needs the analyst or admin role/);
    assert.equal(misp.events.length, events);
    assert.deepEqual(pushLines(trail, before), []);
  });

  test('refusals and a platform\'s failure are tool errors in one line without the key, audited as failures', async () => {
    const session = await http(server.url, analyst);
    const id = await analyzed(session, 'GREEN', '8.8.8.8 once more');
    const red = await analyzed(session, 'RED', '8.8.8.8 in a red report');
    const events = misp.events.length;
    let before = linesOf(trail).length;

    const unconfigured = await toolError(session, 'push_results', { analysis_id: id, target: 'thehive' });
    assert.match(unconfigured, /^TheHive is not configured as a push target: set push\.thehive\.url and push\.thehive\.api_key or OAS_PUSH_THEHIVE_API_KEY/);
    const above = await toolError(session, 'push_results', { analysis_id: red, target: 'misp' });
    assert.match(above, new RegExp(`^analysis ${red} is TLP:RED, above what MISP may receive \\(push\\.misp\\.max_tlp is AMBER\\): nothing sent$`));
    const missing = await toolError(session, 'push_results', { analysis_id: 'no-such-analysis', target: 'misp' });
    assert.equal(missing, 'analysis no-such-analysis not found');
    const wrongField = await toolError(session, 'push_results', { analysis_id: id, target: 'misp', case_id: '42' });
    assert.match(wrongField, /^case_id \(--case\) is for TheHive/);
    assert.equal(misp.events.length, events, 'nothing sent for a refused push');
    const failures = pushLines(trail, before);
    assert.deepEqual(failures.map((l) => [l.outcome, l.origin, l.target, l.analysis_id]), [
      ['failure', 'mcp', 'thehive', id],
      ['failure', 'mcp', 'misp', red],
      ['failure', 'mcp', 'misp', 'no-such-analysis'],
      ['failure', 'mcp', 'misp', id],
    ]);
    assert.equal(failures[0]!.reason, unconfigured);

    // A platform that answers a login page instead of JSON: a failure in one line, nothing made.
    misp.fail('events/add', 'html', 1);
    const page = await toolError(session, 'push_results', { analysis_id: id, target: 'misp' });
    assert.match(page, /^MISP at 127\.0\.0\.1:\d+: /);
    assert.doesNotMatch(page, /<html|<!DOCTYPE/i, 'no page markup outside the quoted platform text');
    assert.equal(misp.events.length, events);

    // A key that may only read: MISP refuses the event.
    before = linesOf(trail).length;
    misp.role = 'read-only';
    try {
      const failed = await toolError(session, 'push_results', { analysis_id: id, target: 'misp' });
      assert.match(failed, /^MISP at 127\.0\.0\.1:\d+: .*key refused: .*check push\.misp\.api_key or OAS_PUSH_MISP_API_KEY/);
      assert.ok(!failed.includes(misp.key), 'no key in the line');
    } finally {
      misp.role = 'admin';
    }
    const [line] = pushLines(trail, before);
    assert.deepEqual([line?.outcome, line?.target, line?.analysis_id], ['failure', 'misp', id]);
    assert.ok(!JSON.stringify(line).includes(misp.key));
    const file = readFileSync(trail, 'utf8');
    for (const observable of OBSERVABLES) assert.ok(!file.includes(observable), `${observable} in the audit trail`);
  });

  test('bad arguments are the protocol\'s invalid-params error naming them', async () => {
    const session = await http(server.url, analyst);
    assert.match(await invalid(session, 'push_results', { analysis_id: 'x' }), /"target" is required/);
    assert.match(await invalid(session, 'push_results', { analysis_id: 'x', target: 'splunk' }), /"target" must be one of misp, opencti, thehive/);
    assert.match(await invalid(session, 'push_results', { target: 'misp' }), /"analysis_id" is required/);
    assert.match(await invalid(session, 'push_results', { analysis_id: 'x', target: 'misp', min_verdict: 'bad' }), /"min_verdict" must be one of/);
    assert.match(await invalid(session, 'push_results', { analysis_id: 'x', target: 'misp', event_id: 'a b' }), /expected an id of the platform/);
    assert.match(await invalid(session, 'push_results', { analysis_id: 'x', target: 'misp', everything: true }), /unknown argument "everything"/);
  });
});

describe('push_results over stdio (oas mcp)', () => {
  test('the push is made here; no audit trail is written', async () => {
    const config = configFor(upstreams, { ...extra, push: pushSetting() });
    const trail = join(config.dir, 'audit.log');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(config.file, JSON.stringify({ ...JSON.parse(readFileSync(config.file, 'utf8')) as object, audit_log: trail }, null, 2));
    const session = await stdio(config.dir);
    const id = await analyzed(session);
    const events = misp.events.length;
    const answer = await pushed(session, { analysis_id: id, target: 'misp' });
    assert.equal(answer.created, true);
    assert.equal(misp.events.length, events + 1);
    assert.equal(misp.events.at(-1)!.info, `oas analysis ${id}`);
    const again = await pushed(session, { analysis_id: id, target: 'misp' });
    assert.deepEqual([again.created, again.added], [false, 0]);
    const refused = await toolError(session, 'push_results', { analysis_id: id, target: 'opencti' });
    assert.match(refused, /^OpenCTI is not configured as a push target/);
    assert.deepEqual(pushLines(trail, 0), [], 'nothing audited over stdio');
  });
});

describe('push_results through another server (oas mcp --server)', () => {
  let server: ServeProcess;
  let trail: string;
  let cyberbro: FakeCyberbro;
  let home: string;

  before(async () => {
    const served = configFor(upstreams, { ...extra, api_token: API_TOKEN, push: pushSetting() });
    trail = join(served.dir, 'audit.log');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(served.file, JSON.stringify({ ...JSON.parse(readFileSync(served.file, 'utf8')) as object, audit_log: trail }, null, 2));
    [server, cyberbro] = await Promise.all([spawnServe(served.file, { cwd: served.dir, env: ENV }), startFakeCyberbro()]);
    // The local configuration pushes nowhere: the server's setting is the one used.
    home = configFor(upstreams, extra).dir;
  });
  after(async () => {
    await server?.stop();
    await cyberbro?.close();
  });

  test('an oas server pushes with its own settings, and audits it (origin api)', async () => {
    const session = await stdio(home, ['--server', server.url], { OAS_API_TOKEN: API_TOKEN });
    const id = await analyzed(session);
    const events = misp.events.length;
    const answer = await pushed(session, { analysis_id: id, target: 'misp' });
    assert.deepEqual([answer.target, answer.kind, answer.created, answer.selected], ['misp', 'event', true, 1]);
    assert.equal(misp.events.length, events + 1);
    assert.match(answer.message, /^MISP event \d+ created: /);
    const [line] = pushLines(trail, 0);
    assert.deepEqual([line?.outcome, line?.origin, line?.target, line?.analysis_id, line?.selected], ['success', 'api', 'misp', id, 1]);

    // The server's refusals come back as its one line.
    const unconfigured = await toolError(session, 'push_results', { analysis_id: id, target: 'thehive' });
    assert.match(unconfigured, /^TheHive is not configured as a push target/);
    assert.equal(await toolError(session, 'push_results', { analysis_id: 'no-such-analysis', target: 'misp' }), 'analysis no-such-analysis not found');
  });

  test('without the token: the server\'s 401 as a tool error', async () => {
    const session = await stdio(home, ['--server', server.url]);
    const refused = await toolError(session, 'push_results', { analysis_id: 'any-analysis', target: 'misp' });
    assert.match(refused, /needs an API token \(HTTP 401\)/);
  });

  test('a Cyberbro server has no push endpoint: a tool error saying so', async () => {
    const session = await stdio(home, ['--server', cyberbro.url]);
    const refused = await toolError(session, 'push_results', { analysis_id: 'any-analysis', target: 'misp' });
    assert.match(refused, /^not pushed: the server at http:\/\/127\.0\.0\.1:\d+ has no push endpoint \(POST \/api\/analyses\/any-analysis\/push answered HTTP 404\)/);
    noStack(refused);
  });
});
