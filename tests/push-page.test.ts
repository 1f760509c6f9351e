/**
 * What the results page learns of the push targets (issue 37), without a browser: GET
 * /ui/push-targets lists the configured platforms by name (set in `push`, a key from the
 * environment, or borrowed from the MISP engine's settings) and says whether the signed-in user
 * may push (analyst or admin); it never holds a URL, a key, or where either is set. The browser
 * test (browser-push.test.ts) drives the buttons themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { listen, type RunningServer } from '../src/server/listen.js';
import type { PushTargetsView } from '../src/view/types.js';
import { runOas } from './helpers/cli.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'push-page-api-token-Rw3Kd9Lq2Xz7';
const MISP_URL = 'http://127.0.0.1:9/misp-secret-path';
const MISP_KEY = 'misp-page-key-Tq8Vn2Hs5Jc1Pw4Lm7';
const THEHIVE_URL = 'http://127.0.0.1:9/thehive-secret-path';
const THEHIVE_KEY = 'thehive-page-key-Gz6Fb3Yr8Nd2Qk5';
const ENGINE_MISP_URL = 'http://127.0.0.1:9/misp-engine-path';
const ENGINE_MISP_KEY = 'misp-engine-key-Wm4Ct7Hx1Vb9Ls3';

/** The app as `oas serve` runs it, on `config`; closed after the suite. */
function served(): { start(file: string): Promise<string>; stop(): Promise<void> } {
  let app: App | undefined;
  let server: RunningServer | undefined;
  return {
    async start(file) {
      app = await createApp({ file, flags: { port: 0 }, env: {} });
      server = await listen(app);
      return server.url;
    },
    async stop() {
      await server?.close();
      await app?.close();
    },
  };
}

async function targets(url: string, token?: string): Promise<{ status: number; text: string; view: PushTargetsView }> {
  const res = await fetch(`${url}/ui/push-targets`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, text, view: (res.status === 200 ? JSON.parse(text) : undefined) as PushTargetsView };
}

/** Nothing of where or how a target is reached. */
function noSecrets(text: string): void {
  for (const secret of [MISP_URL, MISP_KEY, THEHIVE_URL, THEHIVE_KEY, ENGINE_MISP_URL, ENGINE_MISP_KEY, '127.0.0.1', 'secret-path', 'api_key', 'OAS_PUSH', 'provider_15']) {
    assert.ok(!text.includes(secret), `${secret} in ${text}`);
  }
}

describe('GET /ui/push-targets', { timeout: 60_000 }, () => {
  let upstreams: Upstreams;
  const withAuth = served();
  const open = served();
  const borrowed = served();
  const urls = new Map<string, string>();
  const tokens = new Map<string, string>();
  const savedEnv = process.env['OAS_PUSH_THEHIVE_API_KEY'];

  before(async () => {
    upstreams = await startUpstreams();
    // TheHive's key from its environment variable, as a team would set it.
    process.env['OAS_PUSH_THEHIVE_API_KEY'] = THEHIVE_KEY;
    const { dir, file } = configFor(upstreams, {
      api_token: API_TOKEN,
      auth_failures_per_minute: 1000,
      push: { misp: { url: MISP_URL, api_key: MISP_KEY }, thehive: { url: THEHIVE_URL }, opencti: { url: 'http://127.0.0.1:9/opencti' } },
    });
    for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst'], ['ada', 'admin']] as const) {
      const run = await runOas(dir, ['users', 'add', name, '--role', role, '--config', file]);
      assert.equal(run.code, 0, run.stderr);
      tokens.set(name, run.stdout.trim());
    }
    urls.set('auth', await withAuth.start(file));
    // No push setting, no authentication (everyone is the loopback server's admin).
    urls.set('open', await open.start(configFor(upstreams).file));
    // The MISP engine configured: the push borrows its server and key.
    urls.set('borrowed', await borrowed.start(configFor(upstreams, { engines: { provider_15: { base_url: ENGINE_MISP_URL, api_key: ENGINE_MISP_KEY } } }).file));
  });

  after(async () => {
    if (savedEnv === undefined) delete process.env['OAS_PUSH_THEHIVE_API_KEY'];
    else process.env['OAS_PUSH_THEHIVE_API_KEY'] = savedEnv;
    await withAuth.stop();
    await open.stop();
    await borrowed.stop();
    await upstreams?.close();
  });

  test('an analyst and an admin get the configured targets by name, in their order, and may push', async () => {
    for (const [who, role] of [['alice', 'analyst'], ['ada', 'admin']] as const) {
      const { status, text, view } = await targets(urls.get('auth')!, tokens.get(who));
      assert.equal(status, 200, text);
      // OpenCTI has a URL but no token: not configured, not offered.
      assert.deepEqual(view, { targets: [{ id: 'misp', label: 'MISP' }, { id: 'thehive', label: 'TheHive' }], can_push: true, role });
      noSecrets(text);
    }
    const token = await targets(urls.get('auth')!, API_TOKEN);
    assert.equal(token.view.can_push, true, 'api_token acts as admin');
  });

  test('a viewer learns the names too, and that it may not push', async () => {
    const { status, text, view } = await targets(urls.get('auth')!, tokens.get('vera'));
    assert.equal(status, 200, text);
    assert.deepEqual(view, { targets: [{ id: 'misp', label: 'MISP' }, { id: 'thehive', label: 'TheHive' }], can_push: false, role: 'viewer' });
    noSecrets(text);
    // And the API agrees: the push is refused before anything is read.
    const refused = await fetch(`${urls.get('auth')}/api/analyses/00000000-0000-4000-8000-000000000000/push`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.get('vera')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'misp' }),
    });
    assert.equal(refused.status, 403);
  });

  test('without a session or token it is refused like the other /ui/ reads', async () => {
    const { status, text } = await targets(urls.get('auth')!);
    assert.equal(status, 401);
    noSecrets(text);
  });

  test('no push target configured: an empty list', async () => {
    const { status, text, view } = await targets(urls.get('open')!);
    assert.equal(status, 200, text);
    assert.deepEqual(view, { targets: [], can_push: true, role: 'admin' });
    assert.equal((await fetch(`${urls.get('open')}/ui/push-targets`)).headers.get('cache-control'), 'no-store');
  });

  test('the MISP engine configured makes MISP a target, its server and key never shown', async () => {
    const { status, text, view } = await targets(urls.get('borrowed')!);
    assert.equal(status, 200, text);
    assert.deepEqual(view.targets, [{ id: 'misp', label: 'MISP' }]);
    noSecrets(text);
  });
});
