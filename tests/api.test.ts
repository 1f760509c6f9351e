/**
 * The HTTP API over real HTTP on an ephemeral port, with the registered engines pointed at
 * loopback fakes: the spec's three endpoints, every status code, caching, restarts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { listen, type RunningServer } from '../src/server/listen.js';
import { dohHandler } from './fakes/doh.js';
import { configFor, startUpstreams, ZONE, type Upstreams } from './helpers/upstreams.js';

let upstreams: Upstreams;
let app: App;
let server: RunningServer;
let config: ReturnType<typeof configFor>;

async function start(): Promise<void> {
  app = await createApp({ file: config.file, flags: { port: 0 }, env: {} });
  server = await listen(app);
}

async function stop(): Promise<void> {
  await server.close();
  await app.close();
}

function post(body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Response> {
  return fetch(`${server.url}/api/analyze`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function analyze(body: unknown): Promise<{ id: string; results: Record<string, unknown>[] }> {
  const res = await post(body);
  assert.equal(res.status, 200, await res.clone().text());
  const { analysis_id: id } = (await res.json()) as { analysis_id: string };
  for (;;) {
    const status = (await (await fetch(`${server.url}/api/is_analysis_complete/${id}`)).json()) as { complete: boolean };
    if (status.complete) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const results = await fetch(`${server.url}/api/results/${id}`);
  assert.equal(results.status, 200);
  return { id, results: (await results.json()) as Record<string, unknown>[] };
}

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams, { max_body_bytes: 4096 });
  await start();
});
after(async () => {
  await stop();
  await upstreams.close();
});

describe('POST /api/analyze', () => {
  test('returns a UUID v4 and its link at once; results follow the spec', async () => {
    const res = await post({ text: 'hxxps://www[.]example[.]com/login and 8.8.8.8', engines: ['reverse_dns', 'rdap_whois', 'public_dns'] });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /application\/json/);
    const handle = (await res.json()) as { analysis_id: string; link: string };
    assert.deepEqual(Object.keys(handle), ['analysis_id', 'link']);
    assert.match(handle.analysis_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(handle.link, `/results/${handle.analysis_id}`);

    let complete = false;
    while (!complete) {
      complete = ((await (await fetch(`${server.url}/api/is_analysis_complete/${handle.analysis_id}`)).json()) as { complete: boolean }).complete;
    }
    const results = (await (await fetch(`${server.url}/api/results/${handle.analysis_id}`)).json()) as Record<string, unknown>[];
    assert.equal(results.length, 2);
    const [url, ip] = results;
    assert.equal(url!.observable, 'https://www.example.com/login');
    assert.equal(url!.type, 'URL');
    assert.equal(url!.reversed_success, true);
    assert.deepEqual(url!.reverse_dns, { reverse_dns: ['93.184.215.14'] });
    assert.equal((url!.rdap_whois as { registrar: string }).registrar !== undefined, true);
    assert.equal((url!.rdap_whois as { data_source: string }).data_source, 'rdap');
    assert.ok(Array.isArray((url!.public_dns as { Answer: unknown[] }).Answer));
    assert.equal(ip!.observable, '8.8.8.8');
    assert.equal(ip!.type, 'IPv4');
    assert.deepEqual(ip!.reverse_dns, { reverse_dns: ['dns.google'] });
    assert.equal(ip!.rdap_whois, null, 'rdap_whois does not apply to an IP: null');
  });

  test('result keys are the names the caller used (alias or older id)', async () => {
    const { results } = await analyze({ text: 'example.com', engines: ['google_dns', 'rdap'] });
    // Then seen (issue 38): what earlier analyses of the store said of it, after the engines.
    assert.deepEqual(Object.keys(results[0]!), ['observable', 'type', 'reversed_success', 'google_dns', 'rdap', 'seen']);
    assert.equal(Object.keys(results[0]!.rdap as object).length, 10, 'older field set');
    assert.equal(results[0]!.type, 'FQDN');
  });

  test('a failing engine is an error on its observable; the analysis still completes', async () => {
    upstreams.doh.route('GET /resolve', { status: 500, json: { error: 'boom' } });
    try {
      const { results } = await analyze({ text: 'example.com', engines: ['public_dns', 'reverse_dns'], ignore_cache: true });
      assert.equal(results[0]!.public_dns, null);
      assert.match((results[0]!.errors as Record<string, string>).public_dns!, /^HTTP 500/);
      assert.deepEqual(results[0]!.reverse_dns, { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    } finally {
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
  });

  test('a repeated analysis is served from the cache; ignore_cache asks again', async () => {
    const body = { text: 'cyberbro.net', engines: ['public_dns'] };
    await analyze(body);
    upstreams.doh.reset();
    await analyze(body);
    assert.equal(upstreams.doh.hits('GET /resolve').length, 0);
    await analyze({ ...body, ignore_cache: true });
    assert.ok(upstreams.doh.hits('GET /resolve').length > 0);
  });

  const bad: [string, unknown, RegExp][] = [
    ['invalid JSON', '{"text": ', /not valid JSON/],
    ['a JSON array', '[]', /JSON object/],
    ['missing text', { engines: ['reverse_dns'] }, /"text" is required/],
    ['text not a string', { text: 42, engines: ['reverse_dns'] }, /"text" is required/],
    ['empty text', { text: '   ', engines: ['reverse_dns'] }, /"text" must not be empty/],
    ['missing engines', { text: 'example.com' }, /"engines" is required/],
    ['engines not an array', { text: 'example.com', engines: 'reverse_dns' }, /"engines" is required/],
    ['engines holding a number', { text: 'example.com', engines: [1] }, /array of engine names/],
    ['an empty engine list', { text: 'example.com', engines: [] }, /at least one engine/],
    ['ignore_cache not a boolean', { text: 'example.com', engines: ['reverse_dns'], ignore_cache: 'yes' }, /"ignore_cache" must be true or false/],
    ['no observable in the text', { text: 'nothing to see here', engines: ['reverse_dns'] }, /no observable found/],
  ];
  for (const [what, body, message] of bad) {
    test(`400 for ${what}`, async () => {
      const res = await post(body);
      assert.equal(res.status, 400);
      const json = (await res.json()) as { error: string };
      assert.deepEqual(Object.keys(json), ['error']);
      assert.match(json.error, message);
    });
  }

  test('400 for unknown engines, listing the valid ones', async () => {
    const res = await post({ text: 'example.com', engines: ['reverse_dns', 'nope', 'virustotl'] });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    assert.match(error, /unknown engines: nope, virustotl/);
    assert.match(error, /valid engines: .*rdap_whois.*reverse_dns/);
  });

  test('415 for a body that is not declared JSON', async () => {
    const res = await post({ text: 'example.com', engines: ['reverse_dns'] }, { 'content-type': 'text/plain' });
    assert.equal(res.status, 415);
    assert.match(((await res.json()) as { error: string }).error, /application\/json/);
  });

  test('413 for a body over max_body_bytes', async () => {
    const res = await post({ text: 'example.com '.repeat(1000), engines: ['reverse_dns'] });
    assert.equal(res.status, 413);
    assert.match(((await res.json()) as { error: string }).error, /larger than 4096 bytes/);
  });
});

describe('GET is_analysis_complete and results', () => {
  test('404 for unknown and malformed ids on both endpoints (never complete: true)', async () => {
    for (const id of ['0b9b8f5e-3c1e-4c5e-9a57-2f6f3e1d2c4b', 'not-a-uuid', '..%2F..%2Fetc']) {
      for (const endpoint of ['is_analysis_complete', 'results']) {
        const res = await fetch(`${server.url}/api/${endpoint}/${id}`);
        assert.equal(res.status, 404, `${endpoint}/${id}`);
        assert.match(((await res.json()) as { error: string }).error, /analysis not found/);
      }
    }
  });

  test('409 for results asked before completion', async () => {
    upstreams.doh.route('GET /resolve', async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return dohHandler(ZONE)(req);
    });
    try {
      const res = await post({ text: 'slow-example.com', engines: ['public_dns'], ignore_cache: true });
      const { analysis_id: id } = (await res.json()) as { analysis_id: string };
      const early = await fetch(`${server.url}/api/results/${id}`);
      assert.equal(early.status, 409);
      assert.match(((await early.json()) as { error: string }).error, /not complete/);
      assert.deepEqual(await (await fetch(`${server.url}/api/is_analysis_complete/${id}`)).json(), { complete: false });
      await app.analyses.idle();
      assert.equal((await fetch(`${server.url}/api/results/${id}`)).status, 200);
    } finally {
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
  });

  test('unknown routes are JSON 404s', async () => {
    const res = await fetch(`${server.url}/api/nothing`);
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { error: string }).error, /not found/);
  });
});

describe('persistence', () => {
  test('results survive a restart of the server on the same data directory', async () => {
    const { id, results } = await analyze({ text: 'example.com', engines: ['reverse_dns'] });
    await stop();
    await start();
    const res = await fetch(`${server.url}/api/results/${id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), results);
  });
});

describe('configurable prefix', () => {
  test('api_prefix moves the three endpoints', async () => {
    const other = await createApp({ file: config.file, flags: { port: 0, api_prefix: 'v2' }, env: {} });
    const running = await listen(other);
    try {
      const res = await fetch(`${running.url}/v2/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }),
      });
      assert.equal(res.status, 200);
      const { analysis_id: id } = (await res.json()) as { analysis_id: string };
      await other.analyses.idle();
      assert.equal((await fetch(`${running.url}/v2/results/${id}`)).status, 200);
      assert.equal((await fetch(`${running.url}/api/results/${id}`)).status, 404);
    } finally {
      await running.close();
      await other.close();
    }
  });
});
