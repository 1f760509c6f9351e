/**
 * The OpenAPI document (issue 36). It is valid OpenAPI 3.1 by the specification's own schemas
 * (@seriousme/openapi-schema-validator), lists every route the server serves under the prefix, and
 * its examples are valid against their schemas. The real answers of `oas serve` (engines at the
 * loopback fakes), every endpoint, success and error, are answers the document lists (the status)
 * and valid against its schemas (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1); so are the
 * requests the tests send. `oas openapi` prints the document the endpoint serves, and loads no
 * server and no storage.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createApp } from '../src/app.js';
import { createHttpApp } from '../src/server/listen.js';
import { openApiDocument, type OpenApiDocument } from '../src/server/openapi.js';
import { dohHandler } from './fakes/doh.js';
import { runOas } from './helpers/cli.js';
import { moduleRecorder } from './helpers/module-log.js';
import { REPORTED_EML, REPORTED_EML_INTERNAL } from './helpers/reported-eml.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, ZONE, type Upstreams } from './helpers/upstreams.js';
import { startMispPushFake, type MispPushFake } from './fakes/misp-push.js';

const TOKEN = 'openapi-test-token-0123456789abcdef';
const MAX_BODY = 4096;
const MAX_UPLOAD = 32 * 1024;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

type Json = Record<string, unknown>;

/** A request to send: headers, body, and the body as the document describes it (media type, value), when it is one it should accept. */
interface Sent {
  headers?: Record<string, string>;
  body?: string | FormData;
  valid?: [string, unknown] | undefined;
}

