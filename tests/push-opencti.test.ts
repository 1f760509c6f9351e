import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { HttpTransport } from '../src/http/client.js';
import {
  DESCRIPTION_MAX, addObservableDocument, addVariables, describe as describeItem, inertMarkdown, keyValue, mappingOf, observableFilter, openctiTarget, SCORES,
} from '../src/push/opencti.js';
import { PushError, type PushAnalysis, type PushObservable, type PushRequest, type TargetSettings } from '../src/push/types.js';
import { reply } from './fakes/http.js';
import { startOpenCtiPush, TOKEN, type OpenCtiPushFake } from './fakes/opencti-push.js';

const transport = new HttpTransport({});
after(() => transport.close());

const ANALYSIS_ID = '0b7f3c1e-5a2d-4e8f-9c6b-1d2e3f4a5b6c';
const analysis = (over: Partial<PushAnalysis> = {}): PushAnalysis => ({
  id: ANALYSIS_ID,
  link: `https://oas.example.org/results/${ANALYSIS_ID}`,
  created_at: '2026-03-01T10:00:00.000Z',
  tlp: 'AMBER',
  pap: 'GREEN',
  worst: 'malicious',
  total: 12,
  ...over,
});

const item = (value: string, type: PushObservable['type'], verdict: PushObservable['verdict'], over: Partial<PushObservable> = {}): PushObservable => ({
  value,
  type,
  verdict,
  reasons: verdict === 'unknown' ? [] : [`vt: ${verdict} per 12/70 engines`],
  engines: [{ engine: 'virustotal', summary: '12/70 engines flag it' }],
  ...over,
});

const MD5 = '44D88612FEA8A8F36DE82E1278ABB02F';
const SHA1 = '3395856ce81f2b7382dee72602f798b642f14140';
const SHA256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';

/** One of each type; the Chrome extension id is skipped. */
const ITEMS: PushObservable[] = [
  item('198.51.100.7', 'IPv4', 'malicious', { found_in: ['Received header 2'] }),
  item('2001:db8::7', 'IPv6', 'suspicious'),
  item('Evil.Example.COM.', 'FQDN', 'malicious'),
  item('https://phish.example.net/login?next=%2F', 'URL', 'clean'),
  item(MD5, 'MD5', 'malicious'),
  item(SHA1, 'SHA1', 'unknown'),
  item(SHA256, 'SHA256', 'suspicious'),
  item('billing@phish.example.net', 'Email', 'suspicious'),
  item('aapocclcgogkmnckokdopfmhonfmgoek', 'CHROME_EXTENSION', 'malicious'),
];
const MAPPED = ITEMS.length - 1;
const MALICIOUS = 3;

const CREDENTIAL_SOURCE = 'push.opencti.api_key or OAS_PUSH_OPENCTI_API_KEY';
const URL_SOURCE = 'push.opencti.url';

function settings(url: string, over: Partial<TargetSettings> = {}): TargetSettings {
  return {
    url,
    credential: TOKEN,
    credentialSource: CREDENTIAL_SOURCE,
    urlSource: URL_SOURCE,
    ssl_verify: true,
    timeout_ms: 3000,
    retries: 0,
    max_tlp: 'RED',
    distribution: 1,
    publish: false,
    organisation: '',
    ...over,
  };
}

function context(url: string, over: Partial<TargetSettings> = {}) {
  const s = settings(url, over);
  const http = transport.client({
    signal: AbortSignal.timeout(s.timeout_ms),
    deadline: Date.now() + s.timeout_ms,
    timeoutMs: s.timeout_ms,
    retries: s.retries,
    secrets: [s.credential],
  });
  return { settings: s, http };
}

const request = (items: PushObservable[] = ITEMS, over: Partial<PushAnalysis> = {}): PushRequest => ({ analysis: analysis(over), items });

async function pushTo(fake: OpenCtiPushFake, req: PushRequest = request(), over: Partial<TargetSettings> = {}) {
  return openctiTarget.push(req, context(fake.url, over));
}

