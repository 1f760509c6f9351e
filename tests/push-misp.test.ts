/**
 * The MISP push target (src/push/misp.ts) against tests/fakes/misp-push.ts, MISP's write API as
 * MISP 2.5 answers it: a new event (fields, distribution and tags from the marking, attributes
 * mapped, to_ids for malicious only, comments, link back, publish), `--event`, idempotence (fixed
 * UUIDs; MISP's own "already exists" answers), an empty push, and every failure as one line
 * without the key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpTransport } from '../src/http/client.js';
import { OAS_NAMESPACE, uuidv5 } from '../src/export/uuid.js';
import type { Tlp } from '../src/marking/levels.js';
import { attributeComment, eventDistribution, eventUuid, mispTarget } from '../src/push/misp.js';
import { PushError, type PushAnalysis, type PushObservable, type PushOutcome, type PushRequest, type TargetSettings } from '../src/push/types.js';
import type { Verdict } from '../src/verdict/verdict.js';
import { MISP_AUTH_FAILED, MISP_NO_PERMISSION, startMispPushFake, type MispPushFake } from './fakes/misp-push.js';

const transport = new HttpTransport();
after(() => transport.close());

let serial = 0;
function analysis(fields: Partial<PushAnalysis> = {}): PushAnalysis {
  const id = fields.id ?? `an-${++serial}-${Date.now().toString(36)}`;
  return {
    id,
    link: `https://oas.example.org/results/${id}`,
    created_at: '2026-03-01T10:00:00.000Z',
    tlp: 'AMBER',
    pap: 'GREEN',
    worst: 'malicious',
    total: 9,
    ...fields,
  };
}

function item(value: string, type: PushObservable['type'], verdict: Verdict, reasons: string[] = [], engines: PushObservable['engines'] = []): PushObservable {
  return { value, type, verdict, reasons, engines };
}

const ITEMS: PushObservable[] = [
  item('1.2.3.4', 'IPv4', 'malicious', ['vt: 54/76 engines flag it', 'abuseipdb: confidence 100%'], [{ engine: 'vt', summary: '54/76 engines flag it' }]),
  item('evil-login.com', 'FQDN', 'suspicious', ['urlhaus: listed as malware host']),
  item('cdn.evil-login.com', 'FQDN', 'malicious', ['threatfox: Cobalt Strike C2']),
  item('https://evil-login.com/login.php?id=1', 'URL', 'malicious', ['gsb: SOCIAL_ENGINEERING']),
  item('275A021BBFB6489E54D471899F7DB9D1663FC695EC2FE2A2C4538AABF651FD0F', 'SHA256', 'malicious', ['malwarebazaar: AgentTesla']),
  item('phish@evil-login.com', 'Email', 'suspicious', []),
];

function settings(fake: { url: string; key: string }, fields: Partial<TargetSettings> = {}): TargetSettings {
  return {
    url: fake.url,
    credential: fake.key,
    credentialSource: 'push.misp.api_key or OAS_PUSH_MISP_API_KEY',
    urlSource: 'push.misp.url',
    ssl_verify: true,
    timeout_ms: 5000,
    retries: 0,
    max_tlp: 'RED',
    distribution: 1,
    publish: false,
    organisation: '',
    ...fields,
  };
}

function push(fake: { url: string; key: string }, request: PushRequest, fields: Partial<TargetSettings> = {}): Promise<PushOutcome> {
  const resolved = settings(fake, fields);
  const ms = resolved.timeout_ms;
  const http = transport.client({ signal: AbortSignal.timeout(ms), deadline: Date.now() + ms, timeoutMs: ms, retries: resolved.retries, secrets: [resolved.credential] });
  return mispTarget.push(request, { settings: resolved, http });
}

/** The push's PushError, checked to be one line without the key. */
async function failure(promise: Promise<unknown>, key: string): Promise<PushError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PushError, `expected a PushError, got ${String(error)}`);
    assert.equal(error.target, 'misp');
    assert.ok(!error.message.includes('\n'), `one line: ${error.message}`);
    assert.ok(!error.message.includes(key), 'no key in the message');
    assert.match(error.message, /^MISP at 127\.0\.0\.1:\d+: /);
    return error;
  }
  assert.fail('the push should have failed');
}

