import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { phishTankDetails, phishTankLookup, urlToCheck, type PhishTankResult } from '../../engines/phishtank.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeRoute } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

const META = { timestamp: '2026-01-10T10:00:00+00:00', serverid: 'abc123', status: 'success', requestid: '10.0.0.1.6961d5c5a1b2c3.44556677' };

/** A verified, valid phish (engines.md 5.20). */
const PHISH = {
  url: 'http://phish.example/login',
  in_database: true,
  phish_id: '8123456',
  phish_detail_page: 'http://www.phishtank.com/phish_detail.php?phish_id=8123456',
  verified: true,
  verified_at: '2026-01-09T20:00:00+00:00',
  valid: true,
};

/** Submitted, not verified yet (the API sends no verified_at then). */
const PENDING = {
  url: 'http://pending.example/',
  in_database: true,
  phish_id: 8123999,
  phish_detail_page: 'http://www.phishtank.com/phish_detail.php?phish_id=8123999',
  verified: false,
  verified_at: null,
  valid: false,
};

/** The URL the fake received (base64 in the `url` form field, as PhishTank expects). */
function checked(req: FakeRequest): string {
  const form = new URLSearchParams(req.body);
  return Buffer.from(form.get('url') ?? '', 'base64').toString('utf8');
}

/** PhishTank: known URLs as above, anything else "not in database" with the URL echoed. */
const phishtank: FakeRoute = (req) => {
  const url = checked(req);
  if (url === PHISH.url) return reply.json({ meta: META, results: PHISH });
  if (url === PENDING.url) return reply.json({ meta: META, results: PENDING });
  return reply.json({ meta: META, results: { url, in_database: false } });
};

const closers: (() => Promise<void>)[] = [];

async function setup(route: FakeRoute, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ 'POST /checkurl/': route });
  const harness = engineHarness(engine, { settings: { base_url: `${fake.url}/checkurl/`, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}


after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_17 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_17');
    assert.equal(engine.service, 'phishtank');
    assert.deepEqual(engine.tags, ['risk', 'domain', 'URL', 'free_no_key']);
    assert.deepEqual(engine.types, ['FQDN', 'URL']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, []);
    assert.equal(engine.defaults.base_url, 'https://checkurl.phishtank.com/checkurl/');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, phishTankLookup);
  });

  test('summary', () => {
    assert.equal(engine.summary(PHISH), 'in database, verified phish');
    assert.equal(engine.summary(PENDING), 'in database, not verified yet');
    assert.equal(engine.summary({ ...PHISH, valid: false }), 'in database, verified, not a phish');
    assert.equal(engine.summary({ ...PHISH, verified: 'y', valid: 'y' }), 'in database, verified phish');
    assert.equal(engine.summary({ url: 'http://example.com/', in_database: false }), 'not in database');
  });

  test('details: verdict, URL checked, phish ID and verification time, the phish page on PhishTank (https)', () => {
    assert.deepEqual(engine.details!(PHISH, 'http://phish.example/login'), [
      { label: 'Verdict', value: 'verified phish' },
      { label: 'URL checked', value: 'http://phish.example/login' },
      { label: 'Phish ID', value: '8123456' },
      { label: 'Verified at', value: '2026-01-09T20:00:00+00:00' },
      {
        label: 'Open in PhishTank',
        value: 'https://www.phishtank.com/phish_detail.php?phish_id=8123456',
        href: 'https://www.phishtank.com/phish_detail.php?phish_id=8123456',
      },
    ]);
    assert.deepEqual(phishTankDetails(PENDING).map((f) => [f.label, f.value]), [
      ['Verdict', 'not verified yet'],
      ['URL checked', 'http://pending.example/'],
      ['Phish ID', '8123999'],
      ['Open in PhishTank', 'https://www.phishtank.com/phish_detail.php?phish_id=8123999'],
    ]);
    assert.deepEqual(phishTankDetails({ url: 'http://example.com/', in_database: false }), [
      { label: 'Verdict', value: 'not in database' },
      { label: 'URL checked', value: 'http://example.com/' },
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to phishTankDetails's type).
    assert.equal(engine.details, phishTankDetails);
  });

  test('URL to check: as written, "/" for an empty path, http://<domain>/ for a domain', () => {
    const cases: [string, 'FQDN' | 'URL', string | null][] = [
      ['phish.example', 'FQDN', 'http://phish.example/'],
      ['Phish.Example.', 'FQDN', 'http://phish.example/'],
      ['http://phish.example/login', 'URL', 'http://phish.example/login'],
      ['http://example.com', 'URL', 'http://example.com/'],
      // The reference appended "/" at the very end (after the query); it belongs before it.
      ['http://example.com?next=a', 'URL', 'http://example.com/?next=a'],
      ['https://example.com#top', 'URL', 'https://example.com/#top'],
      ['http://user:p@ss@example.com:8080', 'URL', 'http://user:p@ss@example.com:8080/'],
      ['http://[2001:db8::1]:8080', 'URL', 'http://[2001:db8::1]:8080/'],
      ['HTTP://Example.com/Path?Q=1', 'URL', 'HTTP://Example.com/Path?Q=1'],
      ['http://exa mple.com/', 'URL', null],
    ];
    for (const [value, type, expected] of cases) assert.equal(urlToCheck({ value, type }), expected, value);
  });
});

