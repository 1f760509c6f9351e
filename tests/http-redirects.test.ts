/**
 * Redirects through the HTTP client (src/http/client.ts): undici's redirect handler follows them,
 * taken up only once an answer redirects (issue 33: it used to wrap every request). What it does
 * is undici's, as before: at most 5 redirections (the sixth 3xx is the answer), 303 and a POST's
 * 301/302 become a GET without its body, 307 keeps the method and body, a redirect to another
 * origin drops the Authorization header, a loop is an error; the response's url is the one asked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { HttpStatusError, NetworkError } from '../src/http/errors.js';
import { HttpTransport } from '../src/http/client.js';
import type { HttpClient } from '../src/engine/contract.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';

let home: FakeHttpServer;
let other: FakeHttpServer;
const transport = new HttpTransport();
const controller = new AbortController();

const moved = (status: number, location: string) => ({ status, headers: { location }, body: 'moved' });

before(async () => {
  other = await startFakeHttp({ '/there': { json: { where: 'other' } } });
  home = await startFakeHttp({
    '/final': (req) => ({ json: { method: req.method, body: req.body, type: req.headers['content-type'] ?? null, auth: req.headers.authorization ?? null } }),
    '/r302': moved(302, '/final'),
    '/r303': moved(303, '/final'),
    '/r307': moved(307, '/final'),
    '/loop': moved(302, '/loop'),
    '/no-location': { status: 302, body: 'nowhere' },
    ...Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`/chain${i}`, moved(302, `/chain${i + 1}`)])),
  });
  home.route('/away', moved(302, `${other.url}/there`));
});

after(async () => {
  controller.abort();
  await transport.close();
  await Promise.all([home.close(), other.close()]);
});

function client(): HttpClient {
  return transport.client({ signal: controller.signal, deadline: Date.now() + 5000, timeoutMs: 5000, retries: 0, secrets: [] });
}

describe('the HTTP client follows redirects as undici does', () => {
  test('a GET redirected: the final answer, under the url asked', async () => {
    const response = await client().request(`${home.url}/r302`);
    assert.equal(response.status, 200);
    assert.equal(response.url, `${home.url}/r302`);
    assert.deepEqual(JSON.parse(response.text()), { method: 'GET', body: '', type: null, auth: null });
  });

  test('303 and a POST\'s 302 become a GET without the body; 307 keeps both', async () => {
    const post = (path: string) => client().json(`${home.url}${path}`, v.unknown(), { method: 'POST', json: { a: 1 } });
    assert.deepEqual(await post('/r303'), { method: 'GET', body: '', type: null, auth: null });
    assert.deepEqual(await post('/r302'), { method: 'GET', body: '', type: 'application/json', auth: null });
    assert.deepEqual(await post('/r307'), { method: 'POST', body: '{"a":1}', type: 'application/json', auth: null });
  });

  test('to another origin: followed, without the Authorization header', async () => {
    home.reset();
    other.reset();
    const response = await client().request(`${home.url}/away`, { headers: { Authorization: 'Bearer s3cret' } });
    assert.deepEqual(JSON.parse(response.text()), { where: 'other' });
    assert.equal(home.requests[0]!.headers.authorization, 'Bearer s3cret');
    assert.equal(other.requests[0]!.headers.authorization, undefined);
  });

  test('at most 5 redirections: the sixth 3xx is the answer (an error, or accepted)', async () => {
    home.reset();
    await assert.rejects(client().request(`${home.url}/chain0`), (error: Error) => error instanceof HttpStatusError && error.status === 302);
    assert.equal(home.hits('/chain').length, 6);
    const response = await client().request(`${home.url}/chain0`, { acceptStatus: [302] });
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/chain6');
    assert.equal(response.text(), 'moved');
    // From the third, five redirections reach /chain7, which is not found.
    await assert.rejects(client().request(`${home.url}/chain2`, { acceptStatus: [302] }), (error: Error) => error instanceof HttpStatusError && error.status === 404);
  });

  test('a 3xx without a Location is the answer; a redirect to itself is an error', async () => {
    const response = await client().request(`${home.url}/no-location`, { acceptStatus: [302] });
    assert.equal(response.status, 302);
    assert.equal(response.text(), 'nowhere');
    await assert.rejects(client().request(`${home.url}/loop`), (error: Error) => error instanceof NetworkError && error.message === 'network error talking to 127.0.0.1: UND_ERR_INVALID_ARG');
  });
});