describe('MISP push: a new event', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake()));
  after(() => fake.close());

  it('creates the event with its fields, tags and one attribute per observable, and links to it', async () => {
    const a = analysis();
    const outcome = await push(fake, { analysis: a, items: ITEMS }, { distribution: 3 });
    const event = fake.event(eventUuid(a.id))!;
    assert.ok(event, 'event made with the UUID derived from the analysis id');
    assert.equal(event.uuid, uuidv5(OAS_NAMESPACE, `misp-event:${a.id}`), 'the same UUID as oas export --format misp');
    assert.deepEqual(outcome, {
      target: 'misp',
      kind: 'event',
      id: event.id,
      link: `${fake.url}/events/view/${event.id}`,
      created: true,
      added: 6,
      existing: 0,
      line: `MISP event ${event.id} created: 6 attributes added (${fake.url}/events/view/${event.id})`,
    });
    assert.equal(event.info, `oas analysis ${a.id}`);
    assert.equal(event.threat_level_id, '1', 'worst verdict malicious: High');
    assert.equal(event.analysis, '2');
    assert.equal(event.date, '2026-03-01');
    assert.equal(event.distribution, '1', 'AMBER: at most this community, whatever the setting');
    assert.equal(event.published, false);
    assert.deepEqual(event.Tag.map((t) => t.name), ['oas', 'tlp:amber', 'PAP:GREEN']);

    const byValue = new Map(event.Attribute.map((attr) => [attr.value, attr]));
    const expect: [string, string, string, boolean][] = [
      ['1.2.3.4', 'ip-dst', 'Network activity', true],
      ['evil-login.com', 'domain', 'Network activity', false],
      ['cdn.evil-login.com', 'hostname', 'Network activity', true],
      ['https://evil-login.com/login.php?id=1', 'url', 'Network activity', true],
      ['275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', 'sha256', 'Payload delivery', true],
      ['phish@evil-login.com', 'email-src', 'Payload delivery', false],
    ];
    for (const [value, type, category, toIds] of expect) {
      const attr = byValue.get(value);
      assert.ok(attr, `attribute ${value}`);
      assert.equal(attr.type, type, value);
      assert.equal(attr.category, category, value);
      assert.equal(attr.to_ids, toIds, `to_ids of ${value}`);
      assert.equal(attr.distribution, '5', 'inherits the event');
      assert.equal(attr.uuid, uuidv5(OAS_NAMESPACE, `misp-attribute:${a.id}:${type}:${value}`), 'the UUID the export writes');
    }
    assert.ok(!event.Attribute.some((attr) => attr.type === 'hostname' && attr.value === 'evil-login.com'), 'a URL gives no hostname');
    const ip = byValue.get('1.2.3.4')!;
    assert.match(ip.comment, /^oas verdict: malicious\. vt: 54\/76 engines flag it; abuseipdb: confidence 100%\. Engines: vt: 54\/76 engines flag it\./);
    assert.deepEqual(ip.Tag, [{ name: 'oas:verdict="malicious"' }]);
    assert.match(byValue.get('phish@evil-login.com')!.comment, /no engine that judges this observable answered/);

    const link = byValue.get(a.link)!;
    assert.equal(link.type, 'link');
    assert.equal(link.category, 'External analysis');
    assert.equal(link.to_ids, false);
    assert.equal(event.Attribute.length, 7);

    assert.deepEqual(fake.violations, []);
    for (const req of fake.http.requests) {
      assert.equal(req.headers.authorization, fake.key);
      assert.equal(req.headers.accept, 'application/json');
    }
    assert.deepEqual(fake.http.requests.map((r) => `${r.method} ${r.path}`), ['POST /events/add', `POST /attributes/add/${event.id}`]);
  });

  it('takes the distribution from the TLP and the threat level from the worst verdict', async () => {
    const cases: [Tlp | undefined, number, string][] = [
      ['CLEAR', 3, '3'],
      ['GREEN', 1, '1'],
      ['GREEN', 2, '2'],
      ['AMBER', 3, '1'],
      ['AMBER', 0, '0'],
      ['AMBER+STRICT', 3, '0'],
      ['RED', 3, '0'],
      [undefined, 3, '0'],
    ];
    for (const [tlp, setting, want] of cases) {
      const a = analysis({ tlp, pap: tlp ? 'AMBER' : undefined });
      await push(fake, { analysis: a, items: ITEMS.slice(0, 1) }, { distribution: setting });
      const event = fake.event(eventUuid(a.id))!;
      assert.equal(event.distribution, want, `${tlp ?? 'no marking'} with distribution ${setting}`);
      assert.equal(String(eventDistribution(tlp, setting)), want);
      const tags = event.Tag.map((t) => t.name);
      assert.deepEqual(tags, tlp ? ['oas', `tlp:${tlp.toLowerCase()}`, 'PAP:AMBER'] : ['oas'], 'no tlp or PAP tag without a marking');
    }
    const levels: [Verdict, string][] = [['malicious', '1'], ['suspicious', '2'], ['clean', '3'], ['unknown', '4']];
    for (const [worst, level] of levels) {
      const a = analysis({ worst });
      await push(fake, { analysis: a, items: ITEMS.slice(1, 2) });
      assert.equal(fake.event(eventUuid(a.id))!.threat_level_id, level, worst);
    }
    assert.deepEqual(fake.violations, []);
  });

  it('writes the link back as a comment when the analysis has no public URL', async () => {
    const a = analysis();
    a.link = `/results/${a.id}`;
    await push(fake, { analysis: a, items: ITEMS.slice(0, 1) });
    const note = fake.event(eventUuid(a.id))!.Attribute.find((attr) => attr.type === 'comment')!;
    assert.equal(note.value, `oas analysis ${a.id}: /results/${a.id}`);
    assert.equal(note.category, 'Other');
  });

  it('refuses a distribution MISP events do not have, before any request', async () => {
    fake.http.reset();
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS }, { distribution: 4 }), fake.key);
    assert.match(error.message, /distribution 4 is no MISP event distribution .*\(check push\.misp\.distribution\)$/);
    assert.equal(fake.http.requests.length, 0);
  });

  it('pushes nothing for an empty list: no request, nothing created', async () => {
    fake.http.reset();
    const a = analysis();
    const outcome = await push(fake, { analysis: a, items: [] });
    assert.equal(outcome.created, false);
    assert.equal(outcome.added, 0);
    assert.equal(outcome.existing, 0);
    assert.equal(outcome.line, `MISP: no observables to push for analysis ${a.id}; nothing created`);
    assert.equal(fake.http.requests.length, 0);
    assert.equal(fake.event(eventUuid(a.id)), undefined);
  });
});

