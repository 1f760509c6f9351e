/**
 * `GET /healthz` and `GET /readyz` of `oas serve`, for load balancers and orchestrators. Public
 * (no token) and answered ahead of the Host check, as they tell nothing but whether the server
 * is up: a tiny JSON, no data, no secret, no path or address.
 *
 * - `/healthz`: 200 `{"status":"ok"}` while the process runs; 503 `{"status":"shutting down"}`
 *   once `oas serve` has begun to stop (SIGTERM, SIGINT).
 * - `/readyz`: 200 `{"status":"ok"}` when the store answers (the SQLite file, or with `redis_url`
 *   Redis), else 503 `{"status":"unavailable","reason":"<one line>"}`.
 */
import { statSync } from 'node:fs';
import { Hono, type Context } from 'hono';
import type { App } from '../app.js';

/** Set by `oas serve` as it begins to stop. */
export interface HealthState {
  stopping: boolean;
}

/** How long the store has to answer a readiness probe. */
const PROBE_TIMEOUT_MS = 2_000;

export function healthRoutes(app: App, state: HealthState): Hono {
  const routes = new Hono();
  routes.get('/healthz', (c) => (state.stopping
    ? answer(c, 503, { status: 'shutting down' })
    : answer(c, 200, { status: 'ok' })));
  routes.get('/readyz', async (c) => {
    const reason = state.stopping ? 'shutting down' : await unready(app);
    return reason === undefined ? answer(c, 200, { status: 'ok' }) : answer(c, 503, { status: 'unavailable', reason });
  });
  return routes;
}

function answer(c: Context, status: 200 | 503, body: Record<string, string>): Response {
  return c.json(body, status, { 'Cache-Control': 'no-store' });
}

/** Why the store does not answer (one line, nothing internal), or undefined when it does. */
export async function unready(app: App): Promise<string | undefined> {
  const link = app.scale?.link;
  if (link) {
    if (!link.ready()) return 'Redis does not answer';
    const pong = await within(link.commands.ping().then(() => true, () => false));
    if (pong !== true) return 'Redis does not answer';
  }
  const storage = app.storage;
  if (storage) {
    // SQLite keeps working on a file removed or moved under it, and loses everything at the next
    // start: a database no longer where data_dir says is not ready.
    try {
      if (!statSync(storage.path).isFile()) return 'the SQLite database is not a file in data_dir';
    } catch {
      return 'the SQLite database is missing from data_dir';
    }
    const read = await within(storage.analysesTable.query('SELECT 1 FROM analyses LIMIT 1').then(() => true, (error: unknown) => sqliteCode(error)));
    if (read === 'late') return 'the SQLite database does not answer';
    if (read !== true) return `the SQLite database cannot be read (${read})`;
  }
  return undefined;
}

/** `SQLITE_CORRUPT`, `SQLITE_IOERR`...: the code, never the message (it may hold a path). */
function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code) ? code : 'error';
}

async function within<T>(promise: Promise<T>): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
