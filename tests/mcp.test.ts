/**
 * `oas mcp`: the MCP server over standard input and output, driven by the official SDK's own
 * client (`Client` + `StdioClientTransport`) spawning `oas mcp` in a folder holding an
 * oas.config.json that points the engines at loopback fakes (the network engines, VirusTotal,
 * a custom engine of a team's intel API, and a gated one whose answer waits until the test lets
 * it go). Every tool, the wait and its progress notifications, `complete: false` after
 * `wait_seconds`, the cut-off of `get_results`, `--cyberbro-tools`, `--server` (a real `oas serve`
 * with a token, and a Cyberbro stand-in), bad arguments, tool errors, a raw look at standard
 * output, and a leak scan of every message and of standard error. Loopback only; no timing
 * assertion (`wait_seconds: 1` only ends a wait that the gate holds open).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { startFakeCyberbro, type FakeCyberbro } from './fakes/cyberbro-server.js';
import type { FakeHttpServer } from './fakes/http.js';
import { INTEL_KEY, type InternalIntelFake } from './fakes/internal-intel.js';
import { noStack } from './helpers/cli.js';
import { call, Gate, startMcpUpstreams, invalid, textOf, toolError, type Analyzed, type McpSession, type Results } from './helpers/mcp.js';
import { BIN, spawnServe, type ServeProcess } from './helpers/serve.js';
import { cutResults, UNTRUSTED } from '../src/mcp/shape.js';
import type { ObservableResult } from '../src/runner/result.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const VT_KEY = 'OASSECRET-vt-mcp-4Hq7Zp2Lx9Wc';
const TOKEN = 'OASSECRET-mcp-token-Rk8Vn3Yt6Bq1';
const WRONG_TOKEN = 'OASSECRET-wrong-token-Tm5Pc2Xe7Ju0';
const WRONG_INTEL_KEY = 'OASSECRET-wrong-intel-Gd4Ws8Nf1Ka6';
/** Every secret of the file: none may show in a message from the server nor on its standard error. */
const SECRETS = [VT_KEY, TOKEN, WRONG_TOKEN, WRONG_INTEL_KEY, INTEL_KEY];
/** The environment every `oas mcp` here gets: the engines' secrets. */
const ENV = { OAS_VIRUSTOTAL_API_KEY: VT_KEY, INTEL_API_KEY: INTEL_KEY };


let upstreams: Upstreams;
let intel: InternalIntelFake;
let vt: FakeHttpServer;
const gate = new Gate();
/** The folder of the main configuration, the working directory of `oas mcp`. */
let home: string;
/** mcp_max_result_chars 1000. */
let smallHome: string;
let served: ServeProcess;
let cyberbro: FakeCyberbro;

interface Session extends McpSession {
  stderr(): string;
}
const sessions: Session[] = [];
/** Raw outputs of processes spawned without the SDK. */
const rawOutputs: string[] = [];