describe('MISP push: idempotence', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake()));
  after(() => fake.close());

  it('a second push finds the event and its attributes, and adds only what is new', async () => {
    const a = analysis();
    const first = await push(fake, { analysis: a, items: ITEMS });
    const second = await push(fake, { analysis: a, items: ITEMS });
    assert.equal(fake.events.length, 1);
    const event = fake.events[0]!;
    assert.equal(event.Attribute.length, 7);
    assert.equal(second.id, first.id);
    assert.equal(second.created, false);
    assert.equal(second.added, 0);
    assert.equal(second.existing, 6);
    assert.equal(second.line, `MISP event ${event.id} found: 0 attributes added, 6 already there (${fake.url}/events/view/${event.id})`);

    const third = await push(fake, { analysis: a, items: [...ITEMS, item('5.6.7.8', 'IPv4', 'suspicious', ['shodan: open RDP'])] });
    assert.equal(third.added, 1);
    assert.equal(third.existing, 6);
    assert.equal(third.line, `MISP event ${event.id} found: 1 attribute added, 6 already there (${fake.url}/events/view/${event.id})`);
    assert.equal(event.Attribute.length, 8);
    assert.deepEqual(fake.violations, []);
  });

  it("understands MISP's own \"already exists\" refusals when the event did not show the attributes", async () => {
    const a = analysis();
    await push(fake, { analysis: a, items: ITEMS });
    const event = fake.event(eventUuid(a.id))!;
    fake.staleView = true;
    try {
      // All 7 refused at once: 403 "Could not add Attribute" with errors per attribute_<index>.
      const again = await push(fake, { analysis: a, items: ITEMS });
      assert.equal(again.added, 0);
      assert.equal(again.existing, 6);
      // One new among them: 200 with the one saved and the others' errors.
      const more = await push(fake, { analysis: a, items: [...ITEMS, item('9.9.9.9', 'IPv4', 'malicious')] });
      assert.equal(more.added, 1);
      assert.equal(more.existing, 6);
    } finally {
      fake.staleView = false;
    }
    assert.equal(event.Attribute.length, 8);
  });

  it('counts an attribute deleted in MISP as there (its UUID is taken), and a hand-made one of the same value', async () => {
    const a = analysis();
    await push(fake, { analysis: a, items: ITEMS.slice(0, 2) });
    const event = fake.event(eventUuid(a.id))!;
    event.Attribute.find((attr) => attr.value === '1.2.3.4')!.deleted = true;
    event.Attribute.push({ ...event.Attribute[0]!, id: '9999', uuid: '11111111-2222-4333-8444-555555555555', type: 'hostname', value: 'cdn.evil-login.com', deleted: false });
    const again = await push(fake, { analysis: a, items: ITEMS.slice(0, 3) });
    assert.deepEqual([again.added, again.existing], [0, 3]);
    assert.equal(event.Attribute.filter((attr) => attr.value === '1.2.3.4').length, 1, 'not added again');
  });

  it('after a push that failed half-way, the next one finds the event and adds the rest', async () => {
    const a = analysis();
    fake.fail('attributes/add', 'status-500', 1);
    const error = await failure(push(fake, { analysis: a, items: ITEMS }), fake.key);
    const event = fake.event(eventUuid(a.id))!;
    assert.equal(error.message, `MISP at ${new URL(fake.url).host}: event ${event.id} created, 0 of 6 attributes added, then adding attributes failed: HTTP 500 Internal Server Error (check push.misp.url)`);
    assert.equal(error.status, 500);
    const again = await push(fake, { analysis: a, items: ITEMS });
    assert.deepEqual([again.created, again.added, again.existing, again.id], [false, 6, 0, event.id]);
  });

  it('retries a 500 safely: the fixed UUID turns a repeated add into "already exists"', async () => {
    const a = analysis();
    fake.fail('events/add', 'status-500', 1);
    const outcome = await push(fake, { analysis: a, items: ITEMS.slice(0, 2) }, { retries: 1 });
    assert.equal(outcome.created, true);
    assert.equal(fake.events.filter((e) => e.uuid === eventUuid(a.id)).length, 1);
  });
});