/** The PushError a push fails with, checked to be one line without the credential. */
async function failure(promise: Promise<unknown>): Promise<PushError> {
  const error = await promise.then(() => assert.fail('the push should have failed'), (e: unknown) => e);
  assert.ok(error instanceof PushError, `a PushError, not ${String(error)}`);
  assert.equal(error.target, 'opencti');
  assert.doesNotMatch(error.message, /\n/, 'one line');
  assert.ok(!error.message.includes(TOKEN), 'no credential in the message');
  assert.match(error.message, /^OpenCTI at 127\.0\.0\.1:\d+: /);
  return error;
}

const markingId = (fake: OpenCtiPushFake, definition: string) => fake.markings.find((m) => m.definition === definition)!.id;
const observableOf = (fake: OpenCtiPushFake, entityType: string, value: string) =>
  fake.observables.find((o) => o.entity_type === entityType && (o.value === value || o.hashes.some((h) => h.hash === value)));

describe('OpenCTI target: pieces', () => {
  test('types map to OpenCTI observables; a Chrome extension id has none', () => {
    assert.deepEqual(mappingOf('IPv4'), { entityType: 'IPv4-Addr', argument: 'IPv4Addr' });
    assert.deepEqual(mappingOf('IPv6'), { entityType: 'IPv6-Addr', argument: 'IPv6Addr' });
    assert.deepEqual(mappingOf('FQDN'), { entityType: 'Domain-Name', argument: 'DomainName' });
    assert.deepEqual(mappingOf('URL'), { entityType: 'Url', argument: 'Url' });
    assert.deepEqual(mappingOf('MD5'), { entityType: 'StixFile', argument: 'StixFile', hash: 'MD5' });
    assert.deepEqual(mappingOf('SHA1'), { entityType: 'StixFile', argument: 'StixFile', hash: 'SHA-1' });
    assert.deepEqual(mappingOf('SHA256'), { entityType: 'StixFile', argument: 'StixFile', hash: 'SHA-256' });
    assert.deepEqual(mappingOf('Email'), { entityType: 'Email-Addr', argument: 'EmailAddr' });
    assert.equal(mappingOf('CHROME_EXTENSION'), undefined);
  });

  test('values as OpenCTI keys them, and the lookup filter in the OpenCTI 6 FilterGroup format', () => {
    assert.equal(keyValue({ value: 'Evil.Example.COM.', type: 'FQDN' }), 'evil.example.com');
    assert.equal(keyValue({ value: MD5, type: 'MD5' }), MD5.toLowerCase());
    assert.equal(keyValue({ value: 'https://X.example/A', type: 'URL' }), 'https://X.example/A');
    assert.deepEqual(observableFilter({ value: '198.51.100.7', type: 'IPv4' }), {
      mode: 'and', filters: [{ key: ['value'], values: ['198.51.100.7'] }], filterGroups: [],
    });
    assert.deepEqual(observableFilter({ value: SHA1, type: 'SHA1' }), {
      mode: 'and', filters: [{ key: ['hashes.SHA-1'], values: [SHA1] }], filterGroups: [],
    });
  });

  test('scores per verdict; unknown sends none', () => {
    assert.deepEqual(SCORES, { malicious: 90, suspicious: 50, clean: 10, unknown: undefined });
    const vars = addVariables(item(SHA1, 'SHA1', 'unknown'), mappingOf('SHA1')!, analysis(), ['m1'], 'r1');
    assert.equal('x_opencti_score' in vars, false);
    assert.equal(vars.createIndicator, false);
    assert.deepEqual(vars.StixFile, { hashes: [{ algorithm: 'SHA-1', hash: SHA1 }] });
    assert.deepEqual(vars.objectMarking, ['m1']);
    assert.deepEqual(vars.externalReferences, ['r1']);
    const malicious = addVariables(item('198.51.100.7', 'IPv4', 'malicious'), mappingOf('IPv4')!, analysis(), [], 'r1');
    assert.equal(malicious.x_opencti_score, 90);
    assert.equal(malicious.createIndicator, true);
    assert.deepEqual(malicious.IPv4Addr, { value: '198.51.100.7' });
  });

  test('the add mutation declares only the type\'s input argument', () => {
    const doc = addObservableDocument('DomainName');
    assert.match(doc, /\$DomainName: DomainNameAddInput/);
    assert.match(doc, /DomainName: \$DomainName/);
    assert.doesNotMatch(doc, /IPv4Addr/);
  });

  test('inert Markdown: every ASCII punctuation escaped, one line, cut', () => {
    assert.equal(inertMarkdown('[x](http://e.example)'), '\\[x\\]\\(http\\:\\/\\/e\\.example\\)');
    assert.equal(inertMarkdown('a\n# b\r\n\u2028c'), 'a \\# b c');
    assert.equal(inertMarkdown('x'.repeat(50), 10), `${'x'.repeat(9)}…`);
  });
});

