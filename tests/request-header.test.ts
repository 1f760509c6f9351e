/**
 * `requestHeader` (src/server/request-header.ts) reads Node's parsed request instead of the web
 * Headers the adapter would build: it must answer what `Headers.get` answers, over a real socket,
 * for duplicated fields, any case, surrounding spaces and tabs, and a cookie.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { requestCookie, requestHeader } from '../src/server/request-header.js';

const NAMES = ['host', 'x-test', 'x-api-key', 'authorization', 'cookie', 'x-absent', 'sec-fetch-site'];

function app(): Hono {
  const hono = new Hono();
  hono.get('/h', (c) => {
    const ours = Object.fromEntries(NAMES.map((n) => [n, requestHeader(c, n) ?? null]));
    const fromNode = (c.env as { incoming?: unknown } | undefined)?.incoming !== undefined;
    const web = Object.fromEntries(NAMES.map((n) => [n, c.req.raw.headers.get(n)]));
    return c.json({ ours, web, fromNode, cookie: requestCookie(c, 'oas_session') ?? null, webCookie: /(?:^|;\s*)oas_session=([^;]*)/.exec(c.req.raw.headers.get('cookie') ?? '')?.[1] ?? null });
  });
  return hono;
}

/** One raw HTTP/1.1 request (header lines as given) and its JSON answer. */
async function raw(port: number, lines: string[]): Promise<{ ours: unknown; web: unknown; fromNode: boolean; cookie: unknown; webCookie: unknown }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.end(`GET /h HTTP/1.1\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n`);
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const json = /^[0-9a-f]+\r\n/i.test(body) ? body.split('\r\n')[1]! : body; // chunked: one chunk
  assert.ok(text.startsWith('HTTP/1.1 200'), `${lines.join(' | ')}: ${text.slice(0, 200)}`);
  return JSON.parse(json) as never;
}

test('under the Node server, the same answer as Headers.get for duplicates, case, white space and cookies', async () => {
  const server = serve({ fetch: app().fetch, port: 0, hostname: '127.0.0.1' });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    const cases: string[][] = [
      ['Host: 127.0.0.1'],
      ['HOST: example.org:8080', 'X-Test: a', 'x-test:  b \t', 'X-TEST:\tc'],
      ['Host: h', 'Authorization: Bearer  abc ', 'X-Api-Key: \tk1', 'x-api-key: k2', 'Sec-Fetch-Site: same-origin'],
      ['Host: h', 'Cookie: a=1; oas_session=s3cr%20t; b=2'],
      ['Host: h', 'Cookie: a=1', 'Cookie: oas_session=second'],
      ['Host: h', 'X-Test:', 'X-Test: after-empty'],
    ];
    for (const lines of cases) {
      const answer = await raw(port, lines);
      assert.equal(answer.fromNode, true);
      assert.deepEqual(answer.ours, answer.web, lines.join(' | '));
      assert.equal(answer.cookie, answer.webCookie === null ? null : decodeURIComponent(answer.webCookie as string), lines.join(' | '));
    }
  } finally {
    server.close();
  }
});

test('outside the Node server (app.request), the web request\'s headers', async () => {
  const response = await app().request('/h', { headers: { host: 'example.org', 'x-test': 'one', cookie: 'oas_session=abc' } });
  const answer = (await response.json()) as { ours: Record<string, unknown>; web: Record<string, unknown>; fromNode: boolean; cookie: unknown };
  assert.equal(answer.fromNode, false);
  assert.deepEqual(answer.ours, answer.web);
  assert.equal(answer.ours['x-test'], 'one');
  assert.equal(answer.cookie, 'abc');
});