/** `oas mcp args` in `cwd`, connected with the SDK's client; the tools listed (so the client validates structured output). */
async function open(args: string[] = [], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    cwd: options.cwd ?? home,
    env: { ...tmpEnv(), HOME: options.cwd ?? home, ...ENV, ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const messages: string[] = [];
  transport.onmessage = (message) => messages.push(JSON.stringify(message));
  const client = new Client({ name: 'oas-tests', version: '1.0.0' });
  await client.connect(transport);
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  if (child) killAtExit(child);
  await client.listTools();
  const session: Session = { client, messages, stderr: () => stderr, close: () => client.close() };
  sessions.push(session);
  return session;
}

/** Until `check` holds (5 s at most): for what a process writes on a pipe the test does not wait on. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(check(), what);
}


/** get_results until the analysis is complete (the gate released, or the server's own pace). */
async function completed(session: Session, id: string, args: Record<string, unknown> = {}): Promise<Results> {
  for (let i = 0; i < 300; i++) {
    const result = await call(session, 'get_results', { analysis_id: id, ...args });
    assert.notEqual(result.isError, true, textOf(result));
    const structured = result.structuredContent as unknown as Results;
    if (structured.complete) return structured;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`analysis ${id} not complete`);
}

const byObservable = <T extends object>(list: T[], observable: string): T => {
  const found = list.find((o) => (o as { observable?: unknown }).observable === observable);
  assert.ok(found, `${observable} in ${JSON.stringify(list.map((o) => (o as { observable?: unknown }).observable))}`);
  return found;
};

/** The configuration for the MCP upstreams (startMcpUpstreams). */
let extra: Record<string, unknown>;

before(async () => {
  upstreams = await startUpstreams();
  ({ intel, vt, extra } = await startMcpUpstreams(gate, {
      '8.8.8.8': { score: 92, category: 'c2', tags: ['botnet'] },
      '9.9.9.9': { score: 10, category: 'resolver', tags: Array.from({ length: 60 }, (_, i) => `a-rather-long-tag-number-${i}`) },
    }));
  home = configFor(upstreams, extra).dir;
  smallHome = configFor(upstreams, { ...extra, mcp_max_result_chars: 1000 }).dir;
  const guarded = configFor(upstreams, { ...extra, api_token: TOKEN });
  [served, cyberbro] = await Promise.all([spawnServe(guarded.file, { cwd: guarded.dir, env: ENV }), startFakeCyberbro()]);
});

after(async () => {
  gate.release();
  await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  await served?.stop();
  await Promise.all([cyberbro?.close(), vt?.close(), intel?.close()]);
  await upstreams?.close();
});

describe('oas mcp: the tools', () => {
  let mcp: Session;
  before(async () => {
    mcp = await open();
  });

  test('tools/list: the five tools, each with its input and output schema; no Cyberbro tool by default', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['analyze', 'get_results', 'list_engines', 'extract_observables', 'push_results']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok(tool.description && tool.title, tool.name);
    }
    // A text or a file (issue 35): neither is required alone.
    for (const name of ['analyze', 'extract_observables']) {
      const schema = tools.find((t) => t.name === name)!.inputSchema;
      assert.equal(schema.required, undefined, name);
      assert.deepEqual(Object.keys(schema.properties ?? {}).slice(0, 3), ['text', 'file_base64', 'file_name'], name);
    }
    assert.deepEqual(tools.find((t) => t.name === 'get_results')!.inputSchema.required, ['analysis_id']);
    const server = mcp.client.getServerVersion();
    assert.equal(server?.name, 'oas');
    await waitFor(() => mcp.stderr().includes('\n'), 'the line on standard error');
    assert.match(mcp.stderr(), /^oas mcp: ready on standard input and output; analyses run here \(data in .+\)\n$/);
  });

  test('extract_observables: refanged, typed, and no lookup made', async () => {
    const before = intel.server.requests.length + vt.requests.length + upstreams.intel.requests.length;
    const result = await call(mcp, 'extract_observables', { text: 'hxxps://www[.]example[.]com/login from 8.8.8[.]8, mail bob(at)example.com, 44d88612fea8a8f36de82e1278abb02f' });
    assert.notEqual(result.isError, true);
    const { observables } = result.structuredContent as { observables: { observable: string; type: string }[] };
    assert.deepEqual(observables.map((o) => o.type).sort(), ['Email', 'IPv4', 'MD5', 'URL'].sort());
    assert.equal(byObservable(observables, '8.8.8.8').type, 'IPv4');
    assert.equal(byObservable(observables, 'https://www.example.com/login').type, 'URL');
    assert.match(textOf(result), /^https:\/\/www\.example\.com\/login \(URL\)$/m);
    const none = await call(mcp, 'extract_observables', { text: 'nothing to see here' });
    assert.deepEqual(none.structuredContent, { observables: [] });
    assert.equal(textOf(none), 'No observable found in the text.');
    assert.equal(intel.server.requests.length + vt.requests.length + upstreams.intel.requests.length, before);
  });

  test('list_engines: id, service, label, types, configured or what it needs; custom engines and sets; the type filter', async () => {
    const result = await call(mcp, 'list_engines');
    const { engines, sets } = result.structuredContent as { engines: { id: string; service: string; label: string; types: string[]; configured: boolean; custom?: boolean; default?: boolean; needs?: string }[]; sets: { name: string; engines: string[] }[] };
    const vtEntry = engines.find((e) => e.id === 'provider_24')!;
    assert.equal(vtEntry.service, 'virustotal');
    assert.equal(vtEntry.configured, true, 'its key comes from OAS_VIRUSTOTAL_API_KEY');
    assert.equal(vtEntry.needs, undefined);
    const shodan = engines.find((e) => e.service === 'shodan')!;
    assert.equal(shodan.configured, false);
    assert.ok(shodan.needs && shodan.needs.length > 0, 'says what it needs');
    const custom = engines.find((e) => e.id === 'intel')!;
    assert.equal(custom.custom, true);
    assert.equal(custom.configured, true);
    assert.deepEqual(custom.types, ['IPv4', 'IPv6']);
    assert.deepEqual(sets, [{ name: 'triage', engines: ['reverse_dns', 'intel'] }]);
    assert.match(textOf(result), /^virustotal \(provider_24\): .*configured$/m);
    assert.match(textOf(result), /^@triage: reverse_dns, intel$/m);

    const hashes = await call(mcp, 'list_engines', { type: 'MD5' });
    const only = (hashes.structuredContent as { engines: { id: string; types: string[] }[] }).engines;
    assert.ok(only.length > 0 && only.length < engines.length);
    for (const e of only) assert.ok(e.types.includes('MD5'), e.id);
    assert.ok(only.some((e) => e.id === 'provider_24'));
    assert.ok(!only.some((e) => e.id === 'reverse_dns'));
  });

  test('analyze: waits, sends progress, answers verdicts, reasons and one line per engine (errors named)', async () => {
    const progress: Progress[] = [];
    const result = await call(mcp, 'analyze', { text: 'Alert: 8.8.8.8 contacted hxxps://www[.]example[.]com/login and 1.1.1.1', engines: ['reverse_dns', 'intel', 'virustotal'] }, (p) => progress.push(p));
    assert.notEqual(result.isError, true, textOf(result));
    const answer = result.structuredContent as unknown as Analyzed;
    assert.match(answer.analysis_id, /^[0-9a-f-]{36}$/);
    assert.equal(answer.link, `/results/${answer.analysis_id}`);
    assert.equal(answer.complete, true);
    assert.equal(answer.next, undefined);
    assert.deepEqual(answer.observables.map((o) => o.observable).sort(), ['1.1.1.1', '8.8.8.8', 'https://www.example.com/login']);

    const google = byObservable(answer.observables, '8.8.8.8');
    assert.equal(google.type, 'IPv4');
    assert.equal(google.verdict, 'malicious');
    assert.ok(google.reasons.some((r) => /score 92\/100/.test(r)), JSON.stringify(google.reasons));
    assert.equal(google.engines.intel, '92/100, c2');
    assert.match(google.engines.reverse_dns!, /dns\.google/);
    assert.match(google.engines.virustotal!, /5\/94/);
    const failed = byObservable(answer.observables, '1.1.1.1');
    assert.match(failed.engines.virustotal!, /^error: /);
    assert.equal(byObservable(answer.observables, 'https://www.example.com/login').type, 'URL');

    // Progress: never going back, never past the total; the last one sent is "complete" with the
    // total of lookups (the SDK's client may drop a notification read together with the answer, so
    // its arrival is not asserted here: tests/mcp-http.test.ts and the gated test see them).
    for (const p of progress) assert.ok(p.total !== undefined && p.progress <= p.total, JSON.stringify(p));
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress >= progress[i - 1]!.progress);
    const last = progress.at(-1);
    if (last?.message === 'complete') assert.equal(last.progress, last.total);

    const text = textOf(result);
    assert.ok(text.startsWith(`Analysis ${answer.analysis_id} complete: 3 observable(s). Full answers: get_results {"analysis_id": "${answer.analysis_id}"}.`), text);
    // Untrusted third-party data, said so; each text from outside a quoted JSON string.
    assert.ok(text.includes(`\n\n${UNTRUSTED}\n\n`), text);
    assert.match(text, /^"8\.8\.8\.8" \(IPv4\): malicious$/m);
    assert.match(text, /^ {2}why: "intel: score 92\/100 \(c2\)"$/m);
    assert.match(text, /^ {2}virustotal: "error: /m);
  });

  test('analyze: an engine set by "@name", and the default engines when none are given', async () => {
    const set = (await call(mcp, 'analyze', { text: '8.8.8.8', engines: ['@triage'] })).structuredContent as unknown as Analyzed;
    assert.equal(set.complete, true);
    assert.deepEqual(Object.keys(byObservable(set.observables, '8.8.8.8').engines).sort(), ['intel', 'reverse_dns']);
    // No progress token, no progress notification.
    const notifications = () => mcp.messages.filter((m) => m.includes('"notifications/progress"')).length;
    const before = notifications();
    const defaults = (await call(mcp, 'analyze', { text: 'example.com', ignore_cache: true })).structuredContent as unknown as Analyzed;
    assert.equal(notifications(), before);
    assert.equal(defaults.complete, true);
    assert.ok(Object.keys(byObservable(defaults.observables, 'example.com').engines).includes('rdap_whois'));
  });

  test('get_results: the result objects, whole; filtered by observables and engines', async () => {
    const { analysis_id: id } = (await call(mcp, 'analyze', { text: '8.8.8.8 example.com', engines: ['reverse_dns', 'intel'] })).structuredContent as unknown as Analyzed;
    const all = await call(mcp, 'get_results', { analysis_id: id });
    const whole = all.structuredContent as unknown as Results;
    assert.equal(whole.complete, true);
    assert.equal(whole.left_out, undefined);
    assert.equal(whole.results.length, 2);
    const google = byObservable(whole.results, '8.8.8.8');
    assert.deepEqual(google.reverse_dns, { reverse_dns: ['dns.google'] });
    assert.equal((google.intel as { score: number }).score, 92);
    assert.ok(textOf(all).startsWith(`2 of 2 result object(s) of analysis ${id}. ${UNTRUSTED}\n[`), textOf(all));

    const filtered = (await call(mcp, 'get_results', { analysis_id: id, observables: ['8.8.8.8'], engines: ['intel'] })).structuredContent as unknown as Results;
    assert.equal(filtered.results.length, 1);
    const only = filtered.results[0]!;
    assert.equal(only.observable, '8.8.8.8');
    assert.equal(only.reverse_dns, undefined);
    assert.deepEqual(only.intel, google.intel);
  });

  test('analyze: not complete after wait_seconds says so and how to continue; get_results later gives it', async () => {
    gate.hold();
    try {
      const progress: Progress[] = [];
      const result = await call(mcp, 'analyze', { text: '185.220.101.50', engines: ['gated', 'reverse_dns'], wait_seconds: 1 }, (p) => progress.push(p));
      assert.notEqual(result.isError, true, textOf(result));
      const answer = result.structuredContent as unknown as Analyzed;
      assert.equal(answer.complete, false);
      assert.ok(answer.next?.includes(`get_results with {"analysis_id": "${answer.analysis_id}"}`), answer.next);
      assert.match(answer.next!, /^Not complete after 1 s/);
      assert.ok(textOf(result).startsWith(`Analysis ${answer.analysis_id} is still running. `));
      assert.ok(answer.progress && answer.progress.done < answer.progress.total);
      assert.ok(progress.length >= 1, 'progress while waiting');
      for (const p of progress) assert.ok(p.total === undefined || p.progress < p.total);

      const running = await call(mcp, 'get_results', { analysis_id: answer.analysis_id });
      assert.equal((running.structuredContent as unknown as Results).complete, false);
      assert.deepEqual((running.structuredContent as unknown as Results).results, []);
      assert.match(textOf(running), /is not complete yet.*call get_results again/);
      gate.release();
      const done = await completed(mcp, answer.analysis_id);
      assert.equal((byObservable(done.results, '185.220.101.50').gated as { score: number }).score, 7);
    } finally {
      gate.release();
    }
  });

  test('tool errors: an unknown engine or analysis is a result with isError and the API\'s line', async () => {
    const unknown = await toolError(mcp, 'analyze', { text: 'example.com', engines: ['reverse_dns', 'nope'] });
    assert.match(unknown, /^unknown engine: nope \(valid engines: .*reverse_dns.*\)$/);
    const set = await toolError(mcp, 'analyze', { text: 'example.com', engines: ['@nope'] });
    assert.match(set, /^unknown engine set: @nope/);
    const nothing = await toolError(mcp, 'analyze', { text: 'nothing to see here', engines: ['reverse_dns'] });
    assert.match(nothing, /^no observable found in the text/);
    const id = '4f9c6d0e-0000-4000-8000-000000000000';
    assert.equal(await toolError(mcp, 'get_results', { analysis_id: id }), `analysis not found: ${id}`);
  });

  test('bad arguments: the protocol\'s invalid-params error naming the argument', async () => {
    assert.match(await invalid(mcp, 'analyze', {}), /"text" is required/);
    assert.match(await invalid(mcp, 'analyze', { text: '   ' }), /"text" must not be empty/);
    assert.match(await invalid(mcp, 'analyze', { text: 42 }), /"text" must be a string/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', wait_seconds: 601 }), /"wait_seconds" must be from 0 to 600/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', wait_seconds: -1 }), /"wait_seconds" must be from 0 to 600/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', wait_seconds: '5' }), /"wait_seconds" must be a number/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', engines: 'reverse_dns' }), /"engines" must be a list of strings/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', engines: [] }), /"engines" must name at least one engine/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', ignore_cache: 'yes' }), /"ignore_cache" must be true or false/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', wait: 5 }), /unknown argument "wait" \(arguments: text, file_base64, file_name, engines, ignore_cache, ignore_allowlist, tlp, pap, wait_seconds, callback_url\)/);
    assert.match(await invalid(mcp, 'get_results', {}), /"analysis_id" is required/);
    assert.match(await invalid(mcp, 'get_results', { analysis_id: '../etc/passwd' }), /"analysis_id" must be an analysis id/);
    assert.match(await invalid(mcp, 'get_results', { analysis_id: 'x', observables: 'a' }), /"observables" must be a list of strings/);
    assert.match(await invalid(mcp, 'list_engines', { type: 'Hostname' }), /"type" must be one of /);
    assert.match(await invalid(mcp, 'extract_observables', {}), /"text" is required/);
    assert.match(await invalid(mcp, 'no_such_tool', {}), /unknown tool: no_such_tool \(tools: analyze, get_results, list_engines, extract_observables, push_results\)/);
  });
});