describe('OpenCTI target against the fake platform', () => {
  let fake: OpenCtiPushFake;
  beforeEach(async () => {
    await fake?.close();
    fake = await startOpenCtiPush();
  });
  after(async () => fake?.close());

  test('a new push: every type made as OpenCTI expects, scored, marked, referenced; indicators for malicious ones', async () => {
    const outcome = await pushTo(fake);
    assert.equal(outcome.target, 'opencti');
    assert.equal(outcome.kind, 'observables');
    assert.equal(outcome.id, '');
    assert.equal(outcome.created, true);
    assert.equal(outcome.added, MAPPED);
    assert.equal(outcome.existing, 0);
    assert.equal(outcome.indicators, MALICIOUS);
    assert.equal(outcome.link, `${fake.url}/dashboard/observations/observables`);
    assert.equal(outcome.line,
      `OpenCTI: ${MAPPED} observables added, ${MALICIOUS} indicators, 1 Chrome extension id skipped (OpenCTI has no observable type for it) (${fake.url}/dashboard/observations/observables)`);

    // Every request authenticated and JSON, as the platform requires.
    for (const req of fake.server.requests) {
      assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
      assert.match(req.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(req.path, '/opencti/graphql');
    }

    // One external reference to the analysis.
    assert.equal(fake.references.length, 1);
    const ref = fake.references[0]!;
    assert.deepEqual({ source_name: ref.source_name, url: ref.url, external_id: ref.external_id },
      { source_name: 'oas', url: `https://oas.example.org/results/${ANALYSIS_ID}`, external_id: ANALYSIS_ID });

    const tlp = markingId(fake, 'TLP:AMBER');
    const pap = markingId(fake, 'PAP:GREEN');
    const expected: [string, string, number | null, boolean][] = [
      ['IPv4-Addr', '198.51.100.7', 90, true],
      ['IPv6-Addr', '2001:db8::7', 50, false],
      ['Domain-Name', 'evil.example.com', 90, true],
      ['Url', 'https://phish.example.net/login?next=%2F', 10, false],
      ['StixFile', MD5.toLowerCase(), 90, true],
      ['StixFile', SHA1, 50, false], // unknown: no score sent, the platform's default
      ['StixFile', SHA256, 50, false],
      ['Email-Addr', 'billing@phish.example.net', 50, false],
    ];
    assert.equal(fake.observables.length, expected.length);
    for (const [type, value, score, indicator] of expected) {
      const o = observableOf(fake, type, value);
      assert.ok(o, `${type} ${value} made`);
      assert.equal(o.x_opencti_score, score, `${value} score`);
      assert.deepEqual(o.objectMarking, [tlp, pap], `${value} marked TLP:AMBER and PAP:GREEN`);
      assert.deepEqual(o.externalReferences, [ref.id]);
      assert.equal(o.indicators.length, indicator ? 1 : 0, `${value} indicator`);
      assert.match(o.x_opencti_description ?? '', /^\*\*oas verdict: (malicious|suspicious|clean|unknown)\*\* \(analysis /);
    }
    assert.deepEqual(observableOf(fake, 'StixFile', MD5.toLowerCase())!.hashes, [{ algorithm: 'MD5', hash: MD5.toLowerCase() }]);
    assert.deepEqual(observableOf(fake, 'StixFile', SHA256)!.hashes, [{ algorithm: 'SHA-256', hash: SHA256 }]);
    const adds = fake.mutations('stixCyberObservableAdd');
    assert.equal(adds.length, MAPPED);
    assert.equal(adds.filter((c) => c.variables.createIndicator === true).length, MALICIOUS);
    assert.equal(adds.some((c) => c.variables.type === 'StixFile' && 'x_opencti_score' in c.variables && (c.variables.StixFile as { hashes: { hash: string }[] }).hashes[0]!.hash === SHA1), false);

    // The reasons, engines and places in the description (escaped Markdown).
    const ip = observableOf(fake, 'IPv4-Addr', '198.51.100.7')!;
    assert.equal(ip.x_opencti_description,
      `**oas verdict: malicious** (analysis 0b7f3c1e\\-5a2d\\-4e8f\\-9c6b\\-1d2e3f4a5b6c)\n\nReasons:\n\n- vt\\: malicious per 12\\/70 engines\n\nEngines:\n\n- virustotal: 12\\/70 engines flag it\n\nFound in:\n\n- Received header 2`);
  });

  test('pushing the same analysis twice duplicates nothing: the second push finds everything', async () => {
    await pushTo(fake);
    const observables = fake.observables.length;
    const callsBefore = fake.calls.length;
    const outcome = await pushTo(fake);
    assert.equal(outcome.created, false);
    assert.equal(outcome.added, 0);
    assert.equal(outcome.existing, MAPPED);
    assert.equal(outcome.indicators, MALICIOUS, 'the indicators the first push made are found');
    assert.match(outcome.line, /^OpenCTI: 0 observables added, 8 already there, 3 indicators, 1 Chrome extension id skipped/);
    assert.equal(fake.observables.length, observables);
    assert.equal(fake.references.length, 1);
    const second = fake.calls.slice(callsBefore);
    assert.deepEqual(second.filter((c) => c.operation === 'mutation'), [], 'no write at all the second time');
    for (const o of fake.observables) assert.ok(o.indicators.length <= 1);
  });

  test('an observable the platform already had: counted as existing, left as it was, linked to the analysis', async () => {
    const theirs = fake.seed({ entity_type: 'Domain-Name', value: 'evil.example.com', x_opencti_score: 35, x_opencti_description: 'from a feed' });
    const outcome = await pushTo(fake, request([item('evil.example.com', 'FQDN', 'malicious'), item('198.51.100.7', 'IPv4', 'suspicious')]));
    assert.equal(outcome.added, 1);
    assert.equal(outcome.existing, 1);
    assert.equal(outcome.created, true);
    assert.equal(outcome.indicators, 0, 'it had no indicator and none was made for it');
    assert.match(outcome.line, /^OpenCTI: 1 observable added, 1 already there \(1 linked to the analysis\), 0 indicators \(/);
    assert.equal(theirs.x_opencti_score, 35);
    assert.equal(theirs.x_opencti_description, 'from a feed');
    assert.deepEqual(theirs.objectMarking, []);
    assert.deepEqual(theirs.externalReferences, [fake.references[0]!.id]);
    assert.equal(fake.mutations('stixCyberObservableEdit').length, 1);
    // Again: now linked, nothing more to do.
    const again = await pushTo(fake, request([item('evil.example.com', 'FQDN', 'malicious'), item('198.51.100.7', 'IPv4', 'suspicious')]));
    assert.equal(again.existing, 2);
    assert.equal(again.line, `OpenCTI: 0 observables added, 2 already there, 0 indicators (${fake.url}/dashboard/observations/observables)`);
    assert.equal(fake.mutations('stixCyberObservableEdit').length, 1);
  });

  test('markings: AMBER+STRICT and RED as their own definitions, CLEAR; no PAP on the platform; no TLP on the analysis', async () => {
    for (const tlp of ['AMBER+STRICT', 'RED', 'CLEAR'] as const) {
      const value = `203.0.113.${tlp.length}`;
      await pushTo(fake, request([item(value, 'IPv4', 'suspicious')], { tlp, pap: 'RED' }));
      assert.deepEqual(observableOf(fake, 'IPv4-Addr', value)!.objectMarking, [markingId(fake, `TLP:${tlp}`), markingId(fake, 'PAP:RED')]);
    }
    const old = await startOpenCtiPush({ paps: false });
    try {
      const outcome = await pushTo(old, request([item('203.0.113.50', 'IPv4', 'suspicious')], { pap: 'AMBER' }));
      assert.equal(outcome.added, 1);
      assert.match(outcome.line, /; no PAP:AMBER marking in this OpenCTI: pushed without PAP$/);
      assert.deepEqual(old.observables[0]!.objectMarking, [markingId(old, 'TLP:AMBER')]);
    } finally {
      await old.close();
    }
    const unmarked = await pushTo(fake, request([item('203.0.113.60', 'IPv4', 'clean')], { tlp: undefined, pap: undefined }));
    assert.match(unmarked.line, /; no TLP marking \(the analysis has none\)$/);
    assert.deepEqual(observableOf(fake, 'IPv4-Addr', '203.0.113.60')!.objectMarking, []);
  });

  test('a TLP marking the platform lacks fails the push before anything is written', async () => {
    fake.markings.splice(fake.markings.findIndex((m) => m.definition === 'TLP:AMBER+STRICT'), 1);
    const error = await failure(pushTo(fake, request(ITEMS, { tlp: 'AMBER+STRICT' })));
    assert.match(error.message, /: no marking definition TLP:AMBER\+STRICT visible to the key's user/);
    assert.match(error.message, /\(create it in OpenCTI .* push\.opencti\.api_key or OAS_PUSH_OPENCTI_API_KEY\)$/);
    assert.deepEqual(fake.mutations(), []);
    assert.deepEqual(fake.observables, []);
  });

  test('a relative link (no public_url): the reference is the analysis id under source "oas", found again the next time', async () => {
    const req = request([item('198.51.100.9', 'IPv4', 'malicious')], { link: `/results/${ANALYSIS_ID}` });
    await pushTo(fake, req);
    assert.equal(fake.references.length, 1);
    assert.deepEqual({ ...fake.references[0]!, id: '', standard_id: '' },
      { id: '', standard_id: '', source_name: 'oas', url: null, external_id: ANALYSIS_ID, description: `oas analysis ${ANALYSIS_ID}` });
    const again = await pushTo(fake, req);
    assert.equal(again.existing, 1);
    assert.equal(fake.references.length, 1);
    assert.equal(fake.mutations('externalReferenceAdd').length, 1);
  });

  test('an empty list: nothing asked, nothing made; only Chrome extension ids: said so', async () => {
    const outcome = await pushTo(fake, request([]));
    assert.deepEqual(outcome, {
      target: 'opencti', kind: 'observables', id: '', created: false, added: 0, existing: 0, indicators: 0,
      line: 'OpenCTI: nothing to push (no observable selected)',
    });
    const chrome = await pushTo(fake, request([item('aapocclcgogkmnckokdopfmhonfmgoek', 'CHROME_EXTENSION', 'malicious')]));
    assert.equal(chrome.line, 'OpenCTI: nothing pushed: 1 Chrome extension id skipped (OpenCTI has no observable type for it)');
    assert.equal(fake.server.requests.length, 0);
  });

  test('hostile reasons, summaries and places stay inert text in the Markdown description', async () => {
    const hostile = [
      '[click me](https://evil.example/steal?c=1)',
      '![pixel](http://evil.example/p.png)',
      '<script>alert(1)</script><img src=x onerror=alert(2)>',
      '**bold** _em_ `code` ~~strike~~',
      'line one\n# Heading\n\n- injected item\r\n> quote',
      'visit www.evil.example or mail ceo@evil.example, https://evil.example/x',
      '&lt;b&gt; &#x3C;',
      '| a | b |\n|---|---|',
    ];
    await pushTo(fake, request([item('198.51.100.66', 'IPv4', 'malicious', {
      reasons: hostile,
      engines: [{ engine: 'evil](javascript:alert(1))', summary: '[x](javascript:alert(1)) <b>' }],
      found_in: ['<iframe src="https://evil.example">'],
    })]));
    const description = observableOf(fake, 'IPv4-Addr', '198.51.100.66')!.x_opencti_description!;
    // Lines: our own structure only; upstream text never opens a line of its own.
    const lines = description.split('\n');
    assert.deepEqual(lines.filter((l) => l !== '' && !l.startsWith('- ')), [
      '**oas verdict: malicious** (analysis 0b7f3c1e\\-5a2d\\-4e8f\\-9c6b\\-1d2e3f4a5b6c)', 'Reasons:', 'Engines:', 'Found in:',
    ]);
    const upstream = lines.filter((l) => l.startsWith('- ')).map((l) => l.slice(2));
    assert.equal(upstream.length, hostile.length + 2);
    for (const text of upstream) {
      // Every ASCII punctuation character is escaped: no link, image, HTML, entity, emphasis or autolink can form.
      // (The engine line's own `engine: summary` separator is ours.)
      const bare = text.replace(/(?<!\\): /, ' ').replace(/\\[!-/:-@[-`{-~]/g, '');
      assert.doesNotMatch(bare, /[!-/:-@[-`{-~]/, `unescaped punctuation in ${text}`);
      assert.doesNotMatch(text, /https?:\/\//);
      assert.doesNotMatch(text, /www\./);
    }
    // The text itself is kept: unescaped, each reason reads as sent (white space flattened).
    const unescape = (s: string) => s.replace(/\\([!-/:-@[-`{-~])/g, '$1');
    assert.equal(unescape(upstream[0]!), hostile[0]);
    assert.equal(unescape(upstream[4]!), 'line one # Heading - injected item > quote');
  });

  test('long reasons are cut, and the description stays within its limit', async () => {
    const reasons = Array.from({ length: 60 }, (_, i) => `${i}: ${'x'.repeat(2000)}`);
    await pushTo(fake, request([item('198.51.100.77', 'IPv4', 'suspicious', { reasons })]));
    const description = observableOf(fake, 'IPv4-Addr', '198.51.100.77')!.x_opencti_description!;
    assert.ok(description.length <= DESCRIPTION_MAX, `${description.length} characters`);
    assert.match(description, /\n- … \d+ more lines left out$/);
    assert.ok(description.split('\n').every((line) => line.length < 1100));
    assert.equal(describeItem(item('x', 'IPv4', 'clean', { reasons: ['short'], engines: [] }), analysis()),
      '**oas verdict: clean** (analysis 0b7f3c1e\\-5a2d\\-4e8f\\-9c6b\\-1d2e3f4a5b6c)\n\nReasons:\n\n- short');
  });

  test('a token OpenCTI does not know: AUTH_REQUIRED in a 200 answer is a refused key', async () => {
    const error = await failure(pushTo(fake, request(), { credential: 'octi-wrong-token-0000' }));
    assert.equal(error.message.replace(/127\.0\.0\.1:\d+/, 'HOST'),
      `OpenCTI at HOST: looking up the marking definitions: AUTH_REQUIRED: You must be logged in to do this. (key refused: check ${CREDENTIAL_SOURCE})`);
    assert.equal(error.status, 401);
    assert.ok(!error.message.includes('octi-wrong-token-0000'));
  });

  test('a read-only token: FORBIDDEN_ACCESS on the first write is a refused key, nothing made', async () => {
    fake.readOnly = true;
    const error = await failure(pushTo(fake));
    assert.equal(error.message.replace(/127\.0\.0\.1:\d+/, 'HOST'),
      'OpenCTI at HOST: creating the external reference: FORBIDDEN_ACCESS: You are not allowed to do this.; the key\'s user may read but not write '
      + `(a read-only key: it needs the capability "Create / Update knowledge") (key refused: check ${CREDENTIAL_SOURCE})`);
    assert.equal(error.status, 403);
    assert.deepEqual(fake.observables, []);
    assert.deepEqual(fake.references, []);
  });

  test('read-only with everything already there: nothing to write, so the push succeeds', async () => {
    await pushTo(fake);
    fake.readOnly = true;
    const outcome = await pushTo(fake);
    assert.equal(outcome.existing, MAPPED);
  });

  test('an HTTP 401 or 403 (a proxy in front, or an older platform) is a refused key too', async () => {
    fake.failWith(reply.status(401, { errors: [{ message: 'Unauthorized' }] }));
    const e401 = await failure(pushTo(fake));
    assert.match(e401.message, /: looking up the marking definitions: HTTP 401 Unauthorized: Unauthorized \(key refused: check push\.opencti\.api_key or OAS_PUSH_OPENCTI_API_KEY\)$/);
    assert.equal(e401.status, 401);
    fake.failWith(reply.status(403, { error: 'forbidden' }));
    const e403 = await failure(pushTo(fake));
    assert.match(e403.message, /: HTTP 403 Forbidden \(key refused: check push\.opencti\.api_key or OAS_PUSH_OPENCTI_API_KEY\)$/);
  });

  test('no GraphQL API at the URL: HTTP 404, check the URL setting', async () => {
    const error = await failure(openctiTarget.push(request(), context(`${fake.server.url}/not-opencti`)));
    assert.match(error.message, /: looking up the marking definitions: HTTP 404 Not Found: no GraphQL API at \/not-opencti\/graphql \(check push\.opencti\.url: the platform's base URL\)$/);
    assert.equal(error.status, 404);
  });

  test('a 5xx after the retries: the status, is OpenCTI up', async () => {
    fake.failWith(reply.status(502, { error: 'bad gateway' }));
    const error = await failure(pushTo(fake, request(), { retries: 1 }));
    assert.match(error.message, /: looking up the marking definitions: HTTP 502 Bad Gateway \(is OpenCTI up\? check push\.opencti\.url\)$/);
    assert.equal(error.status, 502);
    assert.equal(fake.server.requests.length, 2, 'retried once');
  });

  test('a platform that never answers: the timeout, check the URL', async () => {
    fake.failWith(reply.hang());
    const error = await failure(pushTo(fake, request(), { timeout_ms: 400 }));
    assert.match(error.message, /: looking up the marking definitions: timeout after 400 ms waiting for 127\.0\.0\.1:\d+ \(check push\.opencti\.url\)$/);
  });

  test('nothing listening: connection refused, check the URL', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const error = await failure(openctiTarget.push(request(), context(`http://127.0.0.1:${port}`)));
    assert.match(error.message, /: looking up the marking definitions: connection refused by 127\.0\.0\.1:\d+ \(check push\.opencti\.url\)$/);
  });

  test('an answer that is no JSON, or JSON of another shape: a clean error', async () => {
    fake.failWith(reply.malformed());
    const bad = await failure(pushTo(fake));
    assert.match(bad.message, /: looking up the marking definitions: HTTP 200: the answer is no GraphQL JSON \(is it OpenCTI\? check push\.opencti\.url\)$/);
    fake.failWith(reply.html('<html>login</html>'));
    await failure(pushTo(fake));
    fake.failWith(reply.json({ data: { markingDefinitions: { edges: [{ node: { id: 42 } }] } } }));
    const shape = await failure(pushTo(fake));
    assert.match(shape.message, /: looking up the marking definitions: unexpected answer from upstream at data\.markingDefinitions\.edges\.0\.node\.id: .* \(is it OpenCTI 6\? check push\.opencti\.url\)$/);
    fake.failWith(reply.json({ data: null }));
    const empty = await failure(pushTo(fake));
    assert.match(empty.message, /: the answer has no data /);
  });

  test('a failure midway says what was already made', async () => {
    fake.failWith(reply.status(500, { errors: [{ message: 'boom' }] }), { field: 'stixCyberObservableAdd', skip: 2 });
    const error = await failure(pushTo(fake));
    assert.match(error.message,
      /^OpenCTI at 127\.0\.0\.1:\d+: external reference created, 2 of 8 observables done \(2 observables added\), then creating the Domain-Name Evil\.Example\.COM\.: HTTP 500 Internal Server Error \(is OpenCTI up\? check push\.opencti\.url\)$/);
    assert.equal(error.status, 500);
    assert.equal(fake.observables.length, 2);
    // The next push completes what is missing.
    fake.heal();
    const outcome = await pushTo(fake);
    assert.equal(outcome.added, MAPPED - 2);
    assert.equal(outcome.existing, 2);
    assert.equal(fake.references.length, 1);
  });

  test('an error OpenCTI gives inside a 200 answer is reported with its code', async () => {
    fake.failWith(reply.json({
      errors: [{ message: 'Element(s) not found', path: ['stixCyberObservableAdd'], extensions: { code: 'MISSING_REFERENCE_ERROR', data: { http_status: 404, genre: 'BUSINESS' } } }],
      data: { stixCyberObservableAdd: null },
    }), { field: 'stixCyberObservableAdd' });
    const error = await failure(pushTo(fake));
    assert.match(error.message, /external reference created, 0 of 8 observables done \(0 observables added\), then creating the IPv4-Addr 198\.51\.100\.7: MISSING_REFERENCE_ERROR: Element\(s\) not found \(is it OpenCTI 6\? check push\.opencti\.url\)$/);
  });

  test('a platform without the OpenCTI 6 FilterGroup (5.x): its validation error, and what to check', async () => {
    fake.failWith(reply.json({ errors: [{ message: 'Variable "$filters" of type "FilterGroup" used in position expecting type "[MarkingDefinitionsFiltering]".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }, 400));
    const error = await failure(pushTo(fake));
    assert.match(error.message, /: looking up the marking definitions: GRAPHQL_VALIDATION_FAILED: Variable "\$filters" of type "FilterGroup" .* \(is it OpenCTI 6\? check push\.opencti\.url\)$/);
    assert.equal(error.status, 400);
  });

  test('an upstream message holding the token is redacted', async () => {
    fake.failWith(reply.json({ errors: [{ message: `token ${TOKEN} is invalid`, extensions: { code: 'AUTH_REQUIRED' } }], data: null }));
    const error = await failure(pushTo(fake));
    assert.match(error.message, /key refused/);
  });
});

describe('the fake checks requests as OpenCTI does', () => {
  let fake: OpenCtiPushFake;
  before(async () => { fake = await startOpenCtiPush(); });
  after(async () => fake.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: await r.json() as { errors?: { extensions: { code: string }; message: string }[]; data?: unknown } }));

  test('the OpenCTI 5 filter format, a wrong variable type, an unknown field or a bad enum are refused', async () => {
    const old = await post({ query: 'query Q($filters: [StixCyberObservablesFiltering]) { stixCyberObservables(filters: $filters) { edges { node { id } } } }', variables: {} });
    assert.equal(old.status, 400);
    assert.equal(old.json.errors![0]!.extensions.code, 'GRAPHQL_VALIDATION_FAILED');
    const mode = await post({ query: 'query Q($filters: FilterGroup) { stixCyberObservables(filters: $filters) { edges { node { id } } } }', variables: { filters: { mode: 'AND', filters: [], filterGroups: [] } } });
    assert.equal(mode.status, 400);
    assert.equal(mode.json.errors![0]!.extensions.code, 'BAD_USER_INPUT');
    const missing = await post({ query: 'query Q($filters: FilterGroup) { stixCyberObservables(filters: $filters) { edges { node { id } } } }', variables: { filters: { mode: 'and', filters: [] } } });
    assert.equal(missing.status, 400);
    const input = await post({ query: addObservableDocument('IPv4Addr'), variables: { type: 'IPv4-Addr', IPv4Addr: { value: '198.51.100.1', bogus: 1 } } });
    assert.equal(input.status, 400);
    assert.match(input.json.errors![0]!.message, /Field "bogus" is not defined by type "IPv4AddrAddInput"/);
  });

  test('no JSON content type, or no token: refused as the platform refuses', async () => {
    const plain = await post('{"query":"query { x }"}', { 'content-type': 'text/plain' });
    assert.equal(plain.status, 400);
    const noToken = await post({ query: 'query Q($first: Int) { markingDefinitions(first: $first) { edges { node { id } } } }', variables: { first: 1 } }, { authorization: 'Bearer nope' });
    assert.equal(noToken.status, 200);
    assert.equal(noToken.json.errors![0]!.extensions.code, 'AUTH_REQUIRED');
    assert.equal(noToken.json.data, null);
  });

  test('a value not of its type, or an unknown marking, is refused', async () => {
    const ip = await post({ query: addObservableDocument('IPv4Addr'), variables: { type: 'IPv4-Addr', IPv4Addr: { value: 'not-an-ip' } } });
    assert.equal(ip.json.errors![0]!.extensions.code, 'FUNCTIONAL_ERROR');
    const marking = await post({ query: addObservableDocument('IPv4Addr'), variables: { type: 'IPv4-Addr', objectMarking: ['nope'], IPv4Addr: { value: '198.51.100.1' } } });
    assert.equal(marking.json.errors![0]!.extensions.code, 'MISSING_REFERENCE_ERROR');
    assert.equal(fake.observables.length, 0);
  });
});
