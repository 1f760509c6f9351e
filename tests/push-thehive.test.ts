/**
 * The TheHive push target (issue 37) against the loopback fake of TheHive 5's API v1
 * (tests/fakes/thehive.ts): a new alert shaped as TheHive takes it, the markings and severities,
 * `--case`, pushing twice, an empty push, every refusal and failure as one line without the key,
 * and upstream text kept inert in TheHive's Markdown.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HttpTransport } from '../src/http/client.js';
import { ALERT_SOURCE, ALERT_TYPE, codeSpan, THEHIVE_PAP, THEHIVE_TLP, theHiveDataType, theHiveSeverity, thehiveTarget } from '../src/push/thehive.js';
import { PushError, type PushAnalysis, type PushContext, type PushObservable, type PushRequest, type TargetSettings } from '../src/push/types.js';
import { DEFAULT_KEY, startFakeTheHive, type FakeTheHive, type FakeTheHiveOptions } from './fakes/thehive.js';
import { reply, type FakeRequest } from './fakes/http.js';
import { HOSTILE } from './fakes/hostile.js';

const transport = new HttpTransport({});
after(() => transport.close());

const CREDENTIAL_SOURCE = 'push.thehive.api_key or OAS_PUSH_THEHIVE_API_KEY';
const URL_SOURCE = 'push.thehive.url';

function settingsFor(url: string, overrides: Partial<TargetSettings> = {}): TargetSettings {
  return {
    url,
    credential: DEFAULT_KEY,
    credentialSource: CREDENTIAL_SOURCE,
    urlSource: URL_SOURCE,
    ssl_verify: true,
    timeout_ms: 5_000,
    retries: 0,
    max_tlp: 'RED',
    distribution: 1,
    publish: false,
    organisation: '',
    ...overrides,
  };
}

function contextFor(url: string, overrides: Partial<TargetSettings> = {}, ms = 5_000): PushContext {
  const settings = settingsFor(url, overrides);
  const http = transport.client({
    signal: AbortSignal.timeout(ms),
    deadline: Date.now() + ms,
    timeoutMs: ms,
    retries: settings.retries,
    secrets: [settings.credential],
  });
  return { settings, http };
}

let serial = 0;
function analysis(overrides: Partial<PushAnalysis> = {}): PushAnalysis {
  const id = `0b9e6c1a-3f2d-4e5a-9c8b-${String(++serial).padStart(12, '0')}`;
  return {
    id,
    link: `https://oas.example.org/results/${id}`,
    created_at: '2026-03-01T10:00:00.000Z',
    tlp: 'AMBER',
    pap: 'GREEN',
    worst: 'malicious',
    total: 12,
    ...overrides,
  };
}

const ITEMS: PushObservable[] = [
  { value: '203.0.113.7', type: 'IPv4', verdict: 'malicious', reasons: ['abuseipdb: 100% abuse confidence, 812 reports'], engines: [{ engine: 'abuseipdb', summary: '100% confidence, 812 reports' }] },
  { value: '2001:db8::7', type: 'IPv6', verdict: 'suspicious', reasons: ['spur: residential proxy'], engines: [{ engine: 'spur', summary: 'residential proxy (Bright Data)' }] },
  { value: 'evil-domain.net', type: 'FQDN', verdict: 'malicious', reasons: ['urlhaus: 3 malware URLs'], engines: [] },
  { value: 'login.evil-domain.net', type: 'FQDN', verdict: 'suspicious', reasons: ['crtsh: certificate issued 2 days ago'], engines: [] },
  { value: 'https://login.evil-domain.net/signin.php?id=1', type: 'URL', verdict: 'malicious', reasons: ['google_safe_browsing: SOCIAL_ENGINEERING'], engines: [] },
  { value: '44d88612fea8a8f36de82e1278abb02f', type: 'MD5', verdict: 'malicious', reasons: ['virustotal: 62/72 engines flag it'], engines: [{ engine: 'virustotal', summary: '62/72' }] },
  { value: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', type: 'SHA256', verdict: 'clean', reasons: [], engines: [] },
  { value: 'billing@evil-domain.net', type: 'Email', verdict: 'suspicious', reasons: ['the sender domain is 2 days old'], engines: [], found_in: ['From header'] },
  { value: 'aapocclcgogkmnckokdopfmhonfmgoek', type: 'CHROME_EXTENSION', verdict: 'unknown', reasons: [], engines: [] },
];

const EXPECTED_TYPES: Record<string, string> = {
  '203.0.113.7': 'ip',
  '2001:db8::7': 'ip',
  'evil-domain.net': 'domain',
  'login.evil-domain.net': 'fqdn',
  'https://login.evil-domain.net/signin.php?id=1': 'url',
  '44d88612fea8a8f36de82e1278abb02f': 'hash',
  '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f': 'hash',
  'billing@evil-domain.net': 'mail',
  aapocclcgogkmnckokdopfmhonfmgoek: 'other',
};

function request(items: PushObservable[] = ITEMS, overrides: Partial<PushAnalysis> = {}, caseId?: string): PushRequest {
  return { analysis: analysis(overrides), items, ...(caseId !== undefined ? { case_id: caseId } : {}) };
}

function bodyOf(req: FakeRequest): Record<string, unknown> {
  return JSON.parse(req.body) as Record<string, unknown>;
}

/** A push that must fail: its PushError, checked to be one line without the key. */
async function failure(fake: FakeTheHive, req: PushRequest, overrides: Partial<TargetSettings> = {}, ms = 5_000): Promise<PushError> {
  const context = contextFor(fake.url, overrides, ms);
  try {
    await thehiveTarget.push(req, context);
  } catch (error) {
    assert.ok(error instanceof PushError, `expected a PushError, got ${String(error)}`);
    assert.equal(error.target, 'thehive');
    assert.doesNotMatch(error.message, /\n|\r/, 'one line');
    assert.ok(!error.message.includes(context.settings.credential), 'no credential in the message');
    assert.ok(error.message.startsWith(`TheHive at ${new URL(fake.url).host}: `), error.message);
    return error;
  }
  assert.fail('the push should have failed');
}

