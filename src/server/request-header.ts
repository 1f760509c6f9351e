/**
 * A request's header, read where it is cheapest. Under `oas serve` (@hono/node-server) the header
 * is read from Node's own parsed request (`c.env.incoming.rawHeaders`): `c.req.header(name)` would
 * make the adapter build a web `Headers` object (and with it the whole web `Request`) for every
 * request, a poll included, only to read its Host. The answer is the one `Headers.get` gives: every
 * field of that name, in order, joined by `, ` (cookies by `; `), without surrounding spaces and
 * tabs; undefined when there is none. Anywhere else (`app.request` in a test) it is `c.req.header(name)` itself.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { parse } from 'hono/utils/cookie';

/** Node's own request under `oas serve` (@hono/node-server's `c.env.incoming`); undefined elsewhere. */
export function nodeRequest(c: Context): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** `name` in lower case (`host`, `x-api-key`). */
export function requestHeader(c: Context, name: string): string | undefined {
  const raw = nodeRequest(c)?.rawHeaders;
  if (raw === undefined) return c.req.header(name);
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    const field = trimmed(raw[i + 1]!);
    value = value === undefined ? field : `${value}${name === 'cookie' ? '; ' : ', '}${field}`;
  }
  return value;
}

/** One cookie of the request (`getCookie` of hono/cookie, read through `requestHeader`). */
export function requestCookie(c: Context, name: string): string | undefined {
  const cookie = requestHeader(c, 'cookie');
  return cookie ? parse(cookie, name)[name] : undefined;
}

/** Without leading and trailing spaces and tabs (HTTP's white space; Node keeps none, Headers none). */
function trimmed(value: string): string {
  const last = value.length - 1;
  if (last < 0) return value;
  const first = value.charCodeAt(0);
  const end = value.charCodeAt(last);
  return first === 32 || first === 9 || end === 32 || end === 9 ? value.replace(/^[\t ]+|[\t ]+$/g, '') : value;
}
