/**
 * `/mcp` on a real `oas serve` (subprocess), driven by the official SDK's client over the
 * Streamable HTTP transport, engines on loopback fakes: behind the API token (401 without it), the
 * tools (the five of mcp-cyberbro by the setting mcp_cyberbro_tools), progress notifications on the
 * request's stream, `complete: false` after `wait_seconds`, tool errors with the API's lines, bad
 * arguments, 405 for GET and DELETE, the body limit (413), the Host check (421), the analyses'
 * rate limit, `mcp: false` (and OAS_MCP) leaving it out, and no secret in any answer nor in the
 * server's log. Loopback only; no timing assertion.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { FakeHttpServer } from './fakes/http.js';
import { INTEL_KEY, type InternalIntelFake } from './fakes/internal-intel.js';
import { noStack } from './helpers/cli.js';
import { call, Gate, startMcpUpstreams, invalid, textOf, toolError, type Analyzed, type McpSession, type Results } from './helpers/mcp.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'OASSECRET-mcp-http-token-Wm3Kd8Zq1Vx5';
const WRONG_TOKEN = 'OASSECRET-wrong-http-token-Hy7Bf2Ns4Qe9';
const VT_KEY = 'OASSECRET-vt-http-8Jr2Lc6Pn0Ts';
const SECRETS = [TOKEN, WRONG_TOKEN, VT_KEY, INTEL_KEY];
const ENV = { OAS_VIRUSTOTAL_API_KEY: VT_KEY, INTEL_API_KEY: INTEL_KEY };
const BEARER = { authorization: `Bearer ${TOKEN}` };
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };


let upstreams: Upstreams;
let intel: InternalIntelFake;
let vt: FakeHttpServer;
const gate = new Gate();
/** api_token, mcp_cyberbro_tools, a small max_body_bytes, allowed_hosts. */
let guarded: ServeProcess;
/** rate_limit_per_minute 1, no token. */
let limited: ServeProcess;
/** mcp false in the configuration; and OAS_MCP=false. */
let off: ServeProcess;
let offByEnv: ServeProcess;

/** Every answer's body as the client received it (read from a clone). */
const bodies: Promise<string>[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  bodies.push(res.clone().text().catch(() => ''));
  return res;
};

type Session = McpSession;
const sessions: Session[] = [];

function transportFor(base: string, headers: Record<string, string>): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers }, fetch: recordingFetch });
}

