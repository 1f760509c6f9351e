/**
 * Concurrency under the default settings (issue 12): an engine without a documented limit has
 * many calls in flight at once, nothing else (global limit, connections per origin) holds them
 * back, the global `concurrency` is still a hard bound, and engines with a quota never exceed it.
 *
 * Every upstream is one loopback fake (one origin for all engines) whose answers wait at a gate:
 * held until the expected number of requests is in flight, so a limit below that number shows as
 * a lower peak (after a safety release), never as a timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { SETTING_DEFAULTS } from '../src/engine/context.js';
import { defaultConfig } from '../src/config/schema.js';
import { extractObservables } from '../src/observables/extract.js';
import { startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeRoute } from './fakes/http.js';
import { intelRoutes, intelSettings } from './fakes/intel.js';
import * as shodan from './fakes/shodan.js';
import * as virustotal from './fakes/virustotal.js';
import { removeTempDir } from './helpers/temp.js';
import { configFor, type Upstreams } from './helpers/upstreams.js';

/** Counts requests in flight; holds every answer until `target` are in flight at once. */
class Gate {
  inFlight = 0;
  peak = 0;
  total = 0;
  private open = false;
  private readonly waiting: (() => void)[] = [];
  private readonly safety: NodeJS.Timeout;

  /**
   * `settleMs`: once `target` are in flight, keep holding that long before releasing (so that a
   * request over a limit has every chance to arrive). The safety release only ends a test whose
   * target is never reached (the peak assertion then fails); it asserts nothing about time. It
   * comes before the engines' own timeouts (5 s and more), which would free their slots while
   * the fake still counts their abandoned requests.
   */
  constructor(readonly target: number, private readonly settleMs = 0) {
    this.safety = setTimeout(() => this.release(), 4000).unref();
  }

  async hold(): Promise<void> {
    this.total++;
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    if (!this.open && this.inFlight >= this.target) {
      if (this.settleMs > 0) setTimeout(() => this.release(), this.settleMs);
      else this.release();
    }
    if (!this.open) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight--;
  }

  release(): void {
    this.open = true;
    clearTimeout(this.safety);
    for (const resume of this.waiting.splice(0)) resume();
  }
}

let fake: FakeHttpServer;
let gate = new Gate(1);
const apps: { app: App; dir: string }[] = [];

/** Every route of `routes`, answering only once the current gate lets it. */
function gated(routes: Record<string, FakeRoute>): Record<string, FakeRoute> {
  return Object.fromEntries(Object.entries(routes).map(([key, route]) => [key, async (req: FakeRequest) => {
    await gate.hold();
    return typeof route === 'function' ? route(req) : route;
  }]));
}

before(async () => {
  fake = await startFakeHttp(gated({ ...intelRoutes(), ...virustotal.fakeRoutes(), ...shodan.fakeRoutes() }));
});

after(async () => {
  gate.release();
  for (const { app, dir } of apps) {
    await app.close();
    removeTempDir(dir);
  }
  await fake.close();
});

/** An app on the defaults (plus `extra`), every engine pointed at the one fake origin. */
async function appWith(extra: Record<string, unknown> = {}): Promise<App> {
  const engines = {
    ...intelSettings(fake.url),
    provider_24: { ...virustotal.fakeSettings(fake.url), api_key: 'vt-test-key' },
    provider_20: { ...shodan.fakeSettings(fake.url), api_key: 'shodan-test-key' },
  };
  const upstreams = { settings: { dns_servers: ['127.0.0.1:9'], engines } } as unknown as Upstreams;
  const config = configFor(upstreams, extra);
  const app = await createApp({ file: config.file, env: {}, flags: {} });
  apps.push({ app, dir: config.dir });
  return app;
}

const ips = (n: number, octet: number) => Array.from({ length: n }, (_, i) => `34.${octet}.0.${i + 1}`).join('\n');
const md5s = (n: number) => Array.from({ length: n }, (_, i) => i.toString(16).padStart(32, 'a')).join('\n');

describe('concurrency: defaults', () => {
  test('an engine without a documented limit runs at least 32 calls at once; the global default leaves room for several', () => {
    assert.ok(SETTING_DEFAULTS.concurrency >= 32);
    assert.ok(defaultConfig({}).concurrency >= 4 * SETTING_DEFAULTS.concurrency);
  });

  test('many calls of several engines on one origin are all in flight at once', async () => {
    const app = await appWith();
    // 48 public IPs x urlscan, github, ipquery: 144 requests, 48 per engine, one origin.
    const observables = extractObservables(ips(48, 41));
    const selections = app.catalog.select(['urlscan', 'github', 'ipquery']);
    gate = new Gate(144);
    fake.reset();
    const results = await app.runner.analyze(observables, selections, { ignoreCache: true });
    assert.equal(gate.total, 144);
    assert.equal(gate.peak, 144, `only ${gate.peak} of 144 requests were in flight at once`);
    assert.equal(results.length, 48);
    assert.deepEqual(results.filter((r) => r.errors), []);
  });
});

describe('concurrency: limits still hold', () => {
  test('the global concurrency bounds the calls in flight across engines', async () => {
    const app = await appWith({ concurrency: 10 });
    const observables = extractObservables(ips(20, 42));
    gate = new Gate(10, 100);
    const results = await app.runner.analyze(observables, app.catalog.select(['urlscan', 'github', 'ipquery']), { ignoreCache: true });
    assert.equal(gate.total, 60);
    assert.equal(gate.peak, 10);
    assert.deepEqual(results.filter((r) => r.errors), []);
  });

  test('an engine\'s own concurrency setting still bounds it', async () => {
    const app = await appWith({ engines: { provider_23: { concurrency: 5 } } });
    gate = new Gate(5, 100);
    await app.runner.analyze(extractObservables(ips(20, 43)), app.catalog.select(['urlscan']), { ignoreCache: true });
    assert.equal(gate.total, 20);
    assert.equal(gate.peak, 5);
  });

  test('engines with a quota never exceed it: VirusTotal 4 a minute, Shodan 1 a second', async () => {
    // No waiting for the quota: a call over it fails at once instead of being paced.
    const app = await appWith({ engines: { provider_24: { quota_max_wait_ms: 0 }, provider_20: { quota_max_wait_ms: 0 } } });
    fake.reset();
    gate = new Gate(5, 100);
    const results = await app.runner.analyze(extractObservables(`${md5s(10)}\n${ips(10, 44)}`), app.catalog.select(['virustotal', 'shodan']), { ignoreCache: true });
    // VirusTotal applies to all 20 observables, Shodan to the 10 IPs.
    assert.equal(fake.hits(`GET ${virustotal.PREFIX}/`).length, 4);
    assert.equal(fake.hits('GET /shodan/').length, 1);
    assert.equal(gate.peak, 5, 'the calls within the quotas ran at once');
    const errors = results.flatMap((r) => Object.values(r.errors ?? {}));
    assert.equal(errors.filter((e) => /quota of 4 per minute reached/.test(e)).length, 16);
    assert.equal(errors.filter((e) => /quota of 1 per 1000 ms reached/.test(e)).length, 9);
    assert.equal(errors.length, 25);
  });
});
