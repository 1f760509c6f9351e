/**
 * Issue 36, webhooks, one server without Redis: deliveries signed and verified by a receiver
 * written with the Standard Webhooks library (a tampered body refused), retried against a receiver
 * that refuses, fails, times out or asks to wait (Retry-After), then answers; given up after 8
 * tries over about an hour (on a virtual clock: no test waits for it); kept in the SQLite file
 * across a restart; a whole analysis through the API to three endpoints (standard, Slack, one whose
 * max_tlp cuts the data) and a callback_url, with no secret in any body, the metric and the audit
 * line; the settings and their errors; `oas webhooks test`.
 *
 * Loopback only; no timing assertion (a try's timeout is short so that a hung receiver costs
 * little; the waits between tries are virtual).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createApp, type App } from '../src/app.js';
import { attachWebhooks } from '../src/automation/attach.js';
import { CALLBACK, sendOnce, signedHeaders, type Delivery } from '../src/automation/delivery.js';
import type { OasEvent } from '../src/automation/events.js';
import type { DeliveryOutcome } from '../src/automation/outbox.js';
import { MAX_ATTEMPTS, RETRY_WAITS_MS } from '../src/automation/retry.js';
import { checkWebhookSecrets } from '../src/automation/secrets.js';
import { sqliteOutbox } from '../src/automation/sqlite-outbox.js';
import { createWebhooks, type Webhooks } from '../src/automation/webhooks.js';
import { InputError } from '../src/analysis/request.js';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { defaultConfig, type Config, type WebhookSettings } from '../src/config/schema.js';
import { Catalog, loadEngineDefinitions } from '../src/engine/catalog.js';
import { openAuditLog } from '../src/fs/audit-log.js';
import { HttpTransport } from '../src/http/client.js';
import { listen, secretValues, type RunningServer } from '../src/server/listen.js';
import { createMetrics } from '../src/server/metrics.js';
import { openStorage, type Storage } from '../src/store/storage.js';
import { newSecret, startWebhookReceiver, type WebhookReceiver } from './fakes/webhook-receiver.js';
import { noStack, runOas } from './helpers/cli.js';
import { spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { parseExposition, valueOf } from './helpers/prometheus.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { virtualClock } from './helpers/virtual-clock.js';
import type { Clock } from '../src/runner/quota.js';

const SECRET = newSecret();
const CALLBACK_SECRET = newSecret();
const API_TOKEN = 'webhooks-test-api-token-Jq4Wv8Zt2Lm6';
const VT_KEY = 'OASSECRET-vt-key-of-the-webhooks-test-7Rk3';
/** A try's limit here: a hung receiver costs this much real time, once. */
const TRY_MS = 400;

function endpoint(url: string, more: Partial<WebhookSettings> = {}): WebhookSettings {
  return { name: 'soc', url, events: ['analysis.completed', 'observable.verdict', 'watchlist.changed'], secret_env: 'OAS_TEST_HOOK_SECRET', format: 'standard', min_verdict: 'suspicious', max_tlp: 'AMBER', ...more };
}

const watchEvent = (n = 1): OasEvent => ({ type: 'watchlist.changed', timestamp: new Date().toISOString(), analysis: { id: `a-${n}`, tlp: 'GREEN' }, data: { watchlist: 'watchlist-marker-q7', analysis_id: `a-${n}`, link: `/results/a-${n}`, changes: [{ observable: 'observable-marker-z9.example', before: null, after: { verdict: 'malicious' } }] } });

interface Harness {
  webhooks: Webhooks;
  outcomes: DeliveryOutcome[];
  warnings: string[];
  clock: Clock;
  storage: Storage;
  auditPath: string;
  metrics: ReturnType<typeof createMetrics>;
  setConfig(config: Config): void;
  drained(): Promise<void>;
  pending(): Promise<number>;
  /** Stops the deliveries and closes the file (the data directory stays). */
  close(): Promise<void>;
}

/** Webhooks over the SQLite file of `dir` (a fresh one by default), on a virtual clock. */
async function harness(webhooks: WebhookSettings[], dir = tempDir('oas-webhooks-'), clock: Clock = virtualClock()): Promise<Harness & { dir: string }> {
  const storage = await openStorage(dir);
  const catalog = new Catalog(await loadEngineDefinitions(), 'main', {});
  const transport = new HttpTransport();
  const outcomes: DeliveryOutcome[] = [];
  const warnings: string[] = [];
  const metrics = createMetrics();
  const auditPath = join(dir, 'audit.log');
  let config: Config = { ...defaultConfig({}), data_dir: dir, webhooks };
  let outbox: ReturnType<typeof sqliteOutbox> | undefined;
  const made = createWebhooks({
    config: () => config,
    catalog: () => catalog,
    outbox: (hooks) => (outbox = sqliteOutbox(storage.analysesTable, { ...hooks, clock })),
    transport: () => transport,
    results: async function* () {},
    env: { OAS_TEST_HOOK_SECRET: SECRET },
    observer: {
      onDelivery: (outcome) => {
        outcomes.push(outcome);
        metrics.deliveries.onDelivery(outcome);
      },
    },
    audit: openAuditLog(auditPath),
    warn: (line) => warnings.push(line),
    timeoutMs: TRY_MS,
  });
  made.start();
  return {
    dir,
    webhooks: made,
    outcomes,
    warnings,
    clock,
    storage,
    auditPath,
    metrics,
    setConfig: (next) => {
      config = next;
    },
    drained: () => outbox!.drained(),
    pending: () => outbox!.pending(),
    close: async () => {
      await made.close();
      await transport.close();
      await storage.close();
    },
  };
}