describe('provider_17 against a loopback PhishTank', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup(phishtank));
  });

  test('known phish: the results object verbatim, field by field', async () => {
    fake.reset();
    const result = await harness.run('http://phish.example/login', 'URL') as PhishTankResult;
    assert.equal(result.url, 'http://phish.example/login');
    assert.equal(result.in_database, true);
    assert.equal(result.phish_id, '8123456');
    assert.equal(result.phish_detail_page, 'http://www.phishtank.com/phish_detail.php?phish_id=8123456');
    assert.equal(result.verified, true);
    assert.equal(result.verified_at, '2026-01-09T20:00:00+00:00');
    assert.equal(result.valid, true);
    assert.deepEqual(result, PHISH);
    assert.equal(engine.summary(result), 'in database, verified phish');
  });

  test('the request: POST form url=<base64>, format=json, phishtank user agent', async () => {
    fake.reset();
    await harness.run('http://phish.example/login', 'URL');
    const [req] = fake.requests;
    assert.equal(req!.method, 'POST');
    assert.equal(req!.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(req!.headers['user-agent'], 'phishtank/oas');
    const form = new URLSearchParams(req!.body);
    assert.deepEqual([...form.keys()].sort(), ['format', 'url']);
    assert.equal(form.get('format'), 'json');
    assert.equal(form.get('url'), 'aHR0cDovL3BoaXNoLmV4YW1wbGUvbG9naW4=');
  });

  test('user_agent setting', async () => {
    const { fake: other, harness: custom } = await setup(phishtank, { user_agent: 'phishtank/soc-team' });
    await custom.run('phish.example', 'FQDN');
    assert.equal(other.requests[0]!.headers['user-agent'], 'phishtank/soc-team');
  });

  test('non-ASCII URLs are base64 of their UTF-8 bytes', async () => {
    fake.reset();
    await harness.run('http://例え.example/ログイン', 'URL');
    assert.equal(checked(fake.requests[0]!), 'http://例え.example/ログイン');
  });

  test('domain: checked as http://<domain>/', async () => {
    fake.reset();
    const result = await harness.run('pending.example', 'FQDN') as PhishTankResult;
    assert.equal(checked(fake.requests[0]!), 'http://pending.example/');
    assert.deepEqual(result, PENDING);
    assert.equal(engine.summary(result), 'in database, not verified yet');
  });

  test('not in database: the results object as PhishTank gives it', async () => {
    const result = await harness.run('http://example.com', 'URL') as PhishTankResult;
    assert.deepEqual(result, { url: 'http://example.com/', in_database: false });
    assert.equal(engine.summary(result), 'not in database');
  });

  test('unparsable URL: null, no request', async () => {
    fake.reset();
    assert.equal(await harness.run('http://exa mple.com/', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_17: minimal and degenerate answers', () => {
  /** A harness whose PhishTank answers `results` (and nothing else) for any URL. */
  async function answering(body: unknown): Promise<EngineHarness> {
    return (await setup(reply.json(body))).harness;
  }

  test('minimal answer: results with in_database only, no url, no meta: kept as sent', async () => {
    const result = await (await answering({ results: { in_database: false } })).run('http://example.com/', 'URL') as PhishTankResult;
    assert.deepEqual(result, { in_database: false });
    assert.equal(engine.summary(result), 'not in database');
    assert.deepEqual(phishTankDetails(result), [{ label: 'Verdict', value: 'not in database' }]);
  });

  test('flags as 0/1, "y"/"n", "" and null: kept as sent, read as false/true', async () => {
    for (const [in_database, summary] of [[0, 'not in database'], ['', 'not in database'], ['n', 'not in database'], ['false', 'not in database'], [1, 'in database, not verified yet']] as const) {
      const result = await (await answering({ meta: null, results: { url: 'http://x.example/', in_database, verified: null } })).run('http://x.example/', 'URL') as PhishTankResult;
      assert.deepEqual(result, { url: 'http://x.example/', in_database, verified: null }, String(in_database));
      assert.equal(engine.summary(result), summary, String(in_database));
    }
    const known = await (await answering({ results: { url: 'http://x.example/', in_database: 'y', phish_id: 7, verified: 1, valid: '' } })).run('http://x.example/', 'URL') as PhishTankResult;
    assert.deepEqual(known, { url: 'http://x.example/', in_database: 'y', phish_id: 7, verified: 1, valid: '' });
    assert.equal(engine.summary(known), 'in database, verified, not a phish');
  });

  test('issue 32: results without in_database (or with it null): the results verbatim, as the reference; no verdict', async () => {
    for (const results of [{ url: 'http://x.example/' }, { url: 'http://x.example/', in_database: null }, {}]) {
      const result = await (await answering({ results })).run('http://x.example/', 'URL') as PhishTankResult;
      assert.deepEqual(result, results, JSON.stringify(results));
      assert.equal(engine.summary(result), 'no database status given', JSON.stringify(results));
      assert.equal(engine.evidence!(result), undefined, JSON.stringify(results));
      assert.deepEqual(phishTankDetails(result), [
        { label: 'Verdict', value: 'no database status given' },
        ...('url' in results ? [{ label: 'URL checked', value: 'http://x.example/' }] : []),
      ], JSON.stringify(results));
    }
    // What else it gives is still shown, never judged.
    const page = 'https://www.phishtank.com/phish_detail.php?phish_id=7';
    const partial = await (await answering({ results: { url: 'http://x.example/', phish_id: 7, verified: true, valid: true, phish_detail_page: page } }))
      .run('http://x.example/', 'URL') as PhishTankResult;
    assert.equal(engine.summary(partial), 'no database status given');
    assert.equal(engine.evidence!(partial), undefined);
    assert.deepEqual(phishTankDetails(partial), [
      { label: 'Verdict', value: 'no database status given' },
      { label: 'URL checked', value: 'http://x.example/' },
      { label: 'Phish ID', value: '7' },
      { label: 'Open in PhishTank', value: page, href: page },
    ]);
  });

  test('null results, or an answer that is no object: an error naming what is missing', async () => {
    await rejectsWith((await answering({ results: null, errortext: null })).run('http://x.example/', 'URL'),
      /^unexpected answer from upstream: no results$/);
    await rejectsWith((await answering([{ results: PHISH }])).run('http://x.example/', 'URL'),
      /^unexpected answer from upstream at \(root\): expected a JSON object$/);
  });
});

describe('provider_17 upstream failures', () => {
  test('HTTP 500: an error, not an empty result', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(sequence(reply.tooMany(1), phishtank));
    assert.deepEqual(await harness.run('http://phish.example/login', 'URL'), PHISH);
    assert.equal(fake.requests.length, 2);
  });

  test('PhishTank\'s throttling status 509 is an error when retries run out', async () => {
    const { harness } = await setup({ status: 509, body: 'Bandwidth Limit Exceeded' }, { retries: 0 });
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), /^HTTP 509/);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), /malformed JSON/);
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    const { harness } = await setup(reply.json({ meta: META, results: { url: 'http://phish.example/login', in_database: { yes: true } } }));
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), /unexpected answer from upstream at results\.in_database/);
  });

  test('an answer without results: an error with PhishTank\'s errortext', async () => {
    const { harness } = await setup(reply.json({ errortext: 'You must supply a URL to use this function.', meta: { ...META, status: 'error' } }));
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), /^PhishTank: You must supply a URL to use this function\.$/);
    const { harness: bare } = await setup(reply.json({ meta: META }));
    await rejectsWith(bare.run('http://phish.example/login', 'URL'), /^unexpected answer from upstream: no results$/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('http://phish.example/login', 'URL'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});