describe('MISP push: an existing event (--event)', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake()));
  after(() => fake.close());

  it('adds the attributes to that event, with the marking on them, never publishing it', async () => {
    const target = fake.seedEvent({ info: 'Phishing wave', distribution: '3' }, [{ type: 'ip-dst', category: 'Network activity', value: '1.2.3.4' }]);
    const a = analysis({ tlp: 'AMBER+STRICT', pap: 'RED' });
    const outcome = await push(fake, { analysis: a, items: ITEMS, event_id: target.id }, { publish: true, distribution: 3 });
    assert.deepEqual(outcome, {
      target: 'misp',
      kind: 'event',
      id: target.id,
      link: `${fake.url}/events/view/${target.id}`,
      created: false,
      added: 5,
      existing: 1,
      line: `MISP event ${target.id}: 5 attributes added, 1 already there (${fake.url}/events/view/${target.id})`,
    });
    assert.equal(fake.events.length, 1, 'no event made');
    assert.equal(target.published, false);
    assert.equal(fake.http.hits('POST /events/publish').length, 0);
    const ours = target.Attribute.filter((attr) => attr.comment.startsWith('oas verdict'));
    assert.equal(ours.length, 5);
    for (const attr of ours) {
      assert.equal(attr.distribution, '0', 'AMBER+STRICT: the organisation only, though the event is shared with all');
      assert.ok(attr.Tag.some((t) => t.name === 'tlp:amber+strict') && attr.Tag.some((t) => t.name === 'PAP:RED'));
    }
    const again = await push(fake, { analysis: a, items: ITEMS, event_id: target.uuid });
    assert.deepEqual([again.created, again.added, again.existing, again.id], [false, 0, 6, target.id]);
    assert.deepEqual(fake.violations, []);
  });

  it('says which event is unknown and to check --event', async () => {
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS, event_id: '999' }), fake.key);
    assert.equal(error.status, 404);
    assert.match(error.message, /: event 999 not found: HTTP 404 Not Found: Invalid event \(check --event: it must exist and be visible to the key's organisation\)$/);
    const hidden = fake.seedEvent({ info: 'Another org, not shared', orgc_id: '7', distribution: '0' });
    const unseen = await failure(push(fake, { analysis: analysis(), items: ITEMS, event_id: hidden.id }), fake.key);
    assert.match(unseen.message, new RegExp(`event ${hidden.id} not found`));
  });

  it("says when the key's organisation may not modify the event", async () => {
    const shared = fake.seedEvent({ info: 'Another org, shared', orgc_id: '7', distribution: '1' });
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS, event_id: shared.id }), fake.key);
    assert.equal(error.status, 403);
    assert.match(error.message, new RegExp(`event ${shared.id} given, 0 of 6 attributes added, then adding attributes failed: HTTP 403 Forbidden: You do not have permission to do that\\. \\(the key's organisation may not modify this event: check --event\\)$`));
  });

  it('refuses an --event that is neither an id nor a UUID, without a request', async () => {
    fake.http.reset();
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS, event_id: '12/../../users/view/me' }), fake.key);
    assert.match(error.message, /is no MISP event id \(a number or a UUID\) \(check --event\)$/);
    assert.equal(fake.http.requests.length, 0);
  });
});

