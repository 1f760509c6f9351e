/**
 * `api_token`: every API endpoint, every `/ui/` JSON endpoint and `/export/` require the token, as
 * `Authorization: Bearer <token>` or `X-API-Key: <token>`, or a session cookie the web UI got by
 * posting the token once to `/signin`. Everything else that is not one of the pages (`/`,
 * `/history`, `/results/<id>`, `/observables/<value>`, their assets, `/signin`, `/signout`)
 * requires it too: unknown paths
 * answer 401, not 404, to a client without the token.
 *
 * - Tokens are compared in constant time (SHA-256 digests of both, then timingSafeEqual), so
 *   neither the length nor a prefix of the token leaks through timing.
 * - The session cookie holds a random id (256 bits), never the token; the server keeps only a
 *   digest of each id, in memory, with an expiry (12 h). HttpOnly, SameSite=Strict, Path=/, and
 *   Secure when the request came over HTTPS (TLS, or `X-Forwarded-Proto: https` from a proxy).
 * - CSRF: the cookie is SameSite=Strict, and every state-changing request authenticated by the
 *   cookie (and the sign-in form itself) must come from the same origin (Sec-Fetch-Site, else
 *   Origin against Host).
 * - The token never appears in a response, a URL, a log line or the data directory.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { hashToken, hasRole, type Role, type UserStore } from '../store/users.js';
import { escapeHtml } from './html.js';
import { remoteAddress } from './rate-limit.js';
import { PAGE_CSP } from './pages.js';
import { requestCookie, requestHeader } from './request-header.js';
import { renderShell } from './shell.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who the request is, for the rate limiter: `token:<digest prefix>` or `user:<name>` once authenticated. */
    oasClient: string;
    /** Who the request is, once authenticated (or `anonymous` on a server without authentication). */
    oasUser: Principal;
  }
}

/**
 * Who a request is: the holder of `api_token` (an admin), a user of `oas users` (by its token or a
 * session it signed in), a user a trusted proxy names (single sign-on), or anyone on a server
 * without authentication (loopback only: an admin).
 */
export interface Principal {
  name: string;
  role: Role;
  kind: 'api_token' | 'user' | 'proxy' | 'open';
}

/** What a session remembers: who signed in (a user's role is read again on each request). */
export interface SessionPrincipal {
  name: string;
  kind: 'api_token' | 'user';
  /** For `api_token`: which token signed in (TokenCheck.clientId), so a new token (a reload) ends its sessions. */
  token?: string;
}

/** The name analyses started with `api_token` are recorded under. */
export const API_TOKEN_USER = 'api_token';

export const SESSION_COOKIE = 'oas_session';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Sessions kept at most; the oldest go first (each needs the token, so this is only a bound). */
const MAX_SESSIONS = 10_000;

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The configured token, kept only as its digest; `matches` takes the same time for any input. */
export class TokenCheck {
  private readonly digest: Buffer;
  /** Names the token's client for rate limiting without revealing it: a digest prefix. */
  readonly clientId: string;

  constructor(token: string) {
    this.digest = sha256(token);
    this.clientId = `token:${createHash('sha256').update(`oas-client:${token}`).digest('hex').slice(0, 16)}`;
  }

  matches(candidate: string | undefined): boolean {
    // Always one comparison of two 32-byte digests, whatever the candidate's length or content.
    const equal = timingSafeEqual(sha256(candidate ?? ''), this.digest);
    return equal && candidate !== undefined;
  }
}

/**
 * Where signed-in browsers are remembered: in this process (SessionStore), or with `redis_url`
 * in Redis (RedisSessionStore), so a browser signed in through one server is signed in on all.
 */
export interface Sessions {
  /** A new session of `who`; returns its id (to put in the cookie). */
  create(who: SessionPrincipal): string | Promise<string>;
  /** Who signed in with this id, while the session lasts. */
  get(id: string | undefined): SessionPrincipal | undefined | Promise<SessionPrincipal | undefined>;
  end(id: string | undefined): void | Promise<void>;
}