/** The SDK's client on `base`/mcp with these headers; the tools listed (so the client validates structured output). */
async function connect(base: string, headers: Record<string, string> = BEARER): Promise<Session> {
  const transport = transportFor(base, headers);
  const messages: string[] = [];
  transport.onmessage = (message) => messages.push(JSON.stringify(message));
  const client = new Client({ name: 'oas-tests', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const session: Session = { client, messages, close: () => client.close() };
  sessions.push(session);
  return session;
}


const byObservable = <T extends object>(list: T[], observable: string): T => {
  const found = list.find((o) => (o as { observable?: unknown }).observable === observable);
  assert.ok(found, `${observable} in ${JSON.stringify(list.map((o) => (o as { observable?: unknown }).observable))}`);
  return found;
};

async function completed(session: Session, id: string): Promise<Results> {
  for (let i = 0; i < 300; i++) {
    const result = await call(session, 'get_results', { analysis_id: id });
    assert.notEqual(result.isError, true, textOf(result));
    const structured = result.structuredContent as unknown as Results;
    if (structured.complete) return structured;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`analysis ${id} not complete`);
}

/** A request with the Host header as given (fetch sets its own), else the server's address. */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, headers: { host: url.host, ...headers, 'content-length': String(Buffer.byteLength(body)) }, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        bodies.push(Promise.resolve(text));
        resolve({ status: res.statusCode!, headers: res.headers, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  upstreams = await startUpstreams();
  let extra: Record<string, unknown>;
  ({ intel, vt, extra } = await startMcpUpstreams(gate, { '8.8.8.8': { score: 92, category: 'c2', tags: ['botnet'] } }));
  const files = {
    guarded: configFor(upstreams, { ...extra, api_token: TOKEN, mcp_cyberbro_tools: true, max_body_bytes: 16384, max_upload_bytes: 4096, allowed_hosts: ['oas.team.example'] }),
    limited: configFor(upstreams, { ...extra, rate_limit_per_minute: 1 }),
    off: configFor(upstreams, { mcp: false }),
    offByEnv: configFor(upstreams),
  };
  [guarded, limited, off, offByEnv] = await Promise.all([
    spawnServe(files.guarded.file, { cwd: files.guarded.dir, env: ENV }),
    spawnServe(files.limited.file, { cwd: files.limited.dir, env: ENV }),
    spawnServe(files.off.file, { cwd: files.off.dir }),
    spawnServe(files.offByEnv.file, { cwd: files.offByEnv.dir, env: { OAS_MCP: 'false' } }),
  ]);
});

after(async () => {
  gate.release();
  await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  await Promise.all([guarded?.stop(), limited?.stop(), off?.stop(), offByEnv?.stop()]);
  await Promise.all([vt?.close(), intel?.close()]);
  await upstreams?.close();
});

describe('/mcp behind api_token', () => {
  test('without the token, or with a wrong one: 401, and the client cannot connect', async () => {
    for (const headers of [{}, { authorization: `Bearer ${WRONG_TOKEN}` }, { 'x-api-key': WRONG_TOKEN }] as Record<string, string>[]) {
      const client = new Client({ name: 'oas-tests', version: '1.0.0' });
      const error = await client.connect(transportFor(guarded.url, headers)).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof StreamableHTTPError, String(error));
      assert.equal(error.code, 401, error.message);
      await client.close();
      const res = await raw(guarded.url, 'POST', '/mcp', { ...MCP_HEADERS, ...headers }, JSON.stringify(INITIALIZE));
      assert.equal(res.status, 401);
      assert.ok(!res.body.includes('"result"'), res.body);
    }
  });

  test('with the token (Bearer or X-API-Key): the four tools and, by mcp_cyberbro_tools, the five of mcp-cyberbro', async () => {
    for (const headers of [BEARER, { 'x-api-key': TOKEN }]) {
      const mcp = await connect(guarded.url, headers);
      const { tools } = await mcp.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['analyze', 'get_results', 'list_engines', 'extract_observables', 'push_results', 'analyze_observable', 'is_analysis_complete', 'get_analysis_results', 'get_engines', 'get_web_url']);
      for (const tool of tools.slice(0, 4)) assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.equal(mcp.client.getServerVersion()?.name, 'oas');
      await mcp.close();
    }
  });

  test('analyze: progress notifications on the request\'s stream; verdicts, engine lines, the page\'s absolute link', async () => {
    const mcp = await connect(guarded.url);
    const progress: Progress[] = [];
    const result = await call(mcp, 'analyze', { text: '8.8.8.8 and 1.1.1.1 and example.com', engines: ['reverse_dns', 'intel', 'virustotal'] }, (p) => progress.push(p));
    assert.notEqual(result.isError, true, textOf(result));
    const answer = result.structuredContent as unknown as Analyzed;
    assert.equal(answer.complete, true);
    assert.equal(answer.link, `${guarded.url}/results/${answer.analysis_id}`);
    const google = byObservable(answer.observables, '8.8.8.8');
    assert.equal(google.verdict, 'malicious');
    assert.deepEqual(google.reasons.filter((r) => r.startsWith('intel: ')), ['intel: score 92/100 (c2)']);
    assert.equal(google.engines.reverse_dns, 'dns.google');
    assert.match(byObservable(answer.observables, '1.1.1.1').engines.virustotal!, /^error: HTTP 401/);
    assert.ok(progress.length >= 1);
    // The last one sent is "complete" (the SDK's client may drop one read together with the answer).
    const last = progress.at(-1)!;
    if (last.message === 'complete') assert.equal(last.progress, last.total);
    else assert.ok(last.total !== undefined && last.progress <= last.total, JSON.stringify(last));

    // The same analysis through the API, and its page.
    const api = await fetch(`${guarded.url}/api/results/${answer.analysis_id}`, { headers: BEARER });
    assert.equal(api.status, 200);
    const results = (await call(mcp, 'get_results', { analysis_id: answer.analysis_id })).structuredContent as unknown as Results;
    assert.deepEqual(results.results, await api.json());
  });

  test('analyze: complete false after wait_seconds, how to continue; get_results later gives it', async () => {
    const mcp = await connect(guarded.url);
    gate.hold();
    try {
      const progress: Progress[] = [];
      const answer = (await call(mcp, 'analyze', { text: '185.220.101.60', engines: ['gated'], wait_seconds: 1 }, (p) => progress.push(p))).structuredContent as unknown as Analyzed;
      assert.equal(answer.complete, false);
      assert.ok(answer.next?.includes(`Call get_results with {"analysis_id": "${answer.analysis_id}"}`), answer.next);
      assert.ok(progress.length >= 1, 'progress while waiting');
      gate.release();
      const done = await completed(mcp, answer.analysis_id);
      assert.equal((byObservable(done.results, '185.220.101.60').gated as { score: number }).score, 7);
    } finally {
      gate.release();
    }
  });

  test('list_engines, extract_observables', async () => {
    const mcp = await connect(guarded.url);
    const listed = (await call(mcp, 'list_engines', { type: 'IPv4' })).structuredContent as { engines: { id: string; configured: boolean; custom?: boolean; types: string[] }[]; sets: unknown[] };
    assert.equal(listed.engines.find((e) => e.id === 'provider_24')?.configured, true);
    assert.equal(listed.engines.find((e) => e.id === 'intel')?.custom, true);
    for (const e of listed.engines) assert.ok(e.types.includes('IPv4'), e.id);
    assert.deepEqual(listed.sets, [{ name: 'triage', engines: ['reverse_dns', 'intel'] }]);
    const extracted = (await call(mcp, 'extract_observables', { text: 'malware-host[.]net and 44d88612fea8a8f36de82e1278abb02f' })).structuredContent;
    assert.deepEqual(extracted, { observables: [{ observable: 'malware-host.net', type: 'FQDN' }, { observable: '44d88612fea8a8f36de82e1278abb02f', type: 'MD5' }] });
  });

  test('the five tools of mcp-cyberbro', async () => {
    const mcp = await connect(guarded.url);
    const started = (await call(mcp, 'analyze_observable', { text: '8.8.8.8', engines: ['reverse_dns', 'intel'] })).structuredContent as { analysis_id: string; link: string; web_url: string };
    const id = started.analysis_id;
    assert.equal(started.link, `/results/${id}`);
    assert.equal(started.web_url, `${guarded.url}/results/${id}`);
    let complete = false;
    for (let i = 0; i < 300 && !complete; i++) {
      complete = ((await call(mcp, 'is_analysis_complete', { analysis_id: id })).structuredContent as { complete: boolean }).complete;
      if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(complete);
    const list = ((await call(mcp, 'get_analysis_results', { analysis_id: id })).structuredContent as { result: Record<string, unknown>[] }).result;
    const api = await fetch(`${guarded.url}/api/results/${id}`, { headers: BEARER });
    assert.deepEqual(list, await api.json());
    assert.equal(((await call(mcp, 'get_web_url', { analysis_id: id })).structuredContent as { web_url: string }).web_url, `${guarded.url}/results/${id}`);
    const engines = ((await call(mcp, 'get_engines')).structuredContent as { engines: { name: string; supports: string[] }[] }).engines;
    assert.ok(engines.some((e) => e.name === 'virustotal' && e.supports.includes('MD5')));
    assert.ok(!engines.some((e) => e.name === 'shodan'), 'only the engines that can run');
  });

  test('tool errors carry the API\'s lines: an unknown engine, an unknown analysis', async () => {
    const mcp = await connect(guarded.url);
    const res = await fetch(`${guarded.url}/api/analyze`, { method: 'POST', headers: { ...BEARER, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns', 'nope'] }) });
    assert.equal(res.status, 400);
    const { error: apiLine } = (await res.json()) as { error: string };
    assert.match(apiLine, /^unknown engine: nope/);
    assert.equal(await toolError(mcp, 'analyze', { text: 'example.com', engines: ['reverse_dns', 'nope'] }), apiLine);
    assert.equal(await toolError(mcp, 'analyze_observable', { text: 'example.com', engines: ['reverse_dns', 'nope'] }), apiLine);

    const id = '4f9c6d0e-0000-4000-8000-000000000009';
    const missing = await fetch(`${guarded.url}/api/results/${id}`, { headers: BEARER });
    assert.equal(missing.status, 404);
    const { error: notFound } = (await missing.json()) as { error: string };
    assert.equal(notFound, `analysis not found: ${id}`);
    assert.equal(await toolError(mcp, 'get_results', { analysis_id: id }), notFound);
    assert.equal(await toolError(mcp, 'is_analysis_complete', { analysis_id: id }), notFound);
  });

  test('bad arguments: invalid params naming the argument', async () => {
    const mcp = await connect(guarded.url);
    assert.match(await invalid(mcp, 'analyze', {}), /"text" is required/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', wait_seconds: 601 }), /"wait_seconds" must be from 0 to 600/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', engines: 'reverse_dns' }), /"engines" must be a list of strings/);
    assert.match(await invalid(mcp, 'analyze', { text: 'example.com', engine: ['reverse_dns'] }), /unknown argument "engine"/);
    assert.match(await invalid(mcp, 'get_results', { analysis_id: 42 }), /"analysis_id" must be a string/);
    assert.match(await invalid(mcp, 'is_analysis_complete', {}), /"analysis_id" is required/);
  });

  test('GET and DELETE are 405 (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${guarded.url}/mcp`, { method, headers: { ...BEARER, accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      const body = (await res.json()) as { error: { message: string } };
      assert.match(body.error.message, /^method not allowed: this MCP endpoint is stateless; send requests with POST$/);
    }
    // Without the token, the token comes first.
    assert.equal((await fetch(`${guarded.url}/mcp`)).status, 401);
  });

  test('a body over max_body_bytes (and room for a file_base64 of max_upload_bytes) is 413', async () => {
    // 16384 bytes and 4096 as base64 (5464 characters): a body of 23 000 is over.
    const big = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'extract_observables', arguments: { text: `8.8.8.8 ${'x'.repeat(23_000)}` } } });
    const res = await raw(guarded.url, 'POST', '/mcp', { ...MCP_HEADERS, ...BEARER }, big);
    assert.equal(res.status, 413);
    assert.match(res.body, /larger than max_body_bytes \(16384\) plus a file_base64 of max_upload_bytes \(4096\)/);
    // A body within the limit is answered.
    const small = await raw(guarded.url, 'POST', '/mcp', { ...MCP_HEADERS, ...BEARER }, JSON.stringify(INITIALIZE));
    assert.equal(small.status, 200, small.body);
  });

  test('a foreign Host is 421, even with the token; a name of allowed_hosts is answered', async () => {
    const port = new URL(guarded.url).port;
    for (const host of ['evil.example', `evil.example:${port}`]) {
      const res = await raw(guarded.url, 'POST', '/mcp', { ...MCP_HEADERS, ...BEARER, host }, JSON.stringify(INITIALIZE));
      assert.equal(res.status, 421, host);
      assert.match(res.body, /allowed_hosts/);
      assert.ok(!res.body.includes('"result"'));
    }
    const allowed = await raw(guarded.url, 'POST', '/mcp', { ...MCP_HEADERS, ...BEARER, host: 'oas.team.example' }, JSON.stringify(INITIALIZE));
    assert.equal(allowed.status, 200, allowed.body);
    assert.match(allowed.body, /"serverInfo"/);
  });
});