describe('oas mcp: get_results is cut to mcp_max_result_chars', () => {
  let mcp: Session;
  before(async () => {
    mcp = await open(['--config', join(smallHome, 'oas.config.json')]);
  });

  test('many observables: what fits, a line naming the rest and how to ask; asking with filters gives the rest', async () => {
    const ips = Array.from({ length: 16 }, (_, i) => `45.33.32.${i + 10}`);
    const analyzed = (await call(mcp, 'analyze', { text: ips.join(' '), engines: ['reverse_dns', 'ipquery'] })).structuredContent as unknown as Analyzed;
    assert.equal(analyzed.complete, true);
    const first = await call(mcp, 'get_results', { analysis_id: analyzed.analysis_id });
    const cut = first.structuredContent as unknown as Results;
    assert.ok(cut.left_out, 'something was left out');
    assert.ok(cut.results.length >= 1 && cut.results.length < ips.length, `${cut.results.length} shown`);
    assert.ok(JSON.stringify(cut.results).length <= 1000);
    assert.match(cut.left_out, /within 1000 characters \(setting mcp_max_result_chars\)/);
    assert.ok(cut.left_out.includes(`get_results {"analysis_id": "${analyzed.analysis_id}", "observables": [...], "engines": [...]}`), cut.left_out);
    assert.ok(textOf(first).endsWith(`\n${cut.left_out}`));
    const shown = new Set(cut.results.map((r) => r.observable as string));
    const rest = ips.filter((ip) => !shown.has(ip));
    assert.ok(cut.left_out.includes(`${rest.length} observable(s): ${rest.join(', ')}`), cut.left_out);

    // The answers cut from a shown observable, then the other observables one at a time, as the line says.
    const got = new Map(cut.results.map((r) => [r.observable as string, r]));
    const notes = cut.results.flatMap((r) => Object.entries(r).filter(([, value]) => typeof value === 'string' && value.startsWith('left out (')).map(([key]) => [r.observable as string, key] as const));
    for (const [observable, key] of notes) {
      assert.ok(cut.left_out.includes(`the answers of ${observable} ${key} (too large)`), cut.left_out);
      const part = (await call(mcp, 'get_results', { analysis_id: analyzed.analysis_id, observables: [observable], engines: [key] })).structuredContent as unknown as Results;
      assert.equal(part.left_out, undefined);
      got.set(observable, { ...got.get(observable), ...part.results[0] });
    }
    for (const ip of rest) {
      const part = (await call(mcp, 'get_results', { analysis_id: analyzed.analysis_id, observables: [ip] })).structuredContent as unknown as Results;
      assert.equal(part.left_out, undefined);
      assert.equal(part.results.length, 1);
      got.set(ip, part.results[0]!);
    }
    assert.deepEqual([...got.keys()].sort(), [...ips].sort());
    for (const r of got.values()) assert.equal(typeof r.ipquery, 'object', JSON.stringify(r));
  });

  test('an answer larger than the limit even alone: a note saying so, not a request that would never fit', async () => {
    const analyzed = (await call(mcp, 'analyze', { text: '9.9.9.9', engines: ['reverse_dns', 'intel'] })).structuredContent as unknown as Analyzed;
    const cut = (await call(mcp, 'get_results', { analysis_id: analyzed.analysis_id })).structuredContent as unknown as Results;
    assert.equal(cut.results.length, 1);
    const [slim] = cut.results;
    assert.match(String(slim!.intel), /^left out \(\d+ characters\): larger than mcp_max_result_chars \(1000\) even alone; the analysis's web page shows it$/);
    assert.equal(slim!.reverse_dns, null);
    assert.equal(cut.left_out, 'Left out to stay within 1000 characters (setting mcp_max_result_chars): the answers of 9.9.9.9 intel (larger than the limit even alone: the analysis\'s web page shows them).');
    // The brief still has it in one line.
    assert.match(byObservable(analyzed.observables, '9.9.9.9').engines.intel!, /^10\/100, resolver$/);
  });
});

describe('oas mcp: get_results, notes included, stays within mcp_max_result_chars (issue 32)', () => {
  /** A few dozen characters over for the closing line would do; a third over would not. */
  const MARGIN = 40;
  const SETTINGS = [1000, 3016, 5000, 12_000];
  /** 24 addresses whose intel answers grow from a few dozen characters to about 3 000. */
  const growing = Array.from({ length: 24 }, (_, i) => `45.33.40.${i + 1}`);
  const sessions = new Map<number, Session>();

  before(async () => {
    growing.forEach((ip, i) => intel.records.set(ip, { score: 10 + i, category: 'scanner', tags: Array.from({ length: i * 4 }, (_, j) => `tag-${i}-${j}-of-a-growing-list`) }));
    for (const setting of SETTINGS) sessions.set(setting, await open(['--config', configFor(upstreams, { ...extra, mcp_max_result_chars: setting }).file]));
  });

  const analyses: [what: string, text: string, engines: string[]][] = [
    ['16 small answers', Array.from({ length: 16 }, (_, i) => `45.33.32.${i + 10}`).join(' '), ['reverse_dns', 'ipquery']],
    ['24 answers from tiny to 3 000 characters', growing.join(' '), ['intel', 'reverse_dns', 'ipquery']],
    ['one answer larger than most limits', '9.9.9.9 8.8.8.8', ['intel', 'reverse_dns']],
  ];

  test('cutResults over 2 000 made-up analyses: never a character over, and the JSON in the text is the results', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const id = '4f9c6d0e-0000-4000-8000-000000000003';
    for (let trial = 0; trial < 2000; trial++) {
      const results: ObservableResult[] = Array.from({ length: 1 + Math.floor(random() * 40) }, (_, i) => {
        const result: ObservableResult = {
          observable: random() < 0.2 ? `https://example.com/${'p'.repeat(Math.floor(random() * 300))}/${i}` : `10.0.${i}.${Math.floor(random() * 255)}`,
          type: 'IPv4',
          reversed_success: false,
        };
        for (let e = 0; e < 1 + Math.floor(random() * 4); e++) result[`engine${e}`] = { tags: Array.from({ length: Math.floor(random() ** 3 * 200) }, (_, j) => `tag-${j}`), nested: { list: [1, { deep: 'x' }] } };
        if (random() < 0.2) result.errors = { engine9: 'timeout after 5000 ms' };
        return result;
      });
      const max = [1000, 3016, 5000, 20_000][trial % 4]!;
      const cut = cutResults(results, max, id);
      assert.ok(cut.text.length <= max, `${max}: ${cut.text.length}`);
      const json = cut.text.slice(cut.text.indexOf('\n') + 1, cut.leftOut ? -cut.leftOut.length - 1 : undefined);
      assert.deepEqual(JSON.parse(json), cut.results);
      assert.equal(cut.leftOut === undefined, cut.results.length === results.length && JSON.stringify(cut.results) === JSON.stringify(results));
    }
  });

  for (const [what, text, engines] of analyses) {
    test(`${what}: the whole text within the setting, whole or cut, filtered or not`, async () => {
      for (const [setting, mcp] of sessions) {
        const analyzed = (await call(mcp, 'analyze', { text, engines })).structuredContent as unknown as Analyzed;
        assert.equal(analyzed.complete, true);
        const observables = analyzed.observables.map((o) => o.observable);
        for (const args of [{}, { observables: observables.slice(0, 5) }, { engines: engines.slice(0, 1) }, { observables: observables.slice(-3), engines: engines.slice(-1) }]) {
          const answer = await call(mcp, 'get_results', { analysis_id: analyzed.analysis_id, ...args });
          const structured = answer.structuredContent as unknown as Results;
          const length = textOf(answer).length;
          assert.ok(length <= setting + MARGIN, `${setting} ${JSON.stringify(args)}: ${length} characters (${structured.results.length} result(s) shown${structured.left_out ? `; ${structured.left_out}` : ''})`);
          if (structured.left_out) assert.ok(textOf(answer).endsWith(structured.left_out));
        }
      }
    });
  }
});