/** Markdown text with its code spans removed (CommonMark: a backtick run closed by the next run of the same length). */
function outsideCodeSpans(markdown: string): string {
  let out = '';
  let i = 0;
  while (i < markdown.length) {
    if (markdown[i] !== '`') {
      out += markdown[i++];
      continue;
    }
    let n = 0;
    while (markdown[i + n] === '`') n++;
    const fence = '`'.repeat(n);
    let j = i + n;
    let close = -1;
    while (j < markdown.length) {
      const at = markdown.indexOf(fence, j);
      if (at < 0) break;
      let run = 0;
      while (markdown[at + run] === '`') run++;
      if (run === n) {
        close = at;
        break;
      }
      j = at + run;
    }
    if (close < 0) {
      out += fence;
      i += n;
    } else {
      out += '⟦code⟧';
      i = close + n;
    }
  }
  return out;
}

describe('TheHive push: mappings', () => {
  test('TLP and PAP are TheHive 5.2+ numbers; severity follows the worst verdict', () => {
    assert.deepEqual(THEHIVE_TLP, { CLEAR: 0, GREEN: 1, AMBER: 2, 'AMBER+STRICT': 3, RED: 4 });
    assert.deepEqual(THEHIVE_PAP, { CLEAR: 0, GREEN: 1, AMBER: 2, RED: 3 });
    assert.equal(theHiveSeverity('malicious'), 3);
    assert.equal(theHiveSeverity('suspicious'), 2);
    assert.equal(theHiveSeverity('clean'), 1);
    assert.equal(theHiveSeverity('unknown'), 1);
  });

  test('data types are TheHive defaults: a registrable domain is domain, a longer name fqdn', () => {
    for (const item of ITEMS) assert.equal(theHiveDataType(item.type, item.value), EXPECTED_TYPES[item.value], item.value);
    assert.equal(theHiveDataType('FQDN', 'example.co.uk'), 'domain');
    assert.equal(theHiveDataType('FQDN', 'www.example.co.uk'), 'fqdn');
    assert.equal(theHiveDataType('FQDN', 'EXAMPLE.ORG.'), 'domain');
  });

  test('a code span holds any text literally, backticks included', () => {
    assert.equal(codeSpan('plain'), '` plain `');
    assert.equal(codeSpan('a `b` c'), '`` a `b` c ``');
    assert.equal(codeSpan('``` fence'), '```` ``` fence ````');
    assert.equal(codeSpan('line\nbreak\u202e'), '` line break `');
    assert.equal(codeSpan(''), '` (empty) `');
  });
});