/** Polls `check` until it holds (10 s at most: a bound, not a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  assert.fail(`never: ${what}`);
}

/** The audit trail's lines. */
function auditLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('signing', () => {
  let receiver: WebhookReceiver;
  const transport = new HttpTransport();
  before(async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
  });
  after(async () => {
    await receiver.close();
    await transport.close();
  });

  test('a delivery carries webhook-id, webhook-timestamp and a v1 signature the library verifies; a tampered body does not verify', async () => {
    const body = JSON.stringify({ type: 'ping', timestamp: new Date().toISOString(), data: { message: 'hello' } });
    const result = await sendOnce(transport, { url: receiver.url, secret: SECRET }, { id: 'msg_signing_test', body });
    assert.equal(result.outcome, 'delivered', result.reason);
    assert.equal(result.status, 200);
    const [got] = receiver.received;
    assert.ok(got!.verified, got!.error);
    assert.equal(got!.headers['webhook-id'], 'msg_signing_test');
    assert.match(String(got!.headers['webhook-timestamp']), /^\d{10}$/);
    assert.match(String(got!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.equal(got!.body, body, 'the body signed is the body sent');

    const headers = signedHeaders('msg_tampered', body, SECRET, new Date());
    const tampered = body.replace('hello', 'hellO');
    assert.throws(() => new Webhook(SECRET).verify(tampered, headers), /No matching signature/);
    const res = await fetch(receiver.url, { method: 'POST', headers, body: tampered });
    assert.equal(res.status, 401);
    assert.equal(receiver.received.at(-1)!.verified, false);
    // Another team's secret does not verify either.
    assert.throws(() => new Webhook(newSecret()).verify(body, signedHeaders('msg_x', body, SECRET, new Date())));
  });
});

describe('delivery: retries and the SQLite file', () => {
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
  });
  after(() => receiver.close());

  test('refused, 500, timed out, then delivered: one webhook-id, growing waits, every try counted and audited', async () => {
    const h = await harness([endpoint(receiver.url)]);
    try {
      const before = receiver.received.length;
      receiver.failNext(1, 'refuse');
      receiver.failNext(1, 500);
      receiver.failNext(1, 'timeout');
      h.webhooks.emit(watchEvent());
      await h.drained();
      assert.deepEqual(h.outcomes.map((o) => [o.attempt, o.outcome, o.waitMs]), [[1, 'retry', 30_000], [2, 'retry', 60_000], [3, 'retry', 120_000], [4, 'delivered', undefined]]);
      assert.equal(h.outcomes[1]!.status, 500);
      assert.match(h.outcomes[0]!.reason, /127\.0\.0\.1/);
      assert.match(h.outcomes[2]!.reason, /timeout/);
      const tries = receiver.received.slice(before);
      assert.deepEqual(tries.map((r) => r.answered), ['refused', 500, 'timeout', 'ok']);
      assert.ok(tries.every((r) => r.verified), 'every try verifies (a fresh timestamp each)');
      assert.equal(new Set(tries.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every try');
      assert.deepEqual(JSON.parse(tries[3]!.body), JSON.parse(tries[0]!.body));
      assert.equal(await h.pending(), 0);

      const families = parseExposition(await h.metrics.registry.metrics());
      assert.equal(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'soc', outcome: 'retry' }), 3);
      assert.equal(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'soc', outcome: 'delivered' }), 1);

      const lines = auditLines(h.auditPath);
      assert.deepEqual(lines.map((l) => [l['action'], l['outcome'], l['webhook'], l['event'], l['attempt'], l['result']]), [
        ['webhook_delivery', 'failure', 'soc', 'watchlist.changed', 1, 'retry'],
        ['webhook_delivery', 'failure', 'soc', 'watchlist.changed', 2, 'retry'],
        ['webhook_delivery', 'failure', 'soc', 'watchlist.changed', 3, 'retry'],
        ['webhook_delivery', 'success', 'soc', 'watchlist.changed', 4, 'delivered'],
      ]);
      assert.deepEqual(Object.keys(lines[0]!).slice(0, 5), ['time', 'user', 'client', 'action', 'outcome']);
      assert.equal(lines[0]!['client'], 'oas');
      assert.equal(lines[1]!['status'], 500);
      assert.equal(lines[1]!['retry_in_ms'], 60_000);
      assert.equal(lines[0]!['delivery_id'], tries[0]!.headers['webhook-id']);
      const text = readFileSync(h.auditPath, 'utf8');
      for (const absent of [SECRET, '/hooks/oas', 'observable-marker-z9', 'watchlist-marker-q7']) assert.ok(!text.includes(absent), `no ${absent} in the audit trail`);
    } finally {
      await h.close();
    }
  });

  test('Retry-After sets the next wait (429 and 503, in seconds or as a date)', async () => {
    const h = await harness([endpoint(receiver.url)]);
    try {
      receiver.failNext(1, { status: 429, retryAfter: '120' });
      receiver.failNext(1, { status: 503, retryAfter: '7' });
      receiver.failNext(1, { status: 429, retryAfter: new Date(Date.now() + 3 * 3600_000).toUTCString() });
      h.webhooks.emit(watchEvent());
      await h.drained();
      assert.deepEqual(h.outcomes.map((o) => [o.outcome, o.status, o.waitMs]), [['retry', 429, 120_000], ['retry', 503, 7_000], ['retry', 429, 3_600_000], ['delivered', 200, undefined]]);
      const { sleeps } = h.clock as ReturnType<typeof virtualClock>;
      assert.ok(sleeps.includes(120_000) && sleeps.includes(7_000), `the waits slept: ${sleeps.join(', ')}`);
    } finally {
      await h.close();
    }
  });

  test('a 4xx other than 429 is final: one try, given up, said once in the log', async () => {
    const h = await harness([endpoint(receiver.url)]);
    try {
      const before = receiver.received.length;
      receiver.failNext(1, 404);
      h.webhooks.emit(watchEvent());
      await h.drained();
      assert.deepEqual(h.outcomes.map((o) => [o.attempt, o.outcome, o.status]), [[1, 'failed', 404]]);
      assert.equal(receiver.received.length - before, 1);
      assert.equal(h.warnings.length, 1);
      assert.match(h.warnings[0]!, /webhook soc: watchlist\.changed delivery msg_\w+ given up after 1 try: HTTP 404 Not Found/);
    } finally {
      await h.close();
    }
  });

  test('a receiver that keeps failing: 8 tries over about an hour, then given up', async () => {
    const h = await harness([endpoint(receiver.url)]);
    try {
      receiver.failNext(MAX_ATTEMPTS, 503);
      h.webhooks.emit(watchEvent());
      await h.drained();
      assert.equal(h.outcomes.length, MAX_ATTEMPTS);
      assert.deepEqual(h.outcomes.map((o) => o.outcome), [...Array(MAX_ATTEMPTS - 1).fill('retry'), 'failed']);
      const waits = h.outcomes.flatMap((o) => (o.waitMs === undefined ? [] : [o.waitMs]));
      assert.deepEqual(waits, [...RETRY_WAITS_MS]);
      const total = waits.reduce((a, b) => a + b, 0);
      assert.ok(total >= 50 * 60_000 && total <= 75 * 60_000, `about an hour: ${total / 60_000} min`);
      assert.equal(await h.pending(), 0);
      const families = parseExposition(await h.metrics.registry.metrics());
      assert.equal(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'soc', outcome: 'failed' }), 1);
    } finally {
      await h.close();
    }
  });

  test('kept in the SQLite file: a server stopped with a delivery pending delivers it at its next start', async () => {
    // A clock that never gets to the next try: the server stops before it.
    const stopped: Clock = { now: () => 0, sleep: () => new Promise(() => {}) };
    const first = await harness([endpoint(receiver.url)], undefined, stopped);
    const before = receiver.received.length;
    await receiver.down();
    let reopened: Harness | undefined;
    try {
      first.webhooks.emit(watchEvent(7));
      // The first try is refused (nothing listens): the delivery waits for its next.
      await until(() => first.outcomes.length > 0, 'the first try');
      assert.equal(first.outcomes[0]!.outcome, 'retry');
      const id = first.outcomes[0]!.delivery.id;
      await first.close();
      await receiver.up();
      reopened = await harness([endpoint(receiver.url)], first.dir);
      await reopened.drained();
      assert.deepEqual(reopened.outcomes.map((o) => [o.delivery.id, o.attempt, o.outcome]), [[id, 2, 'delivered']]);
      const delivered = receiver.received.slice(before);
      assert.equal(delivered.length, 1);
      assert.ok(delivered[0]!.verified);
      assert.equal(delivered[0]!.headers['webhook-id'], id);
      assert.equal((JSON.parse(delivered[0]!.body) as { data: { analysis_id: string } }).data.analysis_id, 'a-7');
    } finally {
      await reopened?.close();
    }
  });

  test('a webhook removed by a reload: its pending deliveries are given up, named', async () => {
    const h = await harness([endpoint(receiver.url)]);
    try {
      const before = receiver.received.length;
      h.webhooks.emit(watchEvent());
      // Queued while it was configured; tried after the reload removed it.
      h.setConfig({ ...defaultConfig({}), webhooks: [] });
      await h.drained();
      assert.deepEqual(h.outcomes.map((o) => o.outcome), ['failed']);
      assert.match(h.outcomes[0]!.reason, /webhook "soc" is no longer in the setting webhooks/);
      assert.equal(receiver.received.length, before, 'nothing sent');
    } finally {
      await h.close();
    }
  });

  test('only the endpoints that subscribe get an event; observable.verdict only at their min_verdict', async () => {
    const other = await startWebhookReceiver({ secret: SECRET });
    const h = await harness([
      endpoint(receiver.url, { name: 'watch-only', events: ['watchlist.changed'] }),
      endpoint(other.url, { name: 'malicious-only', events: ['observable.verdict'], min_verdict: 'malicious' }),
    ]);
    try {
      const before = receiver.received.length;
      const verdict = (v: string): OasEvent => ({ type: 'observable.verdict', timestamp: 'now', analysis: { id: 'a', tlp: 'GREEN' }, data: { analysis_id: 'a', link: '/results/a', observable: 'x.example', type: 'FQDN', verdict: v, reasons: [] } });
      h.webhooks.emit(verdict('suspicious'));
      h.webhooks.emit(verdict('malicious'));
      h.webhooks.emit(watchEvent());
      await h.drained();
      assert.deepEqual(receiver.received.slice(before).map((r) => (r.json as { type: string }).type), ['watchlist.changed']);
      assert.deepEqual(other.received.map((r) => (r.json as { data: { verdict: string } }).data.verdict), ['malicious']);
    } finally {
      await h.close();
      await other.close();
    }
  });
});