describe('oas mcp --cyberbro-tools', () => {
  let mcp: Session;
  before(async () => {
    mcp = await open(['--cyberbro-tools']);
  });

  test('the five tools of mcp-cyberbro besides the others', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['analyze', 'get_results', 'list_engines', 'extract_observables', 'push_results', 'analyze_observable', 'is_analysis_complete', 'get_analysis_results', 'get_engines', 'get_web_url']);
    assert.deepEqual(tools.find((t) => t.name === 'analyze_observable')!.inputSchema.required, ['text', 'engines']);
  });

  test('analyze_observable, is_analysis_complete, get_analysis_results, get_web_url, get_engines', async () => {
    const started = await call(mcp, 'analyze_observable', { text: '8.8.8.8 example.com', engines: ['reverse_dns', 'intel'] });
    const { analysis_id: id, link, web_url } = started.structuredContent as { analysis_id: string; link: string; web_url: string };
    assert.equal(link, `/results/${id}`);
    assert.equal(web_url, `/results/${id}`);
    assert.deepEqual(JSON.parse(textOf(started)), started.structuredContent);
    let complete = false;
    for (let i = 0; i < 300 && !complete; i++) {
      complete = ((await call(mcp, 'is_analysis_complete', { analysis_id: id })).structuredContent as { complete: boolean }).complete;
      if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(complete);
    const results = await call(mcp, 'get_analysis_results', { analysis_id: id });
    const list = (results.structuredContent as { result: Record<string, unknown>[] }).result;
    assert.deepEqual(JSON.parse(textOf(results)), list);
    assert.deepEqual(byObservable(list, '8.8.8.8').reverse_dns, { reverse_dns: ['dns.google'] });
    assert.equal(((await call(mcp, 'get_web_url', { analysis_id: id })).structuredContent as { web_url: string }).web_url, `/results/${id}`);

    const engines = ((await call(mcp, 'get_engines')).structuredContent as { engines: { name: string; supports: string[]; description: string }[] }).engines;
    const names = engines.map((e) => e.name);
    assert.ok(names.includes('reverse_dns') && names.includes('virustotal') && names.includes('intel'), names.join(' '));
    assert.ok(!names.includes('shodan'), 'only the engines that can run');
    assert.ok(engines.find((e) => e.name === 'virustotal')!.supports.includes('IPv4'));
  });

  test('their errors: unknown analysis, not complete yet, bad arguments', async () => {
    const id = '4f9c6d0e-0000-4000-8000-000000000001';
    assert.equal(await toolError(mcp, 'is_analysis_complete', { analysis_id: id }), `analysis not found: ${id}`);
    assert.equal(await toolError(mcp, 'get_analysis_results', { analysis_id: id }), `analysis not found: ${id}`);
    assert.match(await toolError(mcp, 'analyze_observable', { text: 'example.com', engines: ['nope'] }), /^unknown engine: nope/);
    gate.hold();
    try {
      const started = (await call(mcp, 'analyze_observable', { text: '185.220.101.51', engines: ['gated'] })).structuredContent as { analysis_id: string };
      const id = { analysis_id: started.analysis_id };
      assert.equal(((await call(mcp, 'is_analysis_complete', id)).structuredContent as { complete: boolean }).complete, false);
      assert.match(await toolError(mcp, 'get_analysis_results', id), /^analysis not complete yet: poll is_analysis_complete/);
    } finally {
      gate.release();
    }
    assert.match(await invalid(mcp, 'analyze_observable', { text: 'example.com' }), /"engines" is required/);
    assert.match(await invalid(mcp, 'analyze_observable', { text: 'example.com', engines: 'reverse_dns' }), /"engines" must be a list of strings/);
    assert.match(await invalid(mcp, 'get_web_url', {}), /"analysis_id" is required/);
    assert.match(await invalid(mcp, 'get_engines', { all: true }), /unknown argument "all" \(arguments: none\)/);
  });
});

