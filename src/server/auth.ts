/**
 * `api_token`: every API endpoint, every `/ui/` JSON endpoint and `/export/` require the token, as
 * `Authorization: Bearer <token>` or `X-API-Key: <token>`, or a session cookie the web UI got by
 * posting the token once to `/signin`. Everything else that is not one of the pages (`/`,
 * `/history`, `/results/<id>`, their assets, `/signin`, `/signout`) requires it too: unknown paths
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
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { escapeHtml } from './html.js';
import { PAGE_CSP } from './pages.js';
import { renderShell } from './shell.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who the request is, for the rate limiter: `token:<digest prefix>` once authenticated. */
    oasClient: string;
  }
}

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
  /** A new session; returns its id (to put in the cookie). */
  create(): string | Promise<string>;
  valid(id: string | undefined): boolean | Promise<boolean>;
  end(id: string | undefined): void | Promise<void>;
}

/** The digest a session is kept under (never the id the cookie holds). */
function sessionKey(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** Signed-in browsers: digest of the session id -> expiry (ms since epoch). In memory only. */
export class SessionStore implements Sessions {
  private readonly sessions = new Map<string, number>();

  constructor(private readonly ttlMs = SESSION_TTL_MS, private readonly now: () => number = Date.now) {}

  /** A new session; returns its id (to put in the cookie). */
  create(): string {
    this.prune();
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(this.key(id), this.now() + this.ttlMs);
    return id;
  }

  valid(id: string | undefined): boolean {
    if (!id || id.length > 100) return false;
    const key = this.key(id);
    const expires = this.sessions.get(key);
    if (expires === undefined) return false;
    if (expires <= this.now()) {
      this.sessions.delete(key);
      return false;
    }
    return true;
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
    for (const [key, expires] of this.sessions) if (expires <= now) this.sessions.delete(key);
  }
}

/** Sessions in Redis: `oas:session:<digest of the id>`, expiring with the session. */
export class RedisSessionStore implements Sessions {
  constructor(
    private readonly redis: { set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>; exists(key: string): Promise<number>; del(key: string): Promise<number> },
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  async create(): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.redis.set(`oas:session:${sessionKey(id)}`, '1', 'PX', this.ttlMs);
    return id;
  }

  async valid(id: string | undefined): Promise<boolean> {
    if (!id || id.length > 100) return false;
    return (await this.redis.exists(`oas:session:${sessionKey(id)}`)) === 1;
  }

  async end(id: string | undefined): Promise<void> {
    if (id && id.length <= 100) await this.redis.del(`oas:session:${sessionKey(id)}`);
  }
}

export interface AuthOptions {
  token: string;
  /** The API prefix (`/api/`): everything under it is protected. */
  prefix: string;
  sessions?: Sessions;
}

export interface Auth {
  /** Checks every request; install before the routes. */
  middleware: MiddlewareHandler;
  /** `/signin` (GET form, POST token) and `/signout`. */
  routes: Hono;
  sessions: Sessions;
}

/**
 * Paths anyone may load: the pages' HTML (they sign in from there), their assets, sign-in/out, and
 * the health probes (health.ts: answered before this middleware, and tell nothing).
 */
const PUBLIC_PATHS = [/^\/$/, /^\/history$/, /^\/assets\/[^/]+$/, /^\/favicon\.ico$/, /^\/signin$/, /^\/signout$/, /^\/healthz$/, /^\/readyz$/];
const RESULTS_PAGE = /^\/results\/[^/]+$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function createAuth(options: AuthOptions): Auth {
  const check = new TokenCheck(options.token);
  const sessions = options.sessions ?? new SessionStore();
  const prefix = options.prefix;

  const isPublic = (path: string): boolean => {
    // The API prefix is protected whatever it is; with prefix `/` the API's GET /results/<id>
    // answers at the results page's path, so that path is protected too.
    if (prefix !== '/' && (path.startsWith(prefix) || `${path}/` === prefix)) return false;
    if (RESULTS_PAGE.test(path)) return prefix !== '/';
    return PUBLIC_PATHS.some((re) => re.test(path));
  };

  /** 'header' or 'cookie' when the request carries a valid credential, else undefined. */
  const authenticate = async (c: Context): Promise<'header' | 'cookie' | undefined> => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const match = /^\s*bearer\s+(.*?)\s*$/i.exec(authorization);
      if (check.matches(match ? match[1] : undefined)) return 'header';
    }
    const apiKey = c.req.header('x-api-key');
    if (apiKey !== undefined && check.matches(apiKey.trim())) return 'header';
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie !== undefined && await sessions.valid(cookie)) return 'cookie';
    return undefined;
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    const how = await authenticate(c);
    if (how) c.set('oasClient', check.clientId);
    if (isPublic(c.req.path)) return next();
    if (!how) {
      const presented = c.req.header('authorization') !== undefined || c.req.header('x-api-key') !== undefined;
      return unauthorized(c, presented
        ? 'invalid API token (setting api_token)'
        : 'authentication required: send the API token as "Authorization: Bearer <token>" or "X-API-Key: <token>" (setting api_token), or sign in at /signin');
    }
    if (how === 'cookie' && !SAFE_METHODS.has(c.req.method) && !sameOrigin(c)) {
      return c.json({ error: 'cross-origin request refused: a signed-in browser session is accepted from this server\'s own pages only' }, 403, { 'Cache-Control': 'no-store' });
    }
    return next();
  };

  const routes = new Hono();
  routes.use('*', async (c, next) => {
    await next();
    pageHeaders(c);
  });

  routes.get('/signin', (c) => {
    const next = safeNext(c.req.query('next'));
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
      if (!check.matches(token)) {
        return c.html(signInPage({ next, error: 'That is not the API token of this server. Try again.' }), 401, {
          'WWW-Authenticate': 'Bearer',
          'Cache-Control': 'no-store',
        });
      }
      await sessions.end(getCookie(c, SESSION_COOKIE));
      const id = await sessions.create();
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
    const id = getCookie(c, SESSION_COOKIE);
    // A request without the (SameSite=Strict) cookie is a cross-site one or has nothing to end.
    if (id !== undefined && (SAFE_METHODS.has(c.req.method) || sameOrigin(c))) {
      await sessions.end(id);
      deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: overHttps(c) });
    }
    c.header('Cache-Control', 'no-store');
    return c.redirect('/signin', 303);
  };
  routes.get('/signout', signOut);
  routes.post('/signout', signOut);

  return { middleware, routes, sessions };
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
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
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
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host.toLowerCase() === (c.req.header('host') ?? '').toLowerCase();
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

/** The sign-in page: a plain HTML form (no script at all, so the CSP stays as it is). */
function signInPage(options: { next: string; error?: string }): string {
  const error = options.error ? `<p class="form-error" role="alert">${escapeHtml(options.error)}</p>` : '';
  return renderShell({
    title: 'oas · sign in',
    main: `<section class="panel signin">
<h1>Sign in</h1>
<p class="muted">This oas server asks for its API token (setting <code>api_token</code>). It is sent once; your browser then keeps a session cookie for 12 hours, until you sign out.</p>
${error}
<form method="post" action="/signin">
<input type="hidden" name="next" value="${escapeHtml(options.next)}">
<div class="field"><label class="field-label" for="token">API token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required autofocus spellcheck="false"></div>
<button type="submit" class="primary">Sign in</button>
</form>
</section>`,
  });
}