describe('an analysis through the API', () => {
  let upstreams: Upstreams;
  let soc: WebhookReceiver;
  let slack: WebhookReceiver;
  let restricted: WebhookReceiver;
  let callback: WebhookReceiver;
  let app: App;
  let server: RunningServer;
  let metrics: ReturnType<typeof createMetrics>;
  let auditPath: string;
  const env = { OAS_TEST_HOOK_SECRET: SECRET, OAS_TEST_RESTRICTED_SECRET: SECRET, OAS_TEST_CALLBACK_SECRET: CALLBACK_SECRET };

  before(async () => {
    upstreams = await startUpstreams();
    // ipquery.io flags addresses ending in .3 as a VPN: `suspicious`; the others judge nothing.
    upstreams.intel.route('GET /ipquery/*', (req) => {
      const ip = req.path.slice('/ipquery/'.length);
      return { json: { ip, isp: { asn: 'AS64500', org: 'Example', isp: 'Example' }, location: { country: 'Iceland', country_code: 'IS' }, risk: { is_mobile: false, is_vpn: ip.endsWith('.3'), is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 } } };
    });
    [soc, slack, restricted, callback] = await Promise.all([
      startWebhookReceiver({ secret: SECRET }),
      startWebhookReceiver({ verify: false, answer: 'ok' }),
      startWebhookReceiver({ secret: SECRET }),
      startWebhookReceiver({ secret: CALLBACK_SECRET }),
    ]);
    const files = configFor(upstreams, {
      api_token: API_TOKEN,
      public_url: 'https://oas.example.org/',
      webhooks: [
        endpoint(soc.url),
        { name: 'soc-slack', url: slack.url, events: ['analysis.completed'], format: 'slack' },
        endpoint(restricted.url, { name: 'partner', secret_env: 'OAS_TEST_RESTRICTED_SECRET', max_tlp: 'GREEN' }),
      ],
      callback_hosts: [`127.0.0.1:${callback.port}`],
      callback_secret_env: 'OAS_TEST_CALLBACK_SECRET',
      engines: { provider_24: { api_key: VT_KEY } },
    });
    auditPath = join(files.dir, 'audit.log');
    const written = JSON.parse(readFileSync(files.file, 'utf8')) as Record<string, unknown>;
    writeFileSync(files.file, JSON.stringify({ ...written, audit_log: auditPath }));
    metrics = createMetrics();
    app = await createApp({ file: files.file, flags: { port: 0 }, env }, { role: 'server', observers: metrics });
    checkWebhookSecrets(app.config, env);
    attachWebhooks(app, { env, observer: metrics.deliveries, secrets: () => secretValues(app.config, app.catalog), timeoutMs: 5_000 }).start();
    server = await listen(app, { metrics });
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await Promise.all([soc, slack, restricted, callback].map((r) => r?.close()));
    await upstreams?.close();
  });

  const analyze = async (body: Record<string, unknown>) => fetch(`${server.url}/api/analyze`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  test('each endpoint gets what it subscribes to, signed, within its max_tlp, with absolute links and no secret', async () => {
    const res = await analyze({ text: '8.8.8.8 and 9.9.9.9 then 149.112.112.3', engines: ['provider_13'] });
    assert.equal(res.status, 200, await res.clone().text());
    const { analysis_id: id } = (await res.json()) as { analysis_id: string };
    const mine = (r: WebhookReceiver) => r.received.filter((x) => x.body.includes(id));
    await soc.until(() => mine(soc).length >= 2);
    await slack.until(() => mine(slack).length >= 1);
    await restricted.until(() => mine(restricted).length >= 2);

    const socBodies = mine(soc).map((r) => r.json as { type: string; timestamp: string; data: Record<string, unknown> });
    assert.ok(mine(soc).every((r) => r.verified));
    assert.deepEqual(socBodies.map((b) => b.type).sort(), ['analysis.completed', 'observable.verdict']);
    const completed = socBodies.find((b) => b.type === 'analysis.completed')!;
    assert.equal(completed.data['link'], `https://oas.example.org/results/${id}`);
    assert.deepEqual(completed.data['verdicts'], { malicious: 0, suspicious: 1, clean: 0, unknown: 2 });
    assert.equal(completed.data['worst_verdict'], 'suspicious');
    assert.equal(completed.data['started_by'], 'api_token');
    assert.equal(completed.data['observables'], 3);
    assert.equal(completed.data['tlp'], 'AMBER');
    const verdict = socBodies.find((b) => b.type === 'observable.verdict')!;
    assert.equal(verdict.data['observable'], '149.112.112.3');
    assert.equal(verdict.data['verdict'], 'suspicious');
    assert.match(String((verdict.data['reasons'] as string[])[0]), /VPN/);

    const slackBody = mine(slack)[0]!.json as { text: string; blocks: { type: string }[] };
    assert.ok(Array.isArray(slackBody.blocks) && slackBody.blocks[0]!.type === 'header');
    assert.match(slackBody.text, /analysis completed/);

    // TLP:AMBER above the partner's max_tlp GREEN: the id and link only, and one observable.verdict.
    const partner = mine(restricted).map((r) => r.json as { type: string; data: Record<string, unknown> });
    assert.ok(mine(restricted).every((r) => r.verified));
    for (const body of partner) assert.deepEqual(body.data, { analysis_id: id, link: `https://oas.example.org/results/${id}` });
    assert.deepEqual(partner.map((b) => b.type).sort(), ['analysis.completed', 'observable.verdict']);

    for (const received of [...soc.received, ...slack.received, ...restricted.received]) {
      for (const secret of [API_TOKEN, VT_KEY, SECRET, CALLBACK_SECRET]) assert.ok(!received.body.includes(secret), 'no secret in a body');
    }
  });

  test('the metric counts each delivery by webhook and outcome; each writes an audit line without URL or secret', async () => {
    await restricted.until(() => restricted.delivered().length >= 2);
    // Counted once the receiver's answer is read (just after it got the request).
    await until(async () => valueOf(parseExposition(await metrics.registry.metrics()), 'oas_webhook_deliveries_total', { webhook: 'partner', outcome: 'delivered' }) >= 2, 'the partner\'s deliveries counted');
    const families = parseExposition(await metrics.registry.metrics());
    assert.ok(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'soc', outcome: 'delivered' }) >= 2);
    assert.ok(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'soc-slack', outcome: 'delivered' }) >= 1);
    assert.ok(valueOf(families, 'oas_webhook_deliveries_total', { webhook: 'partner', outcome: 'delivered' }) >= 2);
    const lines = auditLines(auditPath).filter((l) => l['action'] === 'webhook_delivery');
    assert.ok(lines.some((l) => l['webhook'] === 'soc-slack' && l['result'] === 'delivered' && l['status'] === 200));
    const text = readFileSync(auditPath, 'utf8');
    for (const absent of [SECRET, API_TOKEN, '/hooks/oas', '149.112.112.3']) assert.ok(!text.includes(absent), `no ${absent} in the audit trail`);
  });

  test('callback_url (API and service): refused off callback_hosts (400 naming the setting); on it, analysis.completed signed with callback_secret_env\'s secret', async () => {
    for (const url of ['http://evil.example/hook', `http://127.0.0.1:${soc.port}/hooks/oas`, 'ftp://127.0.0.1/x', `http://user:pw@127.0.0.1:${callback.port}/x`]) {
      await assert.rejects(app.analyses.start({ text: '8.8.8.8', engines: ['provider_13'], callback_url: url }), (error: Error) => error instanceof InputError && /callback_url/.test(error.message), url);
    }
    await assert.rejects(app.analyses.start({ text: '8.8.8.8', engines: ['provider_13'], callback_url: 'http://evil.example/hook' }), /not one of the setting callback_hosts/);
    // Through the API: off the list, 400 naming the setting; on it, accepted.
    const refused = await analyze({ text: '8.8.8.8', engines: ['provider_13'], callback_url: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: '"callback_url": its host 169.254.169.254 is not one of the setting callback_hosts' });
    const wrongType = await analyze({ text: '8.8.8.8', engines: ['provider_13'], callback_url: 42 });
    assert.equal(wrongType.status, 400);
    const accepted = await analyze({ text: '8.8.8.8', engines: ['provider_13'], callback_url: `${callback.url}?job=42` });
    assert.equal(accepted.status, 200, await accepted.clone().text());
    const started = (await app.analyses.get(((await accepted.json()) as { analysis_id: string }).analysis_id))!;
    assert.equal(started.callback_url, `${callback.url}?job=42`);
    await callback.until((all) => all.some((r) => r.body.includes(started.id)));
    const got = callback.received.find((r) => r.body.includes(started.id))!;
    assert.ok(got.verified, got.error);
    assert.equal(got.path, '/hooks/oas?job=42');
    const body = got.json as { type: string; data: Record<string, unknown> };
    assert.equal(body.type, 'analysis.completed');
    assert.equal(body.data['analysis_id'], started.id);
    assert.equal(body.data['observables'], 1);
    // Counted once the receiver's answer is read (just after it got the request).
    await until(async () => valueOf(parseExposition(await metrics.registry.metrics()), 'oas_webhook_deliveries_total', { webhook: CALLBACK, outcome: 'delivered' }) >= 1, 'the callback counted');
  });
});