describe('MISP push: publishing', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake()));
  after(() => fake.close());

  it('publishes the event it made, and again only when a later push adds to it', async () => {
    const a = analysis();
    const outcome = await push(fake, { analysis: a, items: ITEMS.slice(0, 3) }, { publish: true });
    const event = fake.event(eventUuid(a.id))!;
    assert.equal(event.published, true);
    assert.equal(outcome.line, `MISP event ${event.id} created and published: 3 attributes added (${fake.url}/events/view/${event.id})`);
    fake.http.reset();
    const same = await push(fake, { analysis: a, items: ITEMS.slice(0, 3) }, { publish: true });
    assert.equal(same.line, `MISP event ${event.id} found: 0 attributes added, 3 already there (${fake.url}/events/view/${event.id})`);
    assert.equal(fake.http.hits('POST /events/publish').length, 0, 'nothing added: nothing to publish');
    const more = await push(fake, { analysis: a, items: ITEMS }, { publish: true });
    assert.equal(more.line, `MISP event ${event.id} found and published: 3 attributes added, 3 already there (${fake.url}/events/view/${event.id})`);
    assert.equal(event.published, true, 'published again after MISP unpublished it');
  });

  it('says what was made when the key may not publish', async () => {
    fake.role = 'no-publish';
    try {
      const a = analysis();
      const error = await failure(push(fake, { analysis: a, items: ITEMS.slice(0, 2) }, { publish: true }), fake.key);
      const event = fake.event(eventUuid(a.id))!;
      assert.equal(error.status, 403);
      assert.match(error.message, new RegExp(`: event ${event.id} created, 2 of 2 attributes added, then publishing the event failed: HTTP 403 Forbidden: ${MISP_NO_PERMISSION.replace('.', '\\.')} \\(the key's role may not publish: give it the publish permission, or set push\\.misp\\.publish to false\\)$`));
    } finally {
      fake.role = 'admin';
    }
  });
});