describe('TheHive push: a new alert', () => {
  let fake: FakeTheHive;
  before(async () => {
    fake = await startFakeTheHive();
  });
  after(() => fake.close());

  test('one alert with every observable, shaped as TheHive 5 takes it', async () => {
    const req = request();
    const outcome = await thehiveTarget.push(req, contextFor(fake.url));

    const posts = fake.server.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/alert');
    assert.equal(posts.length, 1);
    const sent = posts[0]!;
    assert.equal(sent.headers.authorization, `Bearer ${DEFAULT_KEY}`);
    assert.equal(sent.headers['x-organisation'], undefined, 'no X-Organisation without the setting');
    assert.match(String(sent.headers['content-type']), /^application\/json/);

    assert.equal(fake.alerts.length, 1);
    const alert = fake.alerts[0]!;
    assert.equal(alert.type, ALERT_TYPE);
    assert.equal(alert.source, ALERT_SOURCE);
    assert.equal(alert.type, 'oas');
    assert.equal(alert.sourceRef, req.analysis.id);
    assert.equal(alert.severity, 3);
    assert.equal(alert.tlp, 2, 'AMBER');
    assert.equal(alert.pap, 1, 'GREEN');
    assert.equal(alert.date, Date.parse(req.analysis.created_at));
    assert.equal(alert.externalLink, req.analysis.link);
    assert.ok(alert.title.includes(req.analysis.id) && alert.title.length <= 512);
    assert.ok(alert.tags.includes('oas:verdict=malicious'));
    assert.ok(alert.tags.includes('oas:verdict=suspicious'));
    assert.ok(alert.tags.includes('oas:verdict=clean'));
    assert.ok(alert.tags.includes('oas:worst=malicious'));
    assert.ok(alert.description.includes(`[Open the analysis in oas](<${req.analysis.link}>)`));
    assert.ok(alert.description.includes('` abuseipdb: 100% abuse confidence, 812 reports `'), 'reasons in the description');

    assert.equal(alert.observables.length, ITEMS.length);
    for (const item of ITEMS) {
      const observable = alert.observables.find((o) => o.data === item.value);
      assert.ok(observable, item.value);
      assert.equal(observable.dataType, EXPECTED_TYPES[item.value], item.value);
      assert.equal(observable.ioc, item.verdict === 'malicious', `ioc of ${item.value}`);
      assert.equal(observable.tlp, 2);
      assert.equal(observable.pap, 1);
      assert.ok(observable.tags.includes(`oas:verdict=${item.verdict}`));
      assert.ok(observable.message?.includes(`oas verdict: **${item.verdict}**`));
      for (const reason of item.reasons) assert.ok(observable.message?.includes(codeSpan(reason)), reason);
      assert.ok(observable.message?.includes(req.analysis.link));
    }
    assert.ok(alert.observables.find((o) => o.data === 'billing@evil-domain.net')?.message?.includes('` From header `'));

    assert.deepEqual(
      { kind: outcome.kind, id: outcome.id, created: outcome.created, added: outcome.added, existing: outcome.existing },
      { kind: 'alert', id: alert._id, created: true, added: ITEMS.length, existing: 0 },
    );
    assert.equal(outcome.target, 'thehive');
    assert.equal(outcome.link, `${fake.url}/alerts/${encodeURIComponent(alert._id)}/details`);
    assert.equal(outcome.line, `TheHive alert ${alert._id} created: 9 observables added (${outcome.link})`);
  });

  test('markings: RED is 4, AMBER+STRICT 3, CLEAR 0; none leaves TheHive its default', async () => {
    const cases: [PushAnalysis['tlp'], PushAnalysis['pap'], number | undefined, number | undefined][] = [
      ['RED', 'RED', 4, 3],
      ['AMBER+STRICT', 'AMBER', 3, 2],
      ['CLEAR', 'CLEAR', 0, 0],
      [undefined, undefined, undefined, undefined],
    ];
    for (const [tlp, pap, tlpNumber, papNumber] of cases) {
      const req = request(ITEMS.slice(0, 2), { tlp, pap, worst: 'suspicious' });
      await thehiveTarget.push(req, contextFor(fake.url));
      const sent = bodyOf(fake.server.requests.filter((r) => r.path === '/api/v1/alert').at(-1)!);
      assert.equal(sent.tlp, tlpNumber, `tlp of ${tlp}`);
      assert.equal(sent.pap, papNumber, `pap of ${pap}`);
      for (const observable of sent.observables as Record<string, unknown>[]) {
        assert.equal(observable.tlp, tlpNumber, 'observables carry the analysis TLP (TheHive would give them AMBER)');
        assert.equal(observable.pap, papNumber);
      }
      const alert = fake.alerts.find((a) => a.sourceRef === req.analysis.id)!;
      assert.equal(alert.severity, 2, 'suspicious: medium');
      assert.equal(alert.tlp, tlpNumber ?? 2);
    }
  });

  test('a relative link stays text; no externalLink', async () => {
    const req = request(ITEMS.slice(0, 1), { link: '/results/abc' });
    await thehiveTarget.push(req, contextFor(fake.url));
    const alert = fake.alerts.find((a) => a.sourceRef === req.analysis.id)!;
    assert.equal(alert.externalLink, undefined);
    assert.ok(alert.description.includes('Open the analysis in oas: ` /results/abc `'));
  });

  test('X-Organisation names the organisation when set', async () => {
    const orgs = await startFakeTheHive({ organisations: ['SOC', 'CERT'] });
    try {
      const req = request(ITEMS.slice(0, 2));
      await thehiveTarget.push(req, contextFor(orgs.url, { organisation: 'CERT' }));
      assert.ok(orgs.server.requests.every((r) => r.headers['x-organisation'] === 'CERT'));
      assert.equal(orgs.alerts[0]!.organisation, 'CERT');
    } finally {
      await orgs.close();
    }
  });

  test('each observable once: the same value twice is one observable', async () => {
    const req = request([ITEMS[0]!, { ...ITEMS[0]!, reasons: ['again'] }, ITEMS[2]!]);
    const outcome = await thehiveTarget.push(req, contextFor(fake.url));
    assert.equal(outcome.added, 2);
    assert.equal(fake.alerts.find((a) => a.sourceRef === req.analysis.id)!.observables.length, 2);
  });

  test('an empty push creates nothing and calls nothing', async () => {
    const before = fake.server.requests.length;
    const outcome = await thehiveTarget.push(request([]), contextFor(fake.url));
    assert.equal(fake.server.requests.length, before);
    assert.deepEqual({ kind: outcome.kind, id: outcome.id, created: outcome.created, added: outcome.added, existing: outcome.existing }, { kind: 'alert', id: '', created: false, added: 0, existing: 0 });
    assert.match(outcome.line, /^TheHive: nothing pushed: analysis .* has no observable to push$/);
    const toCase = await thehiveTarget.push(request([], {}, '12'), contextFor(fake.url));
    assert.equal(fake.server.requests.length, before);
    assert.equal(toCase.kind, 'case');
    assert.match(toCase.line, /nothing pushed: .* to case 12$/);
  });
});