describe('oas serve', () => {
  let upstreams: Upstreams;
  let receiver: WebhookReceiver;
  before(async () => {
    upstreams = await startUpstreams();
    receiver = await startWebhookReceiver({ secret: SECRET });
  });
  after(async () => {
    await receiver?.close();
    await upstreams?.close();
  });

  test('a delivery pending when oas serve stops is delivered when it starts again', async () => {
    const files = configFor(upstreams, { webhooks: [endpoint(receiver.url)] });
    const auditPath = join(files.dir, 'audit.log');
    writeFileSync(files.file, JSON.stringify({ ...(JSON.parse(readFileSync(files.file, 'utf8')) as object), audit_log: auditPath }));
    await receiver.down();
    const first = await spawnServe(files.file, { env: { OAS_TEST_HOOK_SECRET: SECRET } });
    let second: ServeProcess | undefined;
    try {
      const id = await startAnalysis(first.url, '8.8.8.8', ['provider_13']);
      // Its first try is refused (nothing listens): the audit trail says it waits for another.
      await until(() => existsSync(auditPath) && auditLines(auditPath).some((l) => l['action'] === 'webhook_delivery' && l['analysis_id'] === id && l['result'] === 'retry'), 'the first try refused');
      await first.stop();
      await receiver.up();
      second = await spawnServe(files.file, { env: { OAS_TEST_HOOK_SECRET: SECRET } });
      await receiver.until((all) => all.some((r) => r.body.includes(id)));
      const got = receiver.received.filter((r) => r.body.includes(id));
      assert.equal(got.length, 1);
      assert.ok(got[0]!.verified, got[0]!.error);
      assert.equal((got[0]!.json as { type: string }).type, 'analysis.completed');
      await until(() => auditLines(auditPath).some((l) => l['analysis_id'] === id && l['result'] === 'delivered' && l['attempt'] === 2), 'the second try audited');
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

describe('callback_url through MCP', () => {
  let upstreams: Upstreams;
  let receiver: WebhookReceiver;
  let app: App;
  let server: RunningServer;
  const env = { OAS_TEST_CALLBACK_SECRET: CALLBACK_SECRET };
  before(async () => {
    upstreams = await startUpstreams();
    receiver = await startWebhookReceiver({ secret: CALLBACK_SECRET });
    const { file } = configFor(upstreams, { callback_hosts: [`127.0.0.1:${receiver.port}`], callback_secret_env: 'OAS_TEST_CALLBACK_SECRET' });
    app = await createApp({ file, flags: { port: 0 }, env }, { role: 'server' });
    attachWebhooks(app, { env, timeoutMs: 5_000 }).start();
    server = await listen(app);
  });
  after(async () => {
    await server?.close();
    await app?.close();
    await receiver?.close();
    await upstreams?.close();
  });

  test('the analyze tool takes callback_url: refused off callback_hosts as a tool error; on it, delivered signed', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'webhooks-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const refused = (await client.callTool({ name: 'analyze', arguments: { text: '8.8.8.8', engines: ['provider_13'], callback_url: 'http://evil.example/x', wait_seconds: 0 } })) as { isError?: boolean; content: { type: string; text?: string }[] };
      assert.equal(refused.isError, true);
      assert.match(refused.content.map((c) => c.text ?? '').join(''), /"callback_url": its host evil\.example is not one of the setting callback_hosts/);
      const accepted = (await client.callTool({ name: 'analyze', arguments: { text: '8.8.8.8', engines: ['provider_13'], callback_url: `${receiver.url}?via=mcp`, wait_seconds: 10 } })) as { isError?: boolean; structuredContent?: { analysis_id: string } };
      assert.ok(!accepted.isError, JSON.stringify(accepted));
      const id = accepted.structuredContent!.analysis_id;
      await receiver.until((all) => all.some((r) => r.body.includes(id)));
      const got = receiver.received.find((r) => r.body.includes(id))!;
      assert.ok(got.verified, got.error);
      assert.equal(got.path, '/hooks/oas?via=mcp');
      assert.equal((got.json as { type: string }).type, 'analysis.completed');
    } finally {
      await client.close();
    }
  });
});

describe('settings', () => {
  const messageOf = (settings: Record<string, unknown>, env: Record<string, string> = {}): string | undefined => {
    const dir = tempDir('oas-webhook-settings-');
    const file = join(dir, 'oas.config.json');
    writeFileSync(file, JSON.stringify(settings));
    try {
      const { config } = loadConfig({ file, env });
      checkWebhookSecrets(config, env);
      return undefined;
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
  };
  const soc = { name: 'soc', url: 'https://soar.example.org/hooks/oas', events: ['analysis.completed'], secret_env: 'OAS_SOC_SECRET' };

  test('the defaults: format standard, min_verdict suspicious, max_tlp AMBER; public_url, callback_hosts, callback_secret_env', () => {
    const { config } = loadConfig({ env: { OAS_WEBHOOKS: JSON.stringify([soc]), OAS_CALLBACK_HOSTS: 'soar.example.org, 10.0.0.5:8443' }, cwd: tempDir('oas-webhook-defaults-') });
    assert.deepEqual(config.webhooks, [{ ...soc, format: 'standard', min_verdict: 'suspicious', max_tlp: 'AMBER' }]);
    assert.deepEqual(config.callback_hosts, ['soar.example.org', '10.0.0.5:8443']);
    assert.equal(config.public_url, '');
    assert.equal(config.callback_secret_env, '');
    assert.deepEqual(defaultConfig({}).webhooks, []);
  });

  test('mistakes name the exact path, never a URL', () => {
    const cases: [unknown, RegExp][] = [
      [[soc, { ...soc, url: 'https://hooks.slack.com/services/T0/B0/secretpart' }], /invalid "webhooks": each webhook needs a name of its own: "soc" is used twice/],
      [[soc, { ...soc, name: 'b', url: 'ftp://hooks.slack.com/services/T0/B0/secretpart' }], /invalid "webhooks\.1\.url": expected an http:\/\/ or https:\/\/ URL$/],
      [[{ ...soc, events: ['analysis.done'] }], /invalid "webhooks\.0\.events\.0": expected an event: analysis\.completed, observable\.verdict, watchlist\.changed/],
      [[{ ...soc, events: [] }], /invalid "webhooks\.0\.events": expected at least one event/],
      [[{ ...soc, format: 'discord' }], /invalid "webhooks\.0\.format": expected a format: standard, slack, teams/],
      [[{ ...soc, min_verdict: 'bad' }], /invalid "webhooks\.0\.min_verdict": expected a verdict: unknown, clean, suspicious, malicious/],
      [[{ ...soc, max_tlp: 'PURPLE' }], /invalid "webhooks\.0\.max_tlp": expected a TLP level/],
      [[{ ...soc, secret: 'whsec_abc' }], /invalid "webhooks\.0\.secret": expected a webhook: \{ "name", "url", "events", "secret_env", "format", "min_verdict", "max_tlp" \}/],
      [[{ ...soc, secret_env: 'not a name' }], /invalid "webhooks\.0\.secret_env": expected the name of an environment variable/],
      [{ soc }, /invalid "webhooks": expected a list of webhooks/],
    ];
    for (const [webhooks, expected] of cases) {
      const message = messageOf({ webhooks });
      assert.match(message ?? '', expected, JSON.stringify(webhooks));
      assert.ok(!message!.includes('secretpart'), 'a webhook URL is never shown');
    }
    assert.match(messageOf({ public_url: 'oas.example.org' })!, /invalid "public_url": expected the server's address/);
    assert.match(messageOf({ callback_hosts: ['https://soar.example.org/'] })!, /invalid "callback_hosts\.0": expected a host name/);
    assert.match(messageOf({ callback_secret_env: '1X' })!, /invalid "callback_secret_env": expected the name of an environment variable/);
  });

  test('a signing secret that is missing or malformed stops the start, naming the webhook and the variable, never the value', () => {
    assert.match(messageOf({ webhooks: [soc] })!, /invalid "webhooks\.0\.secret_env": the environment variable OAS_SOC_SECRET \(webhook "soc"\) is not set; put the webhook's whsec_\.\.\. secret there/);
    const bad = messageOf({ webhooks: [soc] }, { OAS_SOC_SECRET: 'not-a-whsec-value-Qz9' })!;
    assert.match(bad, /OAS_SOC_SECRET \(webhook "soc"\) does not hold a whsec_\.\.\. secret/);
    assert.ok(!bad.includes('Qz9'));
    const broken = messageOf({ webhooks: [soc] }, { OAS_SOC_SECRET: 'whsec_!!!!-Kp2' })!;
    assert.match(broken, /does not hold a valid whsec_\.\.\. secret/);
    assert.ok(!broken.includes('Kp2'));
    assert.match(messageOf({ webhooks: [{ ...soc, secret_env: undefined }] })!, /invalid "webhooks\.0\.secret_env": webhook "soc" is signed \(format standard\): name the environment variable/);
    assert.equal(messageOf({ webhooks: [{ ...soc, secret_env: undefined, format: 'slack' }] }), undefined, 'a Slack URL is its own secret');
    assert.equal(messageOf({ webhooks: [soc] }, { OAS_SOC_SECRET: SECRET }), undefined);
    assert.match(messageOf({ callback_hosts: ['soar.example.org'] })!, /invalid "callback_secret_env": callback_hosts is set/);
    assert.match(messageOf({ callback_hosts: ['soar.example.org'], callback_secret_env: 'OAS_CB' })!, /invalid "callback_secret_env": the environment variable OAS_CB is not set/);
  });

  test('oas serve refuses to start with a webhook it cannot sign for (exit 2, one line)', async () => {
    const dir = tempDir('oas-webhook-serve-');
    const file = join(dir, 'oas.config.json');
    writeFileSync(file, JSON.stringify({ data_dir: join(dir, 'data'), webhooks: [soc] }));
    const run = await runOas(dir, ['serve', '--port', '0', '--config', file], { env: { OAS_SOC_SECRET: 'whsec_' } });
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /^oas: .*invalid "webhooks\.0\.secret_env": the environment variable OAS_SOC_SECRET \(webhook "soc"\)/);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    noStack(run.stderr);
  });
});

describe('oas webhooks test', () => {
  let receiver: WebhookReceiver;
  let hostile: WebhookReceiver;
  let slackReceiver: WebhookReceiver;
  let dir: string;
  let file: string;
  before(async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
    hostile = await startWebhookReceiver({ secret: SECRET, answer: 'fine\u001b]0;pwned\u0007\u001b[2J' });
    slackReceiver = await startWebhookReceiver({ verify: false, answer: 'ok' });
    dir = tempDir('oas-webhooks-cli-');
    file = join(dir, 'oas.config.json');
    writeFileSync(file, JSON.stringify({
      data_dir: join(dir, 'data'),
      webhooks: [endpoint(receiver.url), endpoint(hostile.url, { name: 'odd' }), { name: 'chat', url: `${slackReceiver.url}/T000/B000/XXXXsecretpath`, events: ['analysis.completed'], format: 'slack' }],
    }));
  });
  after(async () => {
    await receiver.close();
    await hostile.close();
    await slackReceiver.close();
  });
  const oas = (args: string[], env: Record<string, string> = { OAS_TEST_HOOK_SECRET: SECRET }) => runOas(dir, ['webhooks', 'test', ...args, '--config', file], { env });

  test('a named webhook gets a signed ping; its status and answer are printed; exit 0', async () => {
    const run = await oas(['soc']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `webhook "soc" at 127.0.0.1:${receiver.port}: HTTP 200 OK\n{"ok":true}\n`);
    const ping = receiver.received.at(-1)!;
    assert.ok(ping.verified, ping.error);
    assert.equal((ping.json as { type: string }).type, 'ping');
  });

  test('a receiver that fails: exit 1 with its status; an unknown name: exit 2 naming the webhooks', async () => {
    receiver.failNext(1, 500);
    const failed = await oas(['soc']);
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /HTTP 500 Internal Server Error/);
    const unknown = await oas(['nope']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'oas: unknown webhook "nope": the setting webhooks names soc, odd, chat (or give a URL)\n');
    const unsigned = await oas(['soc'], {});
    assert.equal(unsigned.code, 2);
    assert.match(unsigned.stderr, /OAS_TEST_HOOK_SECRET \(webhook "soc"\) is not set/);
  });

  test('a Slack webhook gets a Block Kit ping; its URL is never printed', async () => {
    const run = await oas(['chat']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `webhook "chat" at 127.0.0.1:${slackReceiver.port}: HTTP 200 OK\nok\n`);
    const ping = slackReceiver.received.at(-1)!;
    assert.equal(ping.path, '/hooks/oas/T000/B000/XXXXsecretpath');
    assert.ok(Array.isArray((ping.json as { blocks: unknown[] }).blocks));
  });

  test('a URL, signed with --secret-env; the answer is printed inert', async () => {
    const run = await oas([hostile.url, '--secret-env', 'OAS_TEST_HOOK_SECRET']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `127.0.0.1:${hostile.port}: HTTP 200 OK\nfine\\x1b]0;pwned\\x07\\x1b[2J\n`);
    assert.ok(hostile.received.at(-1)!.verified);
    const noSecret = await oas([hostile.url], {});
    assert.equal(noSecret.code, 2);
    assert.match(noSecret.stderr, /--secret-env/);
  });
});