describe('MISP push: failures', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake({ readOnlyKey: 'read-only-key-abcdef0123456789abcdef0123456789' })));
  after(() => fake.close());
  const host = () => new URL(fake.url).host;

  it('a key MISP does not know: its 403 "Authentication failed" is a key refused', async () => {
    const wrong = { url: fake.url, key: 'wrong-key-0123456789abcdef0123456789abcdef' };
    const error = await failure(push(wrong, { analysis: analysis(), items: ITEMS }), wrong.key);
    assert.equal(error.status, 403);
    assert.equal(error.message, `MISP at ${host()}: adding the event failed: HTTP 403 Forbidden: ${MISP_AUTH_FAILED} (key refused: check push.misp.api_key or OAS_PUSH_MISP_API_KEY)`);
  });

  it('a read-only role, or a read-only key: MISP\'s 403 "You do not have permission" is a key refused', async () => {
    fake.role = 'read-only';
    try {
      const error = await failure(push(fake, { analysis: analysis(), items: ITEMS }), fake.key);
      assert.equal(error.status, 403);
      assert.equal(error.message, `MISP at ${host()}: adding the event failed: HTTP 403 Forbidden: ${MISP_NO_PERMISSION} (key refused: a read-only role or key may not write to MISP; check push.misp.api_key or OAS_PUSH_MISP_API_KEY)`);
    } finally {
      fake.role = 'admin';
    }
    const readOnly = { url: fake.url, key: 'read-only-key-abcdef0123456789abcdef0123456789' };
    const viaKey = await failure(push(readOnly, { analysis: analysis(), items: ITEMS }), readOnly.key);
    assert.match(viaKey.message, /key refused: a read-only role or key may not write to MISP; check push\.misp\.api_key/);
    const target = fake.seedEvent({ info: 'ours' });
    const viaEvent = await failure(push(readOnly, { analysis: analysis(), items: ITEMS, event_id: target.id }), readOnly.key);
    assert.match(viaEvent.message, new RegExp(`event ${target.id} given, 0 of 6 attributes added, then adding attributes failed: HTTP 403 Forbidden: You do not have permission to use this functionality\\. \\(key refused`));
  });

  it('a 401 from a proxy in front of MISP is a key refused', async () => {
    fake.fail('events/add', 'status-401', 1);
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS }), fake.key);
    assert.equal(error.status, 401);
    assert.equal(error.message, `MISP at ${host()}: adding the event failed: HTTP 401 Unauthorized (key refused: check push.misp.api_key or OAS_PUSH_MISP_API_KEY)`);
  });

  it('a 500', async () => {
    fake.fail('events/add', 'status-500', 1);
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS }), fake.key);
    assert.equal(error.status, 500);
    assert.equal(error.message, `MISP at ${host()}: adding the event failed: HTTP 500 Internal Server Error (check push.misp.url)`);
  });

  it('a timeout', async () => {
    fake.fail('events/add', 'hang', 1);
    const error = await failure(push(fake, { analysis: analysis(), items: ITEMS }, { timeout_ms: 400 }), fake.key);
    assert.match(error.message, /: adding the event failed: timeout after 400 ms waiting for 127\.0\.0\.1:\d+ \(check push\.misp\.url\)$/);
    assert.equal(error.status, undefined);
  });

  it('a refused connection', async () => {
    const gone = await startMispPushFake();
    await gone.close();
    const error = await failure(push(gone, { analysis: analysis(), items: ITEMS }), gone.key);
    assert.match(error.message, /: adding the event failed: .*\(check push\.misp\.url\)$/);
  });

  it('malformed JSON, or an HTML page (not the API), is said as such', async () => {
    fake.fail('events/add', 'bad-json', 1);
    const bad = await failure(push(fake, { analysis: analysis(), items: ITEMS }), fake.key);
    assert.equal(bad.message, `MISP at ${host()}: adding the event failed: MISP answered with malformed JSON (check push.misp.url: it must be MISP's base URL)`);
    fake.fail('events/add', 'html', 1);
    const html = await failure(push(fake, { analysis: analysis(), items: ITEMS }), fake.key);
    assert.match(html.message, /malformed JSON \(check push\.misp\.url/);
    const a = analysis();
    fake.fail('attributes/add', 'bad-json', 1);
    const later = await failure(push(fake, { analysis: a, items: ITEMS }), fake.key);
    assert.match(later.message, new RegExp(`: event ${fake.event(eventUuid(a.id))!.id} created, 0 of 6 attributes added, then adding attributes failed: MISP answered with malformed JSON`));
  });

  it('a failure after some batches says how far the push went', async () => {
    const many = Array.from({ length: 150 }, (_, i) => item(`10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`, 'IPv4', 'suspicious', ['internal: seen']));
    const a = analysis();
    fake.fail('attributes/add', 'hang', 1, 1);
    const error = await failure(push(fake, { analysis: a, items: many }, { timeout_ms: 1500 }), fake.key);
    const event = fake.event(eventUuid(a.id))!;
    assert.match(error.message, new RegExp(`: event ${event.id} created, 100 of 150 attributes added, then adding attributes failed: timeout after 1500 ms .*\\(check push\\.misp\\.url\\)$`));
    const rest = await push(fake, { analysis: a, items: many });
    assert.deepEqual([rest.added, rest.existing], [50, 100]);
  });

  it('an attribute MISP refuses (its value fails the type) fails the push, saying what was added', async () => {
    const a = analysis();
    const items = [...ITEMS.slice(0, 2), item('bad_-domain-.ex ample', 'FQDN', 'malicious', ['manual'])];
    const error = await failure(push(fake, { analysis: a, items }), fake.key);
    const event = fake.event(eventUuid(a.id))!;
    assert.equal(error.status, 403);
    assert.match(error.message, new RegExp(`: event ${event.id} created, 2 of 3 attributes added; 1 refused by MISP: bad_-domain-\\.ex ample \\((domain|hostname)\\): value: (Domain|Hostname) has an invalid format\\.`));
  });

  it('a deleted event whose UUID MISP blocklisted', async () => {
    const a = analysis();
    fake.blocklist.add(eventUuid(a.id));
    const error = await failure(push(fake, { analysis: a, items: ITEMS }), fake.key);
    assert.equal(error.status, 403);
    assert.match(error.message, /adding the event failed: HTTP 403 Forbidden: Event blocked by event blocklist\. \(MISP blocks this event: .*push with --event\)$/);
  });

  it("an event of the analysis's UUID the key cannot see", async () => {
    const a = analysis();
    const hidden = fake.seedEvent({ info: 'imported elsewhere', uuid: eventUuid(a.id), orgc_id: '7', distribution: '0' });
    const error = await failure(push(fake, { analysis: a, items: ITEMS }), fake.key);
    assert.equal(error.status, 404);
    assert.match(error.message, new RegExp(`the event of UUID ${eventUuid(a.id)} exists in MISP \\(event ${hidden.id}\\) but this key cannot see it`));
  });
});