describe('TheHive push: idempotence', () => {
  let fake: FakeTheHive;
  before(async () => {
    fake = await startFakeTheHive();
  });
  after(() => fake.close());

  test('pushing twice finds the alert and adds nothing', async () => {
    const req = request();
    const first = await thehiveTarget.push(req, contextFor(fake.url));
    fake.server.reset();
    const second = await thehiveTarget.push(req, contextFor(fake.url));

    assert.equal(fake.alerts.length, 1);
    assert.equal(fake.alerts[0]!.observables.length, ITEMS.length);
    assert.deepEqual(
      { kind: second.kind, id: second.id, created: second.created, added: second.added, existing: second.existing, link: second.link },
      { kind: 'alert', id: first.id, created: false, added: 0, existing: ITEMS.length, link: first.link },
    );
    assert.equal(second.line, `TheHive alert ${first.id} found (made by an earlier push): 0 observables added, 9 already there (${first.link})`);

    const calls = fake.server.requests.map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(calls, ['POST /api/v1/alert', 'POST /api/v1/query', 'POST /api/v1/query']);
    const [find, observables] = fake.server.requests.slice(1).map(bodyOf);
    assert.deepEqual(find, {
      query: [
        { _name: 'listAlert' },
        { _name: 'filter', _and: [
          { _eq: { _field: 'type', _value: 'oas' } },
          { _eq: { _field: 'source', _value: 'oas' } },
          { _eq: { _field: 'sourceRef', _value: req.analysis.id } },
        ] },
        { _name: 'page', from: 0, to: 1 },
      ],
    });
    assert.deepEqual(observables, { query: [{ _name: 'getAlert', idOrName: first.id }, { _name: 'observables' }] });
  });

  test('a later push of more observables adds only the missing ones', async () => {
    const req = request(ITEMS.slice(0, 3));
    const first = await thehiveTarget.push(req, contextFor(fake.url));
    const alert = fake.alerts.find((a) => a.sourceRef === req.analysis.id)!;
    // Someone removed one in TheHive meanwhile; the analysis now pushes six.
    alert.observables.splice(1, 1);
    const again = { ...req, items: ITEMS.slice(0, 6) };
    const second = await thehiveTarget.push(again, contextFor(fake.url));
    assert.equal(second.id, first.id);
    assert.equal(second.created, false);
    assert.equal(second.added, 4);
    assert.equal(second.existing, 2);
    assert.deepEqual(alert.observables.map((o) => o.data).sort(), ITEMS.slice(0, 6).map((i) => i.value).sort());
    const adds = fake.server.requests.filter((r) => r.path === `/api/v1/alert/${first.id}/observable`);
    assert.equal(adds.length, 4);
    for (const add of adds) assert.equal(typeof bodyOf(add).data, 'string');
  });

  test('an observable TheHive says already exists (a race) counts as there: 400, or 207 as TheHive 4 answered', async () => {
    for (const duplicateObservable of [400, 207] as const) {
      const racing = await startFakeTheHive({ duplicateObservable });
      try {
        const req = request(ITEMS.slice(0, 3));
        await thehiveTarget.push(req, contextFor(racing.url));
        // The observables query answers as if another push had not made them yet.
        racing.server.route('POST /api/v1/query', (r) => {
          const ops = bodyOf(r).query as { _name: string }[];
          return ops[1]?._name === 'observables' ? reply.json([]) : racing.handle(r);
        });
        const outcome = await thehiveTarget.push(req, contextFor(racing.url));
        assert.deepEqual({ added: outcome.added, existing: outcome.existing, created: outcome.created }, { added: 0, existing: 3, created: false }, `duplicates refused with ${duplicateObservable}`);
        assert.equal(racing.alerts[0]!.observables.length, 3);
      } finally {
        await racing.close();
      }
    }
  });
});