describe('/mcp and rate_limit_per_minute', () => {
  test('analyze counts as an analysis: the second in the minute is a tool error naming the setting; the other tools go on', async () => {
    const mcp = await connect(limited.url, {});
    // Bad arguments are refused before the count.
    await invalid(mcp, 'analyze', { text: 'example.com', wait_seconds: 601 });
    const first = await call(mcp, 'analyze', { text: '8.8.8.8', engines: ['reverse_dns'] });
    assert.notEqual(first.isError, true, textOf(first));
    const { analysis_id: id } = first.structuredContent as unknown as Analyzed;
    assert.match(await toolError(mcp, 'analyze', { text: '8.8.8.8', engines: ['reverse_dns'] }), /^too many analyses: at most 1 per minute per client \(setting rate_limit_per_minute\); retry in \d+ s$/);
    assert.match(await toolError(mcp, 'analyze', { text: 'example.com' }), /rate_limit_per_minute/);
    // The same count as the API's.
    const api = await fetch(`${limited.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) });
    assert.equal(api.status, 429);
    assert.equal((await call(mcp, 'get_results', { analysis_id: id })).isError, undefined);
    assert.notEqual((await call(mcp, 'list_engines')).isError, true);
  });
});

describe('mcp: false', () => {
  test('no /mcp (404), by the setting or OAS_MCP; the API is still there', async () => {
    for (const server of [off, offByEnv]) {
      for (const method of ['POST', 'GET']) {
        const res = await fetch(`${server.url}/mcp`, { method, headers: MCP_HEADERS, ...(method === 'POST' ? { body: JSON.stringify(INITIALIZE) } : {}) });
        assert.equal(res.status, 404, `${method} ${await res.text()}`);
      }
      const client = new Client({ name: 'oas-tests', version: '1.0.0' });
      const error = await client.connect(transportFor(server.url, {})).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof StreamableHTTPError && error.code === 404, String(error));
      await client.close();
      assert.equal((await fetch(`${server.url}/ui/engines`)).status, 200);
    }
  });
});

describe('/mcp: secrets', () => {
  test('no secret in any answer or message, nor in the servers\' logs', async () => {
    const seen = [...(await Promise.all(bodies)), ...sessions.flatMap((s) => s.messages), guarded.log(), limited.log()];
    assert.ok(seen.join('').includes('error: HTTP 401'), 'the upstream\'s 401 was seen');
    assert.ok(sessions.reduce((n, s) => n + s.messages.length, 0) > 30, 'the messages were recorded');
    for (const text of seen) {
      for (const secret of SECRETS) {
        for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')])) {
          assert.ok(!text.includes(form), `an answer holds the secret ${secret}: ${text.slice(0, 300)}`);
        }
      }
      noStack(text);
      assert.doesNotMatch(text, /\\n\s+at .+:\d+:\d+/, 'no stack trace in an answer');
    }
  });
});