/** The digest a session is kept under (never the id the cookie holds). */
function sessionKey(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** Signed-in browsers: digest of the session id -> who and expiry (ms since epoch). In memory only. */
export class SessionStore implements Sessions {
  private readonly sessions = new Map<string, { who: SessionPrincipal; expires: number }>();

  constructor(private readonly ttlMs = SESSION_TTL_MS, private readonly now: () => number = Date.now) {}

  /** A new session; returns its id (to put in the cookie). */
  create(who: SessionPrincipal): string {
    this.prune();
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(this.key(id), { who, expires: this.now() + this.ttlMs });
    return id;
  }

  get(id: string | undefined): SessionPrincipal | undefined {
    if (!id || id.length > 100) return undefined;
    const key = this.key(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expires <= this.now()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session.who;
  }

  end(id: string | undefined): void {
    if (id && id.length <= 100) this.sessions.delete(this.key(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private key(id: string): string {
    return sessionKey(id);
  }

  private prune(): void {
    const now = this.now();
    for (const [key, session] of this.sessions) if (session.expires <= now) this.sessions.delete(key);
  }
}

/** Sessions in Redis: `oas:session:<digest of the id>`, expiring with the session. */
export class RedisSessionStore implements Sessions {
  constructor(
    private readonly redis: { set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>; get(key: string): Promise<string | null>; del(key: string): Promise<number> },
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  async create(who: SessionPrincipal): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.redis.set(`oas:session:${sessionKey(id)}`, JSON.stringify(who), 'PX', this.ttlMs);
    return id;
  }

  async get(id: string | undefined): Promise<SessionPrincipal | undefined> {
    if (!id || id.length > 100) return undefined;
    const value = await this.redis.get(`oas:session:${sessionKey(id)}`);
    if (value === null) return undefined;
    try {
      const who = JSON.parse(value) as SessionPrincipal;
      return typeof who?.name === 'string' && (who.kind === 'api_token' || who.kind === 'user') ? who : undefined;
    } catch {
      return undefined;
    }
  }

  async end(id: string | undefined): Promise<void> {
    if (id && id.length <= 100) await this.redis.del(`oas:session:${sessionKey(id)}`);
  }
}

export interface AuthOptions {
  /** `api_token` (empty: none). */
  token: string;
  /** The API prefix (`/api/`): everything under it is protected. */
  prefix: string;
  /** The users of `oas users`: with one, authentication is required even without `api_token`. */
  users?: UserStore;
  sessions?: Sessions;
  /** Failed sign-ins and bad tokens per client address (setting auth_failures_per_minute). */
  failures?: RateLimiterAbstract;
  /** A user named by a trusted proxy's header (single sign-on, src/server/proxy-auth.ts). */
  proxyUser?: (c: Context) => Promise<Principal | undefined>;
  /** The client's address for limits (the peer, or X-Forwarded-For from a trusted proxy). */
  clientAddress?: (c: Context) => string;
  /** Told of every sign-in and refused credential (the audit trail). */
  onEvent?: (event: AuthEvent) => void;
}

export interface AuthEvent {
  action: 'sign_in' | 'bad_token';
  outcome: 'success' | 'failure';
  user: string | undefined;
  client: string;
  reason?: string;
}

export interface Auth {
  /** Checks every request; install before the routes. */
  middleware: MiddlewareHandler;
  /** `/signin` (GET form, POST token) and `/signout`. */
  routes: Hono;
  sessions: Sessions;
}

/** Paths anyone may load: the pages' HTML (they sign in from there), their assets, sign-in/out, health. */
const PUBLIC_PATHS = [/^\/$/, /^\/history$/, /^\/watchlists$/, /^\/observables\/[^/]+$/, /^\/assets\/[^/]+$/, /^\/favicon\.ico$/, /^\/signin$/, /^\/signout$/, /^\/healthz$/, /^\/readyz$/, /^\/cortex\/api\/status$/];
const RESULTS_PAGE = /^\/results\/[^/]+$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How long the answer to "is there any user?" is reused (a user added by `oas users` counts within it). */
const USERS_CHECK_MS = 1_000;
/** A user's last use is written at most this often. */
const TOUCH_EVERY_MS = 60_000;

const ANONYMOUS: Principal = { name: 'anonymous', role: 'admin', kind: 'open' };

export function createAuth(options: AuthOptions): Auth {
  const check = options.token ? new TokenCheck(options.token) : undefined;
  const sessions = options.sessions ?? new SessionStore();
  const prefix = options.prefix;
  const users = options.users;
  const addressOf = options.clientAddress ?? ((c: Context) => remoteAddress(c));
  const tell = options.onEvent ?? (() => {});

  let usersKnown: { any: boolean; at: number } | undefined;
  const anyUser = async (): Promise<boolean> => {
    if (!users) return false;
    if (usersKnown && Date.now() - usersKnown.at < USERS_CHECK_MS) return usersKnown.any;
    usersKnown = { any: (await users.count()) > 0, at: Date.now() };
    return usersKnown.any;
  };
  const touched = new Map<string, number>();
  const touch = (name: string) => {
    const now = Date.now();
    if ((touched.get(name) ?? 0) + TOUCH_EVERY_MS > now) return;
    touched.set(name, now);
    void users?.touch(name, new Date(now).toISOString()).catch(() => {});
  };

  const isPublic = (path: string): boolean => {
    // The API prefix is protected whatever it is; with prefix `/` the API's GET /results/<id>
    // answers at the results page's path, so that path is protected too.
    if (prefix !== '/' && (path.startsWith(prefix) || `${path}/` === prefix)) return false;
    if (RESULTS_PAGE.test(path)) return prefix !== '/';
    return PUBLIC_PATHS.some((re) => re.test(path));
  };

  /** Who a token is: the holder of api_token, or the user whose token it is. */
  const byToken = async (token: string | undefined): Promise<Principal | undefined> => {
    if (token === undefined || token === '') return undefined;
    if (check?.matches(token)) return { name: API_TOKEN_USER, role: 'admin', kind: 'api_token' };
    const user = token.length <= 200 ? await users?.byTokenHash(hashToken(token)) : undefined;
    if (!user) return undefined;
    touch(user.name);
    return { name: user.name, role: user.role, kind: 'user' };
  };

  const bySession = async (who: SessionPrincipal | undefined): Promise<Principal | undefined> => {
    if (!who) return undefined;
    if (who.kind === 'api_token') return check && who.token === check.clientId ? { name: API_TOKEN_USER, role: 'admin', kind: 'api_token' } : undefined;
    // A removed user's session ends with it; a role changed applies at once.
    const user = await users?.get(who.name);
    return user ? { name: user.name, role: user.role, kind: 'user' } : undefined;
  };

  /** The credential the request presents: 'header', 'cookie', or none; and who it is. */
  const authenticate = async (c: Context): Promise<{ how: 'header' | 'cookie' | 'proxy'; who: Principal } | { how: 'none' | 'refused' }> => {
    const proxied = await options.proxyUser?.(c);
    if (proxied) return { how: 'proxy', who: proxied };
    const authorization = requestHeader(c, 'authorization');
    const apiKey = requestHeader(c, 'x-api-key');
    if (authorization !== undefined || apiKey !== undefined) {
      const bearer = authorization === undefined ? undefined : /^\s*bearer\s+(.*?)\s*$/i.exec(authorization)?.[1];
      const who = (await byToken(bearer)) ?? (await byToken(apiKey?.trim()));
      return who ? { how: 'header', who } : { how: 'refused' };
    }
    const cookie = requestCookie(c, SESSION_COOKIE);
    const who = cookie === undefined ? undefined : await bySession(await sessions.get(cookie));
    return who ? { how: 'cookie', who } : { how: 'none' };
  };

  /** 429 while the client's address has failed too often; undefined when it may go on. */
  const blocked = async (c: Context, address: string) => {
    const limiter = options.failures;
    if (!limiter) return undefined;
    const state = await limiter.get(address);
    if (!state || state.consumedPoints < limiter.points) return undefined;
    const seconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
    return c.json({ error: `too many failed sign-ins or bad tokens from this address: at most ${limiter.points} a minute (setting auth_failures_per_minute); retry in ${seconds} s` }, 429, {
      'Retry-After': String(seconds),
      'Cache-Control': 'no-store',
    });
  };
  const failed = async (address: string) => {
    await options.failures?.penalty(address, 1).catch(() => undefined);
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    const required = Boolean(check) || Boolean(options.proxyUser) || await anyUser();
    if (!required) {
      c.set('oasUser', ANONYMOUS);
      return next();
    }
    const address = addressOf(c);
    // Past the limit, whatever presents a credential or asks for more than a public page waits.
    const presents = requestHeader(c, 'authorization') !== undefined || requestHeader(c, 'x-api-key') !== undefined || requestCookie(c, SESSION_COOKIE) !== undefined;
    if (presents || !isPublic(c.req.path)) {
      const limited = await blocked(c, address);
      if (limited) return limited;
    }
    const seen = await authenticate(c);
    if (seen.how === 'refused') {
      await failed(address);
      tell({ action: 'bad_token', outcome: 'failure', user: undefined, client: address, reason: 'invalid token' });
    }
    if ('who' in seen) {
      c.set('oasUser', seen.who);
      c.set('oasClient', seen.who.kind === 'api_token' ? check!.clientId : `user:${seen.who.name}`);
    }
    if (isPublic(c.req.path)) return next();
    if (!('who' in seen)) {
      return unauthorized(c, seen.how === 'refused'
        ? 'invalid API token (setting api_token, or a token of oas users)'
        : 'authentication required: send your token as "Authorization: Bearer <token>" or "X-API-Key: <token>" (setting api_token, or oas users add), or sign in at /signin');
    }
    if (seen.how === 'cookie' && !SAFE_METHODS.has(c.req.method) && !sameOrigin(c)) {
      return c.json({ error: 'cross-origin request refused: a signed-in browser session is accepted from this server\'s own pages only' }, 403, { 'Cache-Control': 'no-store' });
    }
    const needed = roleFor(c.req.method, c.req.path, prefix);
    if (!hasRole(seen.who.role, needed)) return forbidden(c, seen.who, needed, prefix);
    return next();
  };

  const routes = new Hono();
  // The pages' security headers on every answer but the API's: setting them rebuilds the answer
  // as a new Response, which a poll of is_analysis_complete need not pay for (0.41 against 0.27 ms
  // of server CPU). The MCP endpoint's event streams keep them, as they always had behind a token.
  routes.use('*', async (c, next) => {
    await next();
    if (!c.req.path.startsWith(prefix)) pageHeaders(c);
  });

  routes.get('/signin', (c) => {
    const next = safeNext(c.req.query('next'));
    // Signed in by the proxy in front (single sign-on): no token to ask for.
    if (c.get('oasUser')?.kind === 'proxy') {
      c.header('Cache-Control', 'no-store');
      return c.redirect(next, 303);
    }
    return c.html(signInPage({ next }), 200, { 'Cache-Control': 'no-store' });
  });

  routes.post(
    '/signin',
    bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.html(signInPage({ next: '/', error: 'The form was too large.' }), 413) }),
    async (c) => {
      if (!sameOrigin(c)) {
        return c.html(signInPage({ next: '/', error: 'Sign in from the sign-in page of this server.' }), 403, { 'Cache-Control': 'no-store' });
      }
      let form: Record<string, unknown>;
      try {
        form = await c.req.parseBody();
      } catch {
        form = {};
      }
      const next = safeNext(typeof form.next === 'string' ? form.next : undefined);
      const token = typeof form.token === 'string' ? form.token.trim() : undefined;
      const address = addressOf(c);
      const limited = await blocked(c, address);
      if (limited) return limited;
      const who = await byToken(token);
      if (!who || (who.kind !== 'api_token' && who.kind !== 'user')) {
        await failed(address);
        tell({ action: 'sign_in', outcome: 'failure', user: undefined, client: address, reason: token ? 'invalid token' : 'no token' });
        return c.html(signInPage({ next, error: 'That is not the API token of this server, nor a user\'s token. Try again.' }), 401, {
          'WWW-Authenticate': 'Bearer',
          'Cache-Control': 'no-store',
        });
      }
      tell({ action: 'sign_in', outcome: 'success', user: who.name, client: address });
      await sessions.end(requestCookie(c, SESSION_COOKIE));
      const id = await sessions.create(who.kind === 'api_token' ? { name: who.name, kind: who.kind, token: check!.clientId } : { name: who.name, kind: who.kind });
      setCookie(c, SESSION_COOKIE, id, {
        path: '/',
        httpOnly: true,
        sameSite: 'Strict',
        secure: overHttps(c),
        maxAge: Math.floor(SESSION_TTL_MS / 1000),
      });
      c.header('Cache-Control', 'no-store');
      return c.redirect(next, 303);
    },
  );

  const signOut = async (c: Context) => {
    const id = requestCookie(c, SESSION_COOKIE);
    // A request without the (SameSite=Strict) cookie is a cross-site one or has nothing to end.
    if (id !== undefined && (SAFE_METHODS.has(c.req.method) || sameOrigin(c))) {
      await sessions.end(id);
      deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: overHttps(c) });
    }
    c.header('Cache-Control', 'no-store');
    // Signed in by the proxy in front (single sign-on): oas holds no session to end; say where to.
    const who = c.get('oasUser');
    if (who?.kind === 'proxy') return c.html(proxySignOutPage(who.name), 200);
    return c.redirect('/signin', 303);
  };
  routes.get('/signout', signOut);
  routes.post('/signout', signOut);

  return { middleware, routes, sessions };
}

/**
 * The role a request needs: starting an analysis (POST <prefix>analyze) or reading a file (POST
 * <prefix>extract) an analyst; adding, removing or running a watchlist (POST and DELETE under
 * <prefix>watchlists, issue 36) an analyst; pushing an analysis (POST <prefix>analyses/<id>/push,
 * issue 37) an analyst; running a Cortex analyzer or deleting a Cortex job (issue 39) an analyst;
 * `/metrics` and `POST <prefix>doctor` (issue 40) an admin; anything else a viewer. The MCP tools that start analyses check it themselves.
 */
export function roleFor(method: string, path: string, prefix: string): Role {
  if (path === '/metrics') return 'admin';
  // `oas doctor` on the server (issue 40): its configuration, proxy and upstreams are the admin's.
  if (method === 'POST' && path === `${prefix}doctor`) return 'admin';
  // Uploading a file to read it (issue 35) is an analyst's, like starting an analysis.
  if (method === 'POST' && (path === `${prefix}analyze` || path === `${prefix}extract`)) return 'analyst';
  if (isWatchlistChange(method, path, prefix)) return 'analyst';
  // Pushing an analysis into a platform (issue 37) writes there: an analyst's.
  if (isPush(method, path, prefix)) return 'analyst';
  // The Cortex API (issue 39): running an analyzer or deleting a job is an analyst's.
  if (isCortexChange(method, path)) return 'analyst';
  // The allowlist and the marks (issue 38): viewers see them, analysts and admins change them.
  if (isKnowledgeChange(method, path, prefix)) return 'analyst';
  return 'viewer';
}

/** The Cortex API's changes (issue 39): `POST /cortex/api/analyzer/<id>/run`, `DELETE /cortex/api/job/<id>`. */
function isCortexChange(method: string, path: string): boolean {
  return (method === 'POST' && /^\/cortex\/api\/analyzer\/[^/]+\/run$/.test(path)) || (method === 'DELETE' && path.startsWith('/cortex/api/job/'));
}

/** A change to the allowlist or the marks (issue 38): anything but reading them. */
function isKnowledgeChange(method: string, path: string, prefix: string): boolean {
  return !SAFE_METHODS.has(method) && [`${prefix}allowlist`, `${prefix}marks`].some((base) => path === base || path.startsWith(`${base}/`));
}

/** A change to the watchlists (issue 36): anything but reading them. */
function isWatchlistChange(method: string, path: string, prefix: string): boolean {
  return !SAFE_METHODS.has(method) && (path === `${prefix}watchlists` || path.startsWith(`${prefix}watchlists/`));
}

/** A push of an analysis (issue 37): `POST <prefix>analyses/<id>/push`. */
function isPush(method: string, path: string, prefix: string): boolean {
  return method === 'POST' && path.startsWith(`${prefix}analyses/`) && path.endsWith('/push');
}

/** What a role may not do, in one line. */
export function forbiddenMessage(who: Principal, needed: Role, what = needed === 'admin' ? 'this needs the admin role' : 'starting analyses needs the analyst or admin role'): string {
  return `forbidden: ${who.name} is ${who.role === 'viewer' ? 'a' : 'an'} ${who.role}; ${what} (oas users)`;
}

function forbidden(c: Context, who: Principal, needed: Role, prefix: string) {
  const what = needed !== 'analyst' ? undefined
    : isWatchlistChange(c.req.method, c.req.path, prefix) ? 'adding, removing or running watchlists needs the analyst or admin role'
      : isPush(c.req.method, c.req.path, prefix) ? 'pushing results to a platform needs the analyst or admin role'
        : isKnowledgeChange(c.req.method, c.req.path, prefix) ? 'changing the allowlist or the marks needs the analyst or admin role'
          : isCortexChange(c.req.method, c.req.path) ? 'running a Cortex analyzer or deleting a job needs the analyst or admin role' : undefined;
  return c.json({ error: forbiddenMessage(who, needed, what) }, 403, { 'Cache-Control': 'no-store' });
}

function unauthorized(c: Context, message: string) {
  return c.json({ error: message }, 401, { 'WWW-Authenticate': 'Bearer', 'Cache-Control': 'no-store' });
}

/** The pages' security headers, for the sign-in page (served outside the pages' app). */
function pageHeaders(c: Context): void {
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('Content-Security-Policy', PAGE_CSP);
  c.header('X-Frame-Options', 'DENY');
}

/** HTTPS as the browser sees it: TLS here, or a TLS-terminating proxy saying so. */
export function overHttps(c: Context): boolean {
  const forwarded = requestHeader(c, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  if (forwarded === 'https') return true;
  try {
    return new URL(c.req.url).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Whether a browser request comes from this server's own pages: `Sec-Fetch-Site` when the browser
 * sends it, else the `Origin` host against the `Host` header. Neither (a non-browser client) is
 * allowed: cross-site requests from browsers always carry one of them.
 */
export function sameOrigin(c: Context): boolean {
  const site = requestHeader(c, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = requestHeader(c, 'origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host.toLowerCase() === (requestHeader(c, 'host') ?? '').toLowerCase();
  } catch {
    return false; // `Origin: null` and other opaque origins
  }
}

/** Where to go after signing in: a path of this server only (no open redirect). */
function safeNext(value: string | undefined): string {
  if (!value || value.length > 2048) return '/';
  if (!/^\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/.test(value)) return '/';
  if (value === '/signin' || value.startsWith('/signin?') || value.startsWith('/signout')) return '/';
  return value;
}

/** /signout for a user the proxy signed in: the sign-out is the proxy's. */
function proxySignOutPage(name: string): string {
  return renderShell({
    title: 'oas · sign out',
    main: `<section class="panel signin">
<h1>Signed in through single sign-on</h1>
<p>You are signed in as <strong>${escapeHtml(name)}</strong> by the sign-in service in front of this server (single sign-on), not by oas: sign out there (with oauth2-proxy, <code>/oauth2/sign_out</code>), then close this tab.</p>
<p><a href="/">Back to oas</a></p>
</section>`,
  });
}

/** The sign-in page: a plain HTML form (no script at all, so the CSP stays as it is). */
function signInPage(options: { next: string; error?: string }): string {
  const error = options.error ? `<p class="form-error" role="alert">${escapeHtml(options.error)}</p>` : '';
  return renderShell({
    title: 'oas · sign in',
    main: `<section class="panel signin">
<h1>Sign in</h1>
<p class="muted">This oas server asks for your token: yours from <code>oas users</code>, or the server's API token (setting <code>api_token</code>). It is sent once; your browser then keeps a session cookie for 12 hours, until you sign out.</p>
${error}
<form method="post" action="/signin">
<input type="hidden" name="next" value="${escapeHtml(options.next)}">
<div class="field"><label class="field-label" for="token">Token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required autofocus spellcheck="false"></div>
<button type="submit" class="primary">Sign in</button>
</form>
</section>`,
  });
}
