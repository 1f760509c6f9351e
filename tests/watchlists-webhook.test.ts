/**
 * A watchlist's change reaches the team's automation (issue 36): `oas serve` with a webhook
 * subscribed to `watchlist.changed` (setting `webhooks`, `public_url`), a watchlist added over the
 * API, PhishTank's answer changed, a run: one signed delivery, verified with the Standard Webhooks
 * library, naming the watchlist, the run's analysis (an absolute link), the observable and the
 * change; the baseline delivered nothing. Loopback only; no timing assertion.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Watchlist, WatchlistChange } from '../src/automation/watchlist.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { phishTank } from './helpers/watchlists.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('watchlist.changed through oas serve\'s webhooks', { timeout: 60_000 }, () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let receiver: Server;
  const received: { headers: Record<string, string>; body: string }[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    upstreams = await startUpstreams();
    phishTank(upstreams.intel, false);
    const { file } = configFor(upstreams, {
      public_url: 'https://oas.example.org',
      webhooks: [{ name: 'soc', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/oas`, events: ['watchlist.changed'], secret_env: 'OAS_TEST_WEBHOOK_SECRET' }],
    });
    server = await spawnServe(file, { env: { OAS_TEST_WEBHOOK_SECRET: SECRET } });
  });
  after(async () => {
    await server?.stop();
    await upstreams?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/${path}`, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
    return await res.json() as Record<string, unknown>;
  };
  const settled = async (runs: number): Promise<Watchlist> => {
    for (let i = 0; i < 400; i++) {
      const watchlist = await api('GET', 'watchlists/soc-phish') as unknown as Watchlist;
      if (watchlist.runs.length === runs && watchlist.runs.every((r) => r.status === 'done')) return watchlist;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${runs} runs never done`);
  };

  test('one signed delivery for the run that changed, none for the baseline', async () => {
    await api('POST', 'watchlists', { name: 'soc-phish', text: 'hxxps://login.evil-bank[.]example/verify', engines: ['provider_17'], every: '6h' });
    await settled(1);
    phishTank(upstreams.intel, true);
    const started = await api('POST', 'watchlists/soc-phish/run');
    const watchlist = await settled(2);
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(received.length, 1, 'one delivery: the baseline fired nothing');
    const [delivery] = received;
    const event = new Webhook(SECRET).verify(delivery!.body, delivery!.headers) as { type: string; data: Record<string, unknown> };
    assert.equal(event.type, 'watchlist.changed');
    assert.equal(event.data.watchlist, 'soc-phish');
    assert.equal(event.data.analysis_id, started.analysis_id);
    assert.equal(event.data.link, `https://oas.example.org/results/${started.analysis_id}`);
    assert.equal(event.data.previous_analysis_id, watchlist.runs[1]!.analysis_id);
    assert.deepEqual((event.data.changes as WatchlistChange[]).find((c) => c.kind === 'verdict'), { observable: 'https://login.evil-bank.example/verify', type: 'URL', kind: 'verdict', before: 'clean', after: 'malicious' });
    assert.deepEqual(event.data.changes, watchlist.runs[0]!.changes);
  });
});