describe('TheHive push: --case', () => {
  let fake: FakeTheHive;
  before(async () => {
    fake = await startFakeTheHive();
  });
  after(() => fake.close());

  test('observables go to the case (by number or ~id), once', async () => {
    const target = fake.addCase('Phishing wave');
    const req = request(ITEMS, {}, String(target.number));
    const outcome = await thehiveTarget.push(req, contextFor(fake.url));
    assert.equal(fake.alerts.length, 0, 'no alert with --case');
    assert.equal(target.observables.length, ITEMS.length);
    assert.ok(target.observables.every((o) => o.tlp === 2 && o.pap === 1));
    assert.deepEqual(target.observables.filter((o) => o.ioc).map((o) => o.data).sort(), ITEMS.filter((i) => i.verdict === 'malicious').map((i) => i.value).sort());
    const link = `${fake.url}/cases/${encodeURIComponent(target._id)}/details`;
    assert.deepEqual(
      { kind: outcome.kind, id: outcome.id, created: outcome.created, added: outcome.added, existing: outcome.existing, link: outcome.link },
      { kind: 'case', id: target._id, created: false, added: ITEMS.length, existing: 0, link },
    );
    assert.equal(outcome.line, `TheHive case #${target.number}: 9 observables added (${link})`);
    assert.ok(fake.server.requests.some((r) => r.method === 'GET' && r.path === `/api/v1/case/${target.number}`));

    const again = await thehiveTarget.push(request(ITEMS.slice(0, 4), {}, target._id), contextFor(fake.url));
    assert.deepEqual({ added: again.added, existing: again.existing, id: again.id }, { added: 0, existing: 4, id: target._id });
    assert.equal(target.observables.length, ITEMS.length);
  });

  test('an unknown case: 404, named, check --case', async () => {
    const error = await failure(fake, request(ITEMS.slice(0, 1), {}, '77'));
    assert.equal(error.status, 404);
    assert.match(error.message, /: case 77 not found: NotFoundError: Case 77 not found \(check --case/);
  });

  test('a failure while adding says how many were added', async () => {
    const target = fake.addCase('Partial');
    fake.fail('POST /api/v1/case/*/observable', 'server-error', { after: 2 });
    try {
      const error = await failure(fake, request(ITEMS.slice(0, 5), {}, String(target.number)));
      assert.equal(error.status, 500);
      assert.match(error.message, new RegExp(`: case #${target.number} found, 2 of 5 missing observables added, then adding an observable \\(\\w+\\): HTTP 500 Internal Server Error \\(check ${URL_SOURCE}\\)$`));
      assert.equal(target.observables.length, 2);
    } finally {
      fake.clearFaults();
    }
  });
});

describe('TheHive push: refusals and failures', () => {
  let fake: FakeTheHive;
  before(async () => {
    fake = await startFakeTheHive();
  });
  after(() => fake.close());

  test('a wrong key: 401, key refused', async () => {
    const error = await failure(fake, request(), { credential: 'not-the-key-5f3a9c' });
    assert.equal(error.status, 401);
    assert.match(error.message, new RegExp(`creating the alert: HTTP 401 Unauthorized: AuthenticationError: Authentication failure \\(key refused: check ${CREDENTIAL_SOURCE}\\)$`));
    assert.equal(fake.alerts.length, 0);
  });

  test('a read-only key: 403 naming the permission, key refused', async () => {
    const readOnly = await startFakeTheHive({ profile: 'read-only' });
    try {
      const error = await failure(readOnly, request());
      assert.equal(error.status, 403);
      assert.match(error.message, /HTTP 403 Forbidden: AuthorizationError: .*manageAlert\/create \(key refused: check push\.thehive\.api_key/);
      const toCase = readOnly.addCase('x');
      const caseError = await failure(readOnly, request(ITEMS.slice(0, 2), {}, String(toCase.number)));
      assert.equal(caseError.status, 403);
      assert.match(caseError.message, /case #1 found, 0 of 2 missing observables added, then adding an observable \(ip\): HTTP 403 Forbidden: .*manageObservable \(key refused/);
    } finally {
      await readOnly.close();
    }
  });

  test('an organisation the key is not in: 403, the organisation named', async () => {
    const error = await failure(fake, request(), { organisation: 'Elsewhere' });
    assert.equal(error.status, 403);
    assert.match(error.message, /\(key refused: check push\.thehive\.api_key or OAS_PUSH_THEHIVE_API_KEY and the organisation Elsewhere \(push\.thehive\.organisation\)\)$/);
  });

  test('a 500: the client\'s words and the URL setting', async () => {
    fake.fail('POST /api/v1/alert', 'server-error');
    try {
      const error = await failure(fake, request());
      assert.equal(error.status, 500);
      assert.match(error.message, /creating the alert: HTTP 500 Internal Server Error \(check push\.thehive\.url\)$/);
    } finally {
      fake.clearFaults();
    }
  });

  test('a 500 is retried when retries allow', async () => {
    const flaky = await startFakeTheHive();
    try {
      let calls = 0;
      flaky.server.route('POST /api/v1/alert', (r) => (++calls === 1 ? reply.json({ type: 'InternalError', message: 'boom' }, 500) : flaky.handle(r)));
      const outcome = await thehiveTarget.push(request(ITEMS.slice(0, 2)), contextFor(flaky.url, { retries: 1 }));
      assert.equal(outcome.created, true);
      assert.equal(calls, 2);
    } finally {
      await flaky.close();
    }
  });

  test('no answer: a timeout', async () => {
    fake.fail('POST /api/v1/alert', 'hang');
    try {
      const error = await failure(fake, request(), {}, 400);
      assert.equal(error.status, undefined);
      assert.match(error.message, /creating the alert: timeout after 400 ms.*\(check push\.thehive\.url\)$/);
    } finally {
      fake.clearFaults();
    }
  });

  test('malformed JSON, or a page that is not TheHive\'s, is a failure', async () => {
    for (const fault of ['bad-json', 'html'] as const) {
      fake.fail('POST /api/v1/alert', fault);
      try {
        const error = await failure(fake, request());
        assert.match(error.message, /creating the alert: (upstream answered with malformed JSON|unexpected answer).* \(check that push\.thehive\.url is TheHive 5's address\)$/, fault);
      } finally {
        fake.clearFaults();
      }
    }
    const req = request(ITEMS.slice(0, 2));
    await thehiveTarget.push(req, contextFor(fake.url));
    fake.fail('POST /api/v1/query', 'bad-json');
    try {
      const error = await failure(fake, req);
      assert.match(error.message, /looking up the alert of analysis .*: upstream answered with malformed JSON/);
    } finally {
      fake.clearFaults();
    }
  });

  test('connection refused', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const closed = { url: `http://127.0.0.1:${port}` } as FakeTheHive;
    const error = await failure(closed, request());
    assert.match(error.message, /creating the alert: connection refused by 127\.0\.0\.1:\d+ .*\(check push\.thehive\.url\)$/);
  });

  test('TheHive 5.0 or 5.1 (RED was 3) refuses TLP 4: the line says which version is needed', async () => {
    const old = await startFakeTheHive({ tlpLevels: 4 } satisfies FakeTheHiveOptions);
    try {
      const error = await failure(old, request(ITEMS.slice(0, 1), { tlp: 'RED' }));
      assert.equal(error.status, 400);
      assert.match(error.message, /HTTP 400 Bad Request: AttributeCheckingError: Invalid format for tlp.*\(check that push\.thehive\.url is TheHive 5\.2 or later\)$/);
    } finally {
      await old.close();
    }
  });

  test('a failure after the alert was found says what was added before it', async () => {
    const req = request(ITEMS.slice(0, 2));
    const first = await thehiveTarget.push(req, contextFor(fake.url));
    fake.fail('POST /api/v1/alert/*/observable', 'server-error', { after: 1 });
    try {
      const error = await failure(fake, { ...req, items: ITEMS.slice(0, 5) });
      assert.equal(error.status, 500);
      assert.equal(
        error.message,
        `TheHive at ${new URL(fake.url).host}: alert ${first.id} found (made by an earlier push), 1 of 3 missing observables added (2 already there), then adding an observable (fqdn): HTTP 500 Internal Server Error (check ${URL_SOURCE})`,
      );
    } finally {
      fake.clearFaults();
    }
    const resumed = await thehiveTarget.push({ ...req, items: ITEMS.slice(0, 5) }, contextFor(fake.url));
    assert.deepEqual({ added: resumed.added, existing: resumed.existing }, { added: 2, existing: 3 });
  });

  test('no request carries the key anywhere but the Authorization header', () => {
    for (const r of fake.server.requests) {
      assert.ok(!r.body.includes(DEFAULT_KEY));
      assert.ok(!r.path.includes(DEFAULT_KEY));
    }
  });
});

describe('TheHive push: hostile text stays inert', () => {
  let fake: FakeTheHive;
  before(async () => {
    fake = await startFakeTheHive();
  });
  after(() => fake.close());

  const MARKDOWN_ATTACKS = [
    '[click me](javascript:alert(1))',
    '![pixel](https://evil.example/track.png)',
    '<https://evil.example/autolink>',
    'www.evil.example/bare-autolink',
    '# A heading\n## another',
    '```\nfenced\n```',
    '`tick` ``double`` ```triple```',
    '**bold** _em_ | table | cell |',
    '> quote\n- list\n1. item',
    '[ref]: https://evil.example/ref',
  ];
  const HOSTILE_TEXTS = [...Object.values(HOSTILE), ...MARKDOWN_ATTACKS];

  test('reasons, summaries, found_in and values only inside one-line code spans', async () => {
    const items: PushObservable[] = [
      {
        value: 'https://evil.example/<script>alert(1)</script>`)[x](javascript:1)',
        type: 'URL',
        verdict: 'malicious',
        reasons: HOSTILE_TEXTS,
        engines: HOSTILE_TEXTS.map((summary, i) => ({ engine: `custom_${i}`, summary })),
        found_in: HOSTILE_TEXTS,
      },
      { value: 'evil.example', type: 'FQDN', verdict: 'suspicious', reasons: [`${'x'.repeat(5_000)} long`], engines: [] },
    ];
    const req = request(items, { link: 'https://oas.example.org/results/x y<z>' });
    await thehiveTarget.push(req, contextFor(fake.url));
    const alert = fake.alerts.find((a) => a.sourceRef === req.analysis.id)!;
    const texts = [alert.description, ...alert.observables.map((o) => o.message ?? '')];
    for (const text of texts) {
      assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]/, 'no control or bidi character');
      const outside = outsideCodeSpans(text);
      assert.doesNotMatch(outside, /evil|javascript|script|onerror|pwned|HYPERLINK|Ignore your instructions|fenced|heading|quote/i, outside);
      assert.doesNotMatch(outside, /<(?!https:\/\/oas\.example\.org\/)/, 'no HTML outside the link back');
      for (const line of outside.split('\n')) {
        assert.doesNotMatch(line, /^\s*(#(?!## Observables$)|>|```|\[ref\]|\d+\. )/, `no block markup from upstream: ${line}`);
      }
      const links = outside.match(/\]\(/g) ?? [];
      assert.equal(links.length, 1, 'only the link back is a link');
      assert.ok(text.includes('(<https://oas.example.org/results/x%20y%3Cz%3E>)'), 'the link back escaped');
    }
    const long = alert.observables.find((o) => o.data === 'evil.example')!.message!;
    assert.ok(long.includes('…') && long.length < 2_000, 'a long reason is cut');
    assert.ok(alert.title.length <= 512);
    assert.ok(alert.tags.every((tag) => tag.length <= 128));
  });
});