describe('MISP push: hostile text', () => {
  let fake: MispPushFake;
  before(async () => (fake = await startMispPushFake()));
  after(() => fake.close());

  it('keeps reasons and summaries plain one-line text, cut to a length MISP keeps', async () => {
    const hostile = item('1.2.3.4', 'IPv4', 'malicious', [
      'vt: <script>alert(document.cookie)</script>flagged',
      'x: <a href="javascript:alert(1)">click</a>\n\rNew line\u0000\u001b[31m',
      `long: ${'A'.repeat(10_000)}`,
    ], [{ engine: '<b>vt</b>', summary: '<img src=x onerror=alert(1)> 54/76' }]);
    const a = analysis();
    await push(fake, { analysis: a, items: [hostile] });
    const attr = fake.event(eventUuid(a.id))!.Attribute.find((x) => x.value === '1.2.3.4')!;
    assert.ok(!/[<>]/.test(attr.comment), attr.comment.slice(0, 200));
    assert.ok(!/[\u0000-\u001f\u007f]/.test(attr.comment), 'no control characters or line breaks');
    assert.ok(attr.comment.length <= 4000);
    assert.match(attr.comment, /^oas verdict: malicious\. vt: alert\(document\.cookie\)flagged; x: click New line/);
    assert.equal(attributeComment(hostile, a), attr.comment);
  });
});