describe('oas mcp --server', () => {
  test('against oas serve with its token: the tools run there, links to its pages', async () => {
    const mcp = await open(['--server', served.url, '--token', TOKEN]);
    await waitFor(() => mcp.stderr().includes('\n'), 'the line on standard error');
    assert.equal(mcp.stderr(), `oas mcp: ready on standard input and output; analyses run on ${served.url}\n`);
    const progress: Progress[] = [];
    const analyzed = await call(mcp, 'analyze', { text: '8.8.8.8 and 1.1.1.1', engines: ['reverse_dns', 'intel', 'virustotal'] }, (p) => progress.push(p));
    const answer = analyzed.structuredContent as unknown as Analyzed;
    assert.equal(answer.complete, true, textOf(analyzed));
    assert.equal(answer.link, `${served.url}/results/${answer.analysis_id}`);
    assert.equal(answer.progress, null, 'the API does not tell');
    const google = byObservable(answer.observables, '8.8.8.8');
    assert.equal(google.verdict, 'malicious');
    assert.match(google.engines.reverse_dns!, /dns\.google/);
    assert.match(byObservable(answer.observables, '1.1.1.1').engines.virustotal!, /^error: /);

    const results = (await call(mcp, 'get_results', { analysis_id: answer.analysis_id, engines: ['reverse_dns'] })).structuredContent as unknown as Results;
    assert.deepEqual(byObservable(results.results, '8.8.8.8').reverse_dns, { reverse_dns: ['dns.google'] });
    // The same analysis through the API.
    const api = await fetch(`${served.url}/api/results/${answer.analysis_id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(api.status, 200);

    const listed = (await call(mcp, 'list_engines')).structuredContent as { engines: { id: string; configured: boolean }[]; sets: { name: string }[] };
    assert.equal(listed.engines.find((e) => e.id === 'intel')?.configured, true, 'the server\'s view');
    assert.deepEqual(listed.sets.map((s) => s.name), ['triage']);

    assert.match(await toolError(mcp, 'analyze', { text: 'example.com', engines: ['nope'] }), /^unknown engine: nope \(valid engines: /);
    const id = '4f9c6d0e-0000-4000-8000-000000000002';
    assert.equal(await toolError(mcp, 'get_results', { analysis_id: id }), `analysis not found: ${id}`);
    await mcp.close();
  });

  test('OAS_SERVER and OAS_API_TOKEN; a wrong token is a tool error saying so', async () => {
    const fromEnv = await open([], { env: { OAS_SERVER: served.url, OAS_API_TOKEN: TOKEN } });
    const answer = (await call(fromEnv, 'analyze', { text: '8.8.8.8', engines: ['reverse_dns'] })).structuredContent as unknown as Analyzed;
    assert.equal(answer.complete, true);
    assert.equal(answer.link, `${served.url}/results/${answer.analysis_id}`);
    await fromEnv.close();

    const wrong = await open(['--server', served.url, '--token', WRONG_TOKEN]);
    assert.match(await toolError(wrong, 'analyze', { text: '8.8.8.8', engines: ['reverse_dns'] }), /^the server at http:\/\/127\.0\.0\.1:\d+ refused the API token \(HTTP 401 Unauthorized\): check --token or OAS_API_TOKEN$/);
    await wrong.close();
    const none = await open(['--server', served.url]);
    assert.match(await toolError(none, 'analyze', { text: '8.8.8.8', engines: ['reverse_dns'] }), /^the server at http:\/\/127\.0\.0\.1:\d+ needs an API token \(HTTP 401 Unauthorized\): give it with --token or OAS_API_TOKEN$/);
    await none.close();
  });

  test('against a Cyberbro server', async () => {
    const mcp = await open(['--server', cyberbro.url, '--cyberbro-tools']);
    const answer = (await call(mcp, 'analyze', { text: '8.8.8.8 example.com', engines: ['reverse_dns'] })).structuredContent as unknown as Analyzed;
    assert.equal(answer.complete, true);
    assert.equal(answer.link, `${cyberbro.url}/results/${answer.analysis_id}`);
    // Its results spelled as ours (HEAD writes IPV4 and an "extension": {} placeholder), as oas analyze --server reads them.
    const google = byObservable(answer.observables, '8.8.8.8');
    assert.equal(google.type, 'IPv4');
    assert.deepEqual(google.engines, { reverse_dns: 'dns.google' });
    assert.deepEqual(byObservable(answer.observables, 'example.com').engines, { reverse_dns: '93.184.215.14' });
    const results = (await call(mcp, 'get_results', { analysis_id: answer.analysis_id })).structuredContent as unknown as Results;
    assert.equal(results.results.length, 2);
    assert.ok(cyberbro.analyses.has(answer.analysis_id));
    const engines = ((await call(mcp, 'list_engines')).structuredContent as { engines: { id: string }[] }).engines;
    assert.ok(engines.some((e) => e.id === 'reverse_dns'), 'the local catalog when the server has no /ui/engines');
    const web = (await call(mcp, 'get_web_url', { analysis_id: answer.analysis_id })).structuredContent as { web_url: string };
    assert.equal(web.web_url, `${cyberbro.url}/results/${answer.analysis_id}`);
    await mcp.close();
  });
});

describe('oas mcp: refused at start', () => {
  test('a configuration error stops it before any message: one line on standard error', async () => {
    const dir = tempDir('oas-mcp-bad-');
    writeFileSync(join(dir, 'oas.config.json'), JSON.stringify({ mcp_max_result_chars: 10 }));
    const run = await rawRun(['--config', join(dir, 'oas.config.json')], '');
    assert.notEqual(run.code, 0);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /mcp_max_result_chars.*at least 1000/);
    noStack(run.stderr);
  });

  test('usage errors: --token without --server, --redis with --server; nothing on standard output', async () => {
    for (const args of [['--token', TOKEN], ['--server', served.url, '--redis', 'redis://127.0.0.1:1']]) {
      const run = await rawRun(args, '');
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, /^oas: /);
      noStack(run.stderr);
    }
  });
});

/** `oas mcp args` with `input` on standard input, to its end. */
function rawRun(args: string[], input: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = killAtExit(spawn(process.execPath, [BIN, 'mcp', ...args], { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...tmpEnv(), ...ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      rawOutputs.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('oas mcp: standard output and secrets', () => {
  test('standard output holds only JSON-RPC messages, one a line; it ends with its input', async () => {
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_engines', arguments: {} } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'analyze', arguments: { text: '8.8.8.8 1.1.1.1', engines: ['reverse_dns', 'virustotal'] } } },
    ];
    // The analysis must answer before the input ends: feed the lines, wait for id 4, then close.
    const child = killAtExit(spawn(process.execPath, [BIN, 'mcp'], { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...tmpEnv(), ...ENV }, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const answered = new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // Complete lines only; any that is not JSON fails the test below.
      if (stdout.split('\n').slice(0, -1).some((l) => /"id":4[,}]/.test(l))) resolve();
    }));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    child.stdin.write(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    await answered;
    child.stdin.end();
    assert.equal(await exited, 0);
    rawOutputs.push(stdout, stderr);
    assert.ok(stdout.endsWith('\n'));
    const messages = stdout.slice(0, -1).split('\n').map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; result?: { tools?: unknown[]; isError?: boolean } });
    for (const message of messages) assert.equal(message.jsonrpc, '2.0');
    assert.deepEqual(messages.map((m) => m.id), [1, 2, 3, 4]);
    assert.equal(messages[1]!.result!.tools!.length, 5);
    assert.notEqual(messages[3]!.result!.isError, true);
    assert.match(stderr, /^oas mcp: ready on standard input and output; analyses run here \(data in .*\)\n$/);
  });

  test('a custom engine\'s wrong key (401 from its API) is an error line without the key', async () => {
    const mcp = await open([], { env: { INTEL_API_KEY: WRONG_INTEL_KEY } });
    const answer = (await call(mcp, 'analyze', { text: '8.8.8.8 example.com', engines: ['intel', 'intel_search', 'intel_domain'], ignore_cache: true })).structuredContent as unknown as Analyzed;
    assert.equal(answer.complete, true);
    assert.match(byObservable(answer.observables, '8.8.8.8').engines.intel!, /^error: .*401/);
    assert.match(byObservable(answer.observables, 'example.com').engines.intel_domain!, /^error: .*401/);
    await call(mcp, 'get_results', { analysis_id: answer.analysis_id });
    await mcp.close();
  });

  test('no secret in any message from the server, nor on its standard error', () => {
    const seen = [...sessions.flatMap((s) => [...s.messages, s.stderr()]), ...rawOutputs, served.log()];
    assert.ok(sessions.reduce((n, s) => n + s.messages.length, 0) > 100, 'every message was recorded');
    assert.ok(seen.join('').includes('error: '), 'the failures were seen');
    for (const text of seen) {
      for (const secret of SECRETS) {
        for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')])) {
          assert.ok(!text.includes(form), `a message holds the secret ${secret}: ${text.slice(0, 300)}`);
        }
      }
      noStack(text);
      assert.doesNotMatch(text, /\\n\s+at .+:\d+:\d+/, 'no stack trace in a message');
    }
  });
});