/** Validates values against the document's schemas: any JSON pointer into it, `$ref`s resolved. */
function schemaChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  const id = 'https://oas.test/openapi.json';
  ajv.addSchema({ ...doc, $id: id });
  return (pointer: string, value: unknown, what: string): void => {
    const validate = ajv.getSchema(`${id}#${pointer}`);
    assert.ok(validate, `no schema at ${pointer}`);
    assert.ok(validate(value), `${what} does not match ${pointer}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
  };
}

const escapePointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** An operation's answer for `status`, its `$ref` to a shared one followed; with where it is. */
function documented(doc: OpenApiDocument, path: string, method: string, status: number): { pointer: string; response: Json } | undefined {
  const operation = doc.paths[path]?.[method] as { responses: Record<string, Json> } | undefined;
  assert.ok(operation, `${method.toUpperCase()} ${path} is not in the document`);
  let pointer = `/paths/${escapePointer(path)}/${method}/responses/${status}`;
  let response = operation.responses[String(status)];
  if (response && typeof response.$ref === 'string') {
    pointer = response.$ref.slice(1);
    const name = response.$ref.split('/').pop()!;
    response = (doc.components as { responses: Record<string, Json> }).responses[name];
  }
  return response ? { pointer, response } : undefined;
}

describe('the document', () => {
  test('is valid OpenAPI 3.1 by the specification\'s schemas, for any prefix', async () => {
    for (const prefix of ['/api/', '/v1/threat/', '/']) {
      const doc = openApiDocument(prefix);
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc) as Parameters<Validator["validate"]>[0]);
      assert.equal(result.valid, true, `${prefix}: ${JSON.stringify(result.errors, null, 2)}`);
      assert.equal(validator.version, '3.1');
      assert.ok(Object.keys(doc.paths).every((path) => path.startsWith(prefix)), prefix);
    }
  });

  test('says how to authenticate: HTTP Bearer or the X-API-Key header, on every operation', () => {
    const doc = openApiDocument('/api/');
    const components = doc.components as { securitySchemes: Record<string, Json> };
    const { bearerAuth, apiKey } = components.securitySchemes;
    assert.deepEqual([bearerAuth?.type, bearerAuth?.scheme], ['http', 'bearer']);
    assert.deepEqual([apiKey?.type, apiKey?.in, apiKey?.name], ['apiKey', 'header', 'X-API-Key']);
    assert.deepEqual(doc.security, [{ bearerAuth: [] }, { apiKey: [] }]);
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys((operation as { responses: Json }).responses);
        assert.ok(statuses.includes('401'), `${method} ${path}: 401`);
        assert.ok(statuses.includes('200') || statuses.includes('201'), `${method} ${path}: a success`);
      }
    }
  });

  test('every example is valid against its schema', () => {
    const doc = openApiDocument('/api/');
    const check = schemaChecker(doc);
    let examples = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations as Record<string, Json>)) {
        const at = `/paths/${escapePointer(path)}/${method}`;
        const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
        for (const [type, media] of Object.entries(content)) {
          if (media.example === undefined) continue;
          check(`${at}/requestBody/content/${escapePointer(type)}/schema`, media.example, `${method} ${path} ${type} example`);
          examples++;
        }
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
          if (media?.example === undefined) continue;
          check(`${at}/responses/${status}/content/application~1json/schema`, media.example, `${method} ${path} ${status} example`);
          examples++;
        }
      }
    }
    for (const [name, response] of Object.entries((doc.components as { responses: Record<string, Json> }).responses)) {
      const media = (response.content as Record<string, Json>)['application/json']!;
      check(`/components/responses/${name}/content/application~1json/schema`, media.example, `${name} example`);
      examples++;
    }
    assert.ok(examples >= 25, `${examples} examples`);
  });

  test('lists every route the server serves under the prefix, and nothing else', async () => {
    const upstreams = await startUpstreams();
    const config = configFor(upstreams, { api_prefix: '/v1/' });
    const app = await createApp({ file: config.file, flags: { port: 0 }, env: {} });
    try {
      const served = new Set(createHttpApp(app).routes
        .filter((route) => route.method !== 'ALL' && route.path.startsWith('/v1/'))
        .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`));
      const doc = openApiDocument('/v1/');
      const listed = new Set(Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`)));
      assert.deepEqual([...served].filter((route) => !listed.has(route)), [], 'served but not in the document (add the route\'s entry: src/server/openapi.ts CONTRIBUTIONS)');
      assert.deepEqual([...listed].filter((route) => !served.has(route)), [], 'in the document but not served');
    } finally {
      await app.close();
      await upstreams.close();
    }
  });
});

describe('oas openapi', () => {
  test('prints the document as JSON; --prefix and api_prefix choose its prefix; a bad prefix is a usage error', async () => {
    const dir = tempDir('oas-openapi-');
    const run = await runOas(dir, ['openapi']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.deepEqual(JSON.parse(run.stdout), openApiDocument('/api/'));
    const prefixed = await runOas(dir, ['openapi', '--prefix', 'v2']);
    assert.equal(prefixed.code, 0, prefixed.stderr);
    assert.deepEqual(JSON.parse(prefixed.stdout), openApiDocument('/v2/'));
    const fromEnv = await runOas(dir, ['openapi'], { env: { OAS_API_PREFIX: '/intel/' } });
    assert.deepEqual(Object.keys((JSON.parse(fromEnv.stdout) as OpenApiDocument).paths)[0]?.startsWith('/intel/'), true);
    const bad = await runOas(dir, ['openapi', '--prefix', 'not a path']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^oas: option --prefix: .*api_prefix/);
    assert.equal(bad.stdout, '');
  });

  test('loads the schemas and their converter, not the server nor the storage', async () => {
    const dir = tempDir('oas-openapi-modules-');
    const recorder = moduleRecorder(dir);
    const log = join(dir, 'modules.log');
    const run = await runOas(dir, ['openapi'], { nodeArgs: recorder.nodeArgs, env: recorder.env(log) });
    assert.equal(run.code, 0, run.stderr);
    const modules = recorder.read(log);
    assert.ok(modules.some((m) => m.includes('/@valibot/to-json-schema/')), 'the converter');
    assert.ok(modules.some((m) => m.endsWith('/dist/src/server/api-schemas.js')), 'the schemas');
    for (const never of ['/node_modules/hono/', '/node_modules/@hono/', '/node_modules/sqlite3/', '/node_modules/@keyv/', '/node_modules/ioredis/', '/node_modules/undici/', '/dist/src/app.js', '/dist/src/server/api.js', '/dist/src/server/listen.js', '/dist/src/store/']) {
      assert.deepEqual(modules.filter((m) => m.includes(never)), [], never);
    }
  });
});

describe('the running server\'s answers', () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let doc: OpenApiDocument;
  let check: ReturnType<typeof schemaChecker>;
  let viewerToken: string;
  const seen = new Set<string>();

  let misp: MispPushFake;

  before(async () => {
    upstreams = await startUpstreams();
    misp = await startMispPushFake();
    const config = configFor(upstreams, {
      // Pushes (issue 37) go to a loopback MISP; up to TLP:AMBER.
      push: { misp: { url: misp.url, api_key: misp.key, max_tlp: 'AMBER' } },
      api_token: TOKEN,
      max_body_bytes: MAX_BODY,
      max_upload_bytes: MAX_UPLOAD,
      internal_domains: REPORTED_EML_INTERNAL,
      // An engine that cannot be reached: its error is a result's `errors`.
      engines: { provider_11: { base_url: 'http://127.0.0.1:9/ipapi' } },
    });
    const added = await runOas(config.dir, ['users', 'add', 'vera', '--role', 'viewer', '--config', config.file]);
    assert.equal(added.code, 0, added.stderr);
    viewerToken = added.stdout.trim();
    server = await spawnServe(config.file);
    doc = openApiDocument('/api/');
    check = schemaChecker(doc);
  });
  after(async () => {
    await server?.stop();
    await upstreams?.close();
    await misp?.close();
  });

  const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}` });

  /**
   * Sends the request and checks its answer against the document: its status is one the
   * operation lists, its body valid against that answer's schema. A JSON request body is checked
   * against the operation's request schema when it is meant to be valid. Returns status and body.
   */
  async function call(method: 'get' | 'post' | 'delete', template: string, url: string, init: Sent = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
    const path = `/api/${template}`;
    if (init.valid) {
      const [type, value] = init.valid;
      check(`/paths/${escapePointer(path)}/${method}/requestBody/content/${escapePointer(type)}/schema`, value, `the ${type} request to ${method} ${path}`);
    }
    const res = await fetch(`${server.url}/api/${url}`, { method: method.toUpperCase(), headers: init.headers ?? auth(), ...(init.body !== undefined ? { body: init.body } : {}) });
    const text = await res.text();
    const answer = documented(doc, path, method, res.status);
    assert.ok(answer, `${method.toUpperCase()} ${path} answered ${res.status}, which the document does not list: ${text.slice(0, 300)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = JSON.parse(text) as unknown;
    check(`${answer.pointer}/content/application~1json/schema`, body, `${method.toUpperCase()} ${path} ${res.status}`);
    for (const header of Object.keys((answer.response.headers as Json | undefined) ?? {})) {
      if (header === 'Retry-After' || header === 'WWW-Authenticate') assert.ok(res.headers.has(header), `${res.status} carries ${header}`);
    }
    seen.add(`${method} ${path} ${res.status}`);
    return { status: res.status, body, headers: res.headers };
  }

  /** A JSON request; `valid`: the request the document describes (checked against its schema). */
  const json = (value: unknown, headers: Record<string, string> = {}): Sent => ({
    headers: { ...auth(), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
    valid: ['application/json', value],
  });
  /** A form: its fields and `file` parts; as the document sees it, each part's bytes a string (`file`: one, or a list for `fileList`). */
  const form = (fields: Record<string, string>, files: { name: string; body: string }[] = [], fileList = true): Sent => {
    const data = new FormData();
    for (const [name, value] of Object.entries(fields)) data.append(name, value);
    for (const file of files) data.append('file', new Blob([file.body]), file.name);
    const parts = files.map((file) => file.body);
    return { headers: auth(), body: data, valid: ['multipart/form-data', { ...fields, ...(fileList ? { file: parts } : parts.length === 1 ? { file: parts[0] } : {}) }] };
  };
  /** A request meant to be refused: not checked against the request schema. */
  const refused = (request: Sent): Sent => ({ ...request, valid: undefined });

  async function completed(id: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const { body } = await call('get', 'is_analysis_complete/{id}', `is_analysis_complete/${id}`);
      if ((body as { complete: boolean }).complete) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`analysis ${id} not complete`);
  }

  test('GET openapi.json: the document, to the token (Bearer or X-API-Key, a viewer\'s too), the same as oas openapi prints', async () => {
    const bearer = await call('get', 'openapi.json', 'openapi.json');
    assert.equal(bearer.status, 200);
    assert.deepEqual(bearer.body, doc);
    const key = await call('get', 'openapi.json', 'openapi.json', { headers: { 'x-api-key': TOKEN } });
    assert.deepEqual(key.body, doc);
    assert.equal((await call('get', 'openapi.json', 'openapi.json', { headers: auth(viewerToken) })).status, 200);
    const cli = await runOas(tempDir('oas-openapi-cli-'), ['openapi']);
    assert.deepEqual(JSON.parse(cli.stdout), bearer.body);
    const none = await call('get', 'openapi.json', 'openapi.json', { headers: {} });
    assert.equal(none.status, 401);
    const wrong = await call('get', 'openapi.json', 'openapi.json', { headers: auth('not-the-token') });
    assert.equal(wrong.status, 401);
  });

  test('POST analyze (JSON), is_analysis_complete and results: every answer as documented, errors and withheld engines included', async () => {
    const request = { text: 'hxxps://www[.]example[.]com/login 8.8.8.8 10.1.2.3', engines: ['reverse_dns', 'rdap_whois', 'public_dns', 'provider_13', 'provider_11'], ignore_cache: true, tlp: 'AMBER', pap: 'GREEN' };
    const started = await call('post', 'analyze', 'analyze', json(request));
    assert.equal(started.status, 200);
    const id = (started.body as { analysis_id: string }).analysis_id;
    await completed(id);
    const results = await call('get', 'results/{id}', `results/${id}`);
    assert.equal(results.status, 200);
    const rows = results.body as Json[];
    assert.deepEqual(rows.map((r) => r.observable), ['https://www.example.com/login', '8.8.8.8', '10.1.2.3']);
    assert.ok(rows.some((r) => r.errors !== undefined), 'an engine\'s error is in the results');
    assert.ok(rows.some((r) => r.withheld !== undefined), 'an engine withheld is in the results');
    assert.ok(rows.some((r) => r.reversed_ip !== undefined), 'a reversed IP is in the results');
    assert.ok(rows.every((r) => typeof r.reverse_dns === 'object'), 'engine keys');
  });

  test('POST analyze (multipart): a file\'s observables, with found_in in the results', async () => {
    const started = await call('post', 'analyze', 'analyze', form({ engines: 'reverse_dns,provider_13', ignore_cache: 'yes' }, [{ name: 'iocs.txt', body: 'seen: 8.8.8.8\nand www.example.com\n' }]));
    assert.equal(started.status, 200);
    const id = (started.body as { analysis_id: string }).analysis_id;
    await completed(id);
    const rows = (await call('get', 'results/{id}', `results/${id}`)).body as Json[];
    assert.ok(rows.length > 0 && rows.every((r) => Array.isArray(r.found_in)), 'found_in');
  });

  test('POST analyze refused: 400, 401, 403, 413, 415, 422, each as documented', async () => {
    const cases: [string, Sent, number][] = [
      ['not JSON', { headers: { ...auth(), 'content-type': 'application/json' }, body: '{"text": ' }, 400],
      ['no engines', json({ text: 'example.com' }), 400],
      ['blank text', json({ text: '   ', engines: ['reverse_dns'] }), 400],
      ['an unknown engine', json({ text: 'example.com', engines: ['no_such_engine'] }), 400],
      ['not a TLP level', json({ text: 'example.com', engines: ['reverse_dns'], tlp: 'PURPLE' }), 400],
      ['a form without a file part', form({ engines: 'reverse_dns' }), 400],
      ['no token', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) }, 401],
      ['a viewer', json({ text: 'example.com', engines: ['reverse_dns'] }, auth(viewerToken)), 403],
      ['a body over max_body_bytes', json({ text: 'x'.repeat(MAX_BODY), engines: ['reverse_dns'] }), 413],
      ['a file over max_upload_bytes', form({ engines: 'reverse_dns' }, [{ name: 'big.txt', body: '8.8.8.8 '.repeat(MAX_UPLOAD / 4) }]), 413],
      ['text/plain', { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'example.com' }, 415],
      ['a CSV column that is not there', form({ engines: 'reverse_dns', column: 'nope' }, [{ name: 'iocs.csv', body: 'ip,comment\n8.8.8.8,dns\n' }]), 422],
    ];
    for (const [what, init, status] of cases) {
      const answer = await call('post', 'analyze', 'analyze', refused(init));
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('404 for an unknown analysis, 409 for results asked before completion', async () => {
    for (const id of ['0b9b8f5e-3c1e-4c5e-9a57-2f6f3e1d2c4b', 'not-an-id']) {
      assert.equal((await call('get', 'is_analysis_complete/{id}', `is_analysis_complete/${id}`)).status, 404);
      assert.equal((await call('get', 'results/{id}', `results/${id}`)).status, 404);
    }
    upstreams.doh.route('GET /resolve', async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      return dohHandler(ZONE)(req);
    });
    try {
      const started = await call('post', 'analyze', 'analyze', json({ text: 'slow-example.com', engines: ['public_dns'], ignore_cache: true }));
      const id = (started.body as { analysis_id: string }).analysis_id;
      assert.equal((await call('get', 'results/{id}', `results/${id}`)).status, 409);
      assert.deepEqual((await call('get', 'is_analysis_complete/{id}', `is_analysis_complete/${id}`)).body, { complete: false });
      await completed(id);
    } finally {
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
    for (const template of ['is_analysis_complete/{id}', 'results/{id}']) {
      assert.equal((await call('get', template, template.replace('{id}', 'whatever'), { headers: {} })).status, 401);
    }
  });

  test('POST extract: a text and an e-mail (email_auth, internal), and every refusal, as documented', async () => {
    const request = { text: 'Seen: evil[.]example and 8.8.8.8 on intranet.acme-corp.com' };
    const text = await call('post', 'extract', 'extract', json(request));
    assert.equal(text.status, 200);
    assert.ok((text.body as { observables: Json[] }).observables.some((o) => o.internal !== undefined), 'an internal observable');
    const eml = await call('post', 'extract', 'extract', form({}, [{ name: 'reported.eml', body: REPORTED_EML }], false));
    assert.equal(eml.status, 200);
    assert.equal((eml.body as { email_auth: { spf: string } }).email_auth.spf, 'fail');
    const cases: [string, Sent, number][] = [
      ['not JSON', { headers: { ...auth(), 'content-type': 'application/json' }, body: '[' }, 400],
      ['no text', json({ file: 'x' }), 400],
      ['two files', form({}, [{ name: 'a.txt', body: '8.8.8.8' }, { name: 'b.txt', body: '1.1.1.1' }]), 400],
      ['no token', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) }, 401],
      ['a viewer', json(request, auth(viewerToken)), 403],
      ['a body over max_body_bytes', json({ text: 'x'.repeat(MAX_BODY) }), 413],
      ['a file over max_upload_bytes', form({}, [{ name: 'big.txt', body: 'x'.repeat(MAX_UPLOAD + 1) }]), 413],
      ['text/plain', { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'example.com' }, 415],
      ['a CSV column that is not there', form({ column: 'nope' }, [{ name: 'iocs.csv', body: 'ip,comment\n8.8.8.8,dns\n' }]), 422],
    ];
    for (const [what, init, status] of cases) {
      const answer = await call('post', 'extract', 'extract', refused(init));
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('watchlists: add (its baseline runs), list, read, run, remove, and every refusal, as documented', async () => {
    const input = { name: 'openapi-watch', text: 'www.example.com', engines: ['reverse_dns'], every: '6h', tlp: 'green' };
    const added = await call('post', 'watchlists', 'watchlists', json(input));
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal(added.headers.get('location'), '/api/watchlists/openapi-watch');
    const runsDone = async (count: number) => {
      for (let i = 0; i < 400; i++) {
        const { body } = await call('get', 'watchlists/{name}', 'watchlists/openapi-watch');
        const runs = (body as { runs: { status: string }[] }).runs;
        if (runs.length === count && runs.every((run) => run.status === 'done')) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`watchlist runs not done: ${count}`);
    };
    await runsDone(1);
    const listed = await call('get', 'watchlists', 'watchlists');
    assert.deepEqual((listed.body as { name: string }[]).map((w) => w.name), ['openapi-watch']);
    assert.equal((await call('get', 'watchlists', 'watchlists', { headers: auth(viewerToken) })).status, 200);
    const ran = await call('post', 'watchlists/{name}/run', 'watchlists/openapi-watch/run');
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    await runsDone(2);

    const refusals: [string, 'get' | 'post' | 'delete', string, string, Sent, number][] = [
      ['exists', 'post', 'watchlists', 'watchlists', json(input), 409],
      ['too often', 'post', 'watchlists', 'watchlists', json({ ...input, name: 'fast', every: '4m' }), 400],
      ['a field of the server\'s', 'post', 'watchlists', 'watchlists', json({ ...input, name: 'x', owner: 'mallory' }), 400],
      ['not JSON', 'post', 'watchlists', 'watchlists', { headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name": ' }, 400],
      ['text/plain', 'post', 'watchlists', 'watchlists', { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'example.com' }, 415],
      ['over max_body_bytes', 'post', 'watchlists', 'watchlists', json({ ...input, name: 'big', text: 'x'.repeat(MAX_BODY) }), 413],
      ['a viewer adding', 'post', 'watchlists', 'watchlists', json({ ...input, name: 'v' }, auth(viewerToken)), 403],
      ['a viewer running', 'post', 'watchlists/{name}/run', 'watchlists/openapi-watch/run', { headers: auth(viewerToken) }, 403],
      ['a viewer removing', 'delete', 'watchlists/{name}', 'watchlists/openapi-watch', { headers: auth(viewerToken) }, 403],
      ['no token', 'get', 'watchlists', 'watchlists', { headers: {} }, 401],
      ['no token', 'post', 'watchlists', 'watchlists', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) }, 401],
      ['no token', 'get', 'watchlists/{name}', 'watchlists/openapi-watch', { headers: {} }, 401],
      ['no token', 'delete', 'watchlists/{name}', 'watchlists/openapi-watch', { headers: {} }, 401],
      ['no token', 'post', 'watchlists/{name}/run', 'watchlists/openapi-watch/run', { headers: {} }, 401],
      ['unknown', 'get', 'watchlists/{name}', 'watchlists/nope', {}, 404],
      ['unknown', 'post', 'watchlists/{name}/run', 'watchlists/nope/run', {}, 404],
    ];
    for (const [what, method, template, url, init, status] of refusals) {
      const answer = await call(method, template, url, refused(init));
      assert.equal(answer.status, status, `${what} ${method} ${url}: ${JSON.stringify(answer.body)}`);
    }
    assert.deepEqual((await call('delete', 'watchlists/{name}', 'watchlists/openapi-watch')).body, { removed: 'openapi-watch' });
    assert.equal((await call('delete', 'watchlists/{name}', 'watchlists/openapi-watch')).status, 404);
  });

  test('push (issue 37): an analysis to MISP, and every refusal, as documented', async () => {
    const started = await call('post', 'analyze', 'analyze', json({ text: '8.8.8.8 www.example.com', engines: ['reverse_dns'], tlp: 'GREEN' }));
    const id = (started.body as { analysis_id: string }).analysis_id;
    await completed(id);
    const pushed = await call('post', 'analyses/{id}/push', `analyses/${id}/push`, json({ target: 'misp', all: true }));
    assert.equal(pushed.status, 200, JSON.stringify(pushed.body));
    assert.equal((pushed.body as { created: boolean }).created, true);
    assert.equal(misp.events.length, 1, 'one event in MISP');
    const again = await call('post', 'analyses/{id}/push', `analyses/${id}/push`, json({ target: 'misp', all: true }));
    assert.deepEqual([(again.body as { created: boolean }).created, (again.body as { added: number }).added], [false, 0]);
    assert.equal(misp.events.length, 1, 'pushed again: still one event');
    const red = await call('post', 'analyze', 'analyze', json({ text: '8.8.4.4', engines: ['reverse_dns'], tlp: 'RED' }));
    const redId = (red.body as { analysis_id: string }).analysis_id;
    await completed(redId);
    const push = (body: unknown, headers?: Record<string, string>) => json(body, headers);
    const cases: [string, string, Sent, number][] = [
      ['an unknown target', `analyses/${id}/push`, refused(push({ target: 'splunk' })), 400],
      ['case_id for MISP', `analyses/${id}/push`, push({ target: 'misp', case_id: '42' }), 400],
      ['a target not configured', `analyses/${id}/push`, push({ target: 'thehive' }), 400],
      ['an unknown field', `analyses/${id}/push`, refused(push({ target: 'misp', everything: true })), 400],
      ['above max_tlp', `analyses/${redId}/push`, push({ target: 'misp' }), 403],
      ['a viewer', `analyses/${id}/push`, push({ target: 'misp' }, auth(viewerToken)), 403],
      ['no token', `analyses/${id}/push`, { headers: { 'content-type': 'application/json' }, body: '{"target":"misp"}' }, 401],
      ['unknown analysis', 'analyses/0b9b8f5e-0000-4000-8000-000000000000/push', push({ target: 'misp' }), 404],
      ['text/plain', `analyses/${id}/push`, { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'misp' }, 415],
      ['over max_body_bytes', `analyses/${id}/push`, refused(push({ target: 'misp', event_id: 'x'.repeat(MAX_BODY) })), 413],
    ];
    for (const [what, url, init, status] of cases) {
      const answer = await call('post', 'analyses/{id}/push', url, init);
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    }
    assert.equal(misp.events.length, 1, 'nothing sent for a refused push');
    // A key that may only read: MISP refuses the new event.
    const other = await call('post', 'analyze', 'analyze', json({ text: '1.1.1.1', engines: ['reverse_dns'], tlp: 'GREEN' }));
    const otherId = (other.body as { analysis_id: string }).analysis_id;
    await completed(otherId);
    misp.role = 'read-only';
    const failed = await call('post', 'analyses/{id}/push', `analyses/${otherId}/push`, json({ target: 'misp', all: true }));
    assert.equal(failed.status, 502, JSON.stringify(failed.body));
    assert.match((failed.body as { error: string }).error, /^MISP at 127\.0\.0\.1:\d+: .*key refused: .*check push\.misp\.api_key or OAS_PUSH_MISP_API_KEY/);
    assert.ok(!JSON.stringify(failed.body).includes(misp.key), 'no key in the answer');
    misp.role = 'admin';
  });

  test('allowlist and marks (issue 38): add, list, remove, and every refusal, as documented', async () => {
    const entry = { value: '*.acme-corp.com', reason: 'our own domains', expires: '30d' };
    assert.equal((await call('post', 'allowlist', 'allowlist', json(entry))).status, 201);
    assert.equal((await call('post', 'allowlist', 'allowlist', json(entry))).status, 200, 'the same value again: replaced');
    assert.equal((await call('get', 'allowlist', 'allowlist', { headers: auth(viewerToken) })).status, 200);
    const mark = { value: '8.8.4.4', verdict: 'malicious', note: 'red-team C2 for exercise X', expires: '90d' };
    assert.equal((await call('post', 'marks', 'marks', json(mark))).status, 201);
    assert.equal((await call('post', 'marks', 'marks', json(mark))).status, 200);
    assert.equal((await call('get', 'marks', 'marks', { headers: auth(viewerToken) })).status, 200);
    const cases: [string, 'get' | 'post' | 'delete', string, string, Sent, number][] = [
      ['no domain pattern', 'post', 'allowlist', 'allowlist', refused(json({ value: '*.com', reason: 'x' })), 400],
      ['no reason', 'post', 'allowlist', 'allowlist', refused(json({ value: '10.0.0.0/8' })), 400],
      ['not JSON', 'post', 'allowlist', 'allowlist', { headers: { ...auth(), 'content-type': 'application/json' }, body: '{"value": ' }, 400],
      ['text/plain', 'post', 'allowlist', 'allowlist', { headers: { ...auth(), 'content-type': 'text/plain' }, body: '10.0.0.0/8' }, 415],
      ['over max_body_bytes', 'post', 'allowlist', 'allowlist', refused(json({ value: '10.0.0.0/8', reason: 'x'.repeat(MAX_BODY) })), 413],
      ['a viewer adding', 'post', 'allowlist', 'allowlist', json(entry, auth(viewerToken)), 403],
      ['a viewer removing', 'delete', 'allowlist/{value}', `allowlist/${encodeURIComponent(entry.value)}`, { headers: auth(viewerToken) }, 403],
      ['no token', 'get', 'allowlist', 'allowlist', { headers: {} }, 401],
      ['no token', 'post', 'allowlist', 'allowlist', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(entry) }, 401],
      ['no token', 'delete', 'allowlist/{value}', 'allowlist/x.example', { headers: {} }, 401],
      ['unknown', 'delete', 'allowlist/{value}', 'allowlist/nothing.example', {}, 404],
      ['a bad verdict', 'post', 'marks', 'marks', refused(json({ ...mark, verdict: 'evil' })), 400],
      ['a range', 'post', 'marks', 'marks', refused(json({ ...mark, value: '10.0.0.0/8' })), 400],
      ['text/plain', 'post', 'marks', 'marks', { headers: { ...auth(), 'content-type': 'text/plain' }, body: '8.8.4.4' }, 415],
      ['over max_body_bytes', 'post', 'marks', 'marks', refused(json({ ...mark, note: 'x'.repeat(MAX_BODY) })), 413],
      ['a viewer marking', 'post', 'marks', 'marks', json(mark, auth(viewerToken)), 403],
      ['a viewer removing', 'delete', 'marks/{value}', 'marks/8.8.4.4', { headers: auth(viewerToken) }, 403],
      ['no token', 'get', 'marks', 'marks', { headers: {} }, 401],
      ['no token', 'post', 'marks', 'marks', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(mark) }, 401],
      ['no token', 'delete', 'marks/{value}', 'marks/8.8.4.4', { headers: {} }, 401],
      ['unknown', 'delete', 'marks/{value}', 'marks/nothing.example', {}, 404],
    ];
    for (const [what, method, template, url, init, status] of cases) {
      const answer = await call(method, template, url, init);
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    }
    assert.deepEqual((await call('delete', 'allowlist/{value}', `allowlist/${encodeURIComponent(entry.value)}`)).body, { removed: '*.acme-corp.com' });
    assert.deepEqual((await call('delete', 'marks/{value}', 'marks/8.8.4.4')).body, { removed: '8.8.4.4' });
  });

  test('POST doctor (issue 40): the report, and every refusal, as documented', async () => {
    const report = await call('post', 'doctor', 'doctor', json({ engines: ['reverse_dns'] }));
    assert.equal(report.status, 200, JSON.stringify(report.body));
    assert.equal((report.body as { engines: number }).engines, 1);
    const cases: [string, Sent, number][] = [
      ['an unknown engine', json({ engines: ['reverse_dsn'] }), 400],
      ['an unknown field', refused(json({ engines: ['reverse_dns'], all: true })), 400],
      ['a viewer', json({ engines: ['reverse_dns'] }, auth(viewerToken)), 403],
      ['no token', { headers: { 'content-type': 'application/json' }, body: '{}' }, 401],
      ['text/plain', { headers: { ...auth(), 'content-type': 'text/plain' }, body: 'reverse_dns' }, 415],
      ['over max_body_bytes', refused(json({ engines: ['x'.repeat(MAX_BODY)] })), 413],
    ];
    for (const [what, init, status] of cases) {
      const answer = await call('post', 'doctor', 'doctor', init);
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('every operation\'s success, and the errors the issue names, were seen', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations).filter((m) => (METHODS as readonly string[]).includes(m))) {
        assert.ok(seen.has(`${method} ${path} 200`) || seen.has(`${method} ${path} 201`), `${method} ${path} success seen`);
        assert.ok(seen.has(`${method} ${path} 401`), `${method} ${path} 401 seen`);
      }
    }
    for (const status of [400, 401, 403, 404, 409, 413, 415, 422]) {
      assert.ok([...seen].some((s) => s.endsWith(` ${status}`)), `a ${status} seen`);
    }
  });
});
