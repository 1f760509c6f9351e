import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { publicDnsLookup, publicDnsOlderLookup, type PublicDnsResult } from '../../engines/google_dns.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { Zone } from '../fakes/dns.js';
import { dohHandler } from '../fakes/doh.js';
import { reply, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

/** 2001:db8::1 under ip6.arpa, written out by hand so the test does not trust the code it checks. */
const V6_PTR = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';

const zone: Zone = {
  'example.com': {
    A: ['93.184.215.14', '93.184.215.15'],
    AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    MX: ['10 mx1.example.com', '20 mx2.example.com'],
    TXT: ['google-site-verification=abc', 'v=spf1 include:_spf.example.net -all'],
    NS: ['a.iana-servers.net', 'b.iana-servers.net'],
    SOA: 'ns.icann.org noc.dns.icann.org 2024 7200 3600 1209600 3600',
  },
  '_dmarc.example.com': { TXT: ['v=DMARC1; p=reject; sp=reject'] },
  'www.example.com': { CNAME: 'example.com' },
  'split.example.org': { A: ['192.0.2.7'], TXT: [['v=spf1 ip4:192.0.2.0/24 ', 'include:_spf.example.net -all']] },
  '4.3.2.1.in-addr.arpa': { PTR: ['one.example.net'] },
  // The reference asked for the octets unreversed: answering that name would hide the bug.
  '1.2.3.4.in-addr.arpa': { PTR: ['wrong-name.example.net'] },
  [V6_PTR]: { PTR: ['v6.example.net'] },
  'broken.example': { A: ['192.0.2.1'] },
};

/** What example.com must give, field by field (dns.google formats in, cleaned data out). */
const EXAMPLE_COM = [
  { name: 'example.com.', type: 1, TTL: 300, data: '93.184.215.14', type_name: 'A' },
  { name: 'example.com.', type: 1, TTL: 300, data: '93.184.215.15', type_name: 'A' },
  { name: 'example.com.', type: 28, TTL: 300, data: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', type_name: 'AAAA' },
  { name: 'example.com.', type: 15, TTL: 3600, data: 'mx1.example.com', type_name: 'MX' },
  { name: 'example.com.', type: 15, TTL: 3600, data: 'mx2.example.com', type_name: 'MX' },
  { name: 'example.com.', type: 16, TTL: 3600, data: 'google-site-verification=abc', type_name: 'TXT' },
  { name: 'example.com.', type: 2, TTL: 21600, data: 'a.iana-servers.net', type_name: 'NS' },
  { name: 'example.com.', type: 2, TTL: 21600, data: 'b.iana-servers.net', type_name: 'NS' },
  { name: 'example.com.', type: 6, TTL: 3600, data: 'ns.icann.org. noc.dns.icann.org. 2024 7200 3600 1209600 3600', type_name: 'SOA' },
  { type_name: 'SPF', data: 'v=spf1 include:_spf.example.net -all' },
  { type_name: 'DMARC', data: 'v=DMARC1;p=reject;sp=reject' },
];

/** Every fake and harness started here, closed in `after`. */
const closers: (() => Promise<void>)[] = [];

/** A DoH fake answering with `route` on /resolve, and a harness pointed at it. */
async function setup(route: FakeRoute = dohHandler(zone), settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ 'GET /resolve': route });
  const harness = engineHarness(engine, { settings: { base_url: `${fake.url}/resolve`, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}

/** Asserts a rejection with a one-line message matching `pattern`. */

/** `name type` of every request the fake saw, sorted (the queries run concurrently). */
function asked(fake: FakeHttpServer): string[] {
  return fake.requests.map((r) => `${r.query.get('name')} ${r.query.get('type')}`).sort();
}

after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('public_dns declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'public_dns');
    assert.equal(engine.service, 'google_dns');
    assert.equal(engine.label, 'Public DNS (DoH)');
    assert.deepEqual(engine.tags, ['IP', 'domain', 'URL'], 'the spec\'s tags');
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL']);
    assert.deepEqual(engine.defaults, { timeout_ms: 8000, base_url: 'https://dns.google/resolve' });
    assert.equal(engine.pivot, false);
    assert.equal(engine.run, publicDnsLookup);
  });
});

describe('public_dns: domains', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup());
  });

  test('full record set, SPF from the TXT answer, DMARC from _dmarc', async () => {
    fake.reset();
    const result = await harness.run('example.com', 'FQDN') as PublicDnsResult;
    assert.deepEqual(result, { Answer: EXAMPLE_COM });
    assert.equal(engine.summary(result), '2 A, 1 AAAA, 2 MX, 1 TXT, 2 NS, SPF, DMARC');
  });

  test('details: one line per record type, SPF and DMARC apart, the name on dns.google', () => {
    assert.deepEqual(engine.details!({ Answer: EXAMPLE_COM } as PublicDnsResult, 'https://Example.com:8443/login'), [
      { label: 'A', value: '93.184.215.14, 93.184.215.15' },
      { label: 'AAAA', value: '2606:2800:21f:cb07:6820:80da:af6b:8b2c' },
      { label: 'MX', value: 'mx1.example.com, mx2.example.com' },
      { label: 'NS', value: 'a.iana-servers.net, b.iana-servers.net' },
      { label: 'SPF', value: 'v=spf1 include:_spf.example.net -all' },
      { label: 'DMARC', value: 'v=DMARC1;p=reject;sp=reject' },
      { label: 'TXT', value: 'google-site-verification=abc' },
      { label: 'SOA', value: 'ns.icann.org. noc.dns.icann.org. 2024 7200 3600 1209600 3600' },
      { label: 'Google Public DNS', value: 'https://dns.google/query?name=example.com', href: 'https://dns.google/query?name=example.com' },
    ]);
    const ptr = {
      Status: 0, TC: false, RD: true, RA: true, AD: false, CD: false,
      Question: [{ name: '4.3.2.1.in-addr.arpa.', type: 12 }],
      Answer: [{ name: '4.3.2.1.in-addr.arpa.', type: 12, TTL: 21600, data: 'one.example.net.', type_name: 'PTR' }],
    };
    assert.deepEqual(engine.details!(ptr, '1.2.3.4'), [
      { label: 'PTR names', value: 'one.example.net' },
      {
        label: 'Google Public DNS',
        value: 'https://dns.google/query?name=4.3.2.1.in-addr.arpa&rr_type=PTR',
        href: 'https://dns.google/query?name=4.3.2.1.in-addr.arpa&rr_type=PTR',
      },
    ]);
    assert.deepEqual(engine.details!({ Answer: [] }, 'gone.example.'), [
      { label: 'Records', value: 'none' },
      { label: 'Google Public DNS', value: 'https://dns.google/query?name=gone.example', href: 'https://dns.google/query?name=gone.example' },
    ]);
  });

  test('one request per record type, no second TXT request for SPF', async () => {
    fake.reset();
    await harness.run('example.com', 'FQDN');
    assert.deepEqual(asked(fake), [
      '_dmarc.example.com TXT',
      'example.com A',
      'example.com AAAA',
      'example.com CNAME',
      'example.com MX',
      'example.com NS',
      'example.com SOA',
      'example.com TXT',
    ]);
    for (const request of fake.requests) assert.equal(request.headers.accept, 'application/dns-json');
  });

  // Better than the reference, which labelled each answer with the type it had asked for: the
  // CNAME met while asking for A was listed as "A", again as "AAAA", "MX"... once per query.
  test('a CNAME is labelled CNAME and listed once, whatever query returned it', async () => {
    const result = await harness.run('www.example.com', 'FQDN') as { Answer: { type?: number; type_name: string; data: string }[] };
    const cnames = result.Answer.filter((record) => record.type === 5);
    assert.deepEqual(cnames, [{ name: 'www.example.com.', type: 5, TTL: 300, data: 'example.com', type_name: 'CNAME' }]);
    const names: Record<number, string> = { 1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 15: 'MX', 16: 'TXT', 28: 'AAAA' };
    for (const record of result.Answer) {
      if (record.type !== undefined) assert.equal(record.type_name, names[record.type], JSON.stringify(record));
    }
    // The target's records follow the alias; no DMARC at _dmarc.www.example.com.
    assert.deepEqual(result.Answer.map((record) => record.type_name), [
      'CNAME', 'A', 'A', 'AAAA', 'MX', 'MX', 'TXT', 'NS', 'NS', 'SOA', 'SPF',
    ]);
  });

  test('identical records from several answers are listed once', async () => {
    // Every answer repeats the same A record (some resolvers add glue/extra data this way).
    const repeat: FakeRoute = (req) => ({
      json: {
        Status: 0, TC: false, RD: true, RA: true, AD: false, CD: false,
        Question: [{ name: `${req.query.get('name')}.`, type: 1 }],
        Answer: [
          { name: 'dup.example.', type: 1, TTL: 300, data: '192.0.2.1' },
          { name: 'DUP.example.', type: 1, TTL: 120, data: '192.0.2.1' },
        ],
      },
    });
    const { harness: dupHarness } = await setup(repeat);
    assert.deepEqual(await dupHarness.run('dup.example', 'FQDN'), {
      Answer: [{ name: 'dup.example.', type: 1, TTL: 300, data: '192.0.2.1', type_name: 'A' }],
    });
  });

  test('URL: its host is looked up', async () => {
    fake.reset();
    const result = await harness.run('https://example.com:8443/a/b?c=d', 'URL');
    assert.deepEqual(result, { Answer: EXAMPLE_COM });
    assert.ok(fake.requests.every((r) => r.query.get('name')!.endsWith('example.com')));
  });

  test('non-existent domain (NXDOMAIN): empty Answer', async () => {
    const result = await harness.run('no-such-name.example.com', 'FQDN') as PublicDnsResult;
    assert.deepEqual(result, { Answer: [] });
    assert.equal(engine.summary(result), 'no records');
  });

  test('SERVFAIL on a record query: an error naming it', async () => {
    const { harness: failing } = await setup(dohHandler(zone, { servfail: ['broken.example'] }));
    await rejectsWith(failing.run('broken.example', 'FQDN'), /^DNS server failure \(SERVFAIL\)$/);
  });

  test('TXT quoted as character-strings (Cloudflare style): unquoted and joined', async () => {
    const { harness: quoted } = await setup(dohHandler(zone, { quotedTxt: true }));
    const result = await quoted.run('split.example.org', 'FQDN') as PublicDnsResult;
    assert.deepEqual(result.Answer.at(-1), { type_name: 'SPF', data: 'v=spf1 ip4:192.0.2.0/24 include:_spf.example.net -all' });
  });
});

describe('public_dns: IPs', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup());
  });

  test('IPv4: PTR under the reversed octets, upstream JSON with type_name', async () => {
    fake.reset();
    const result = await harness.run('1.2.3.4', 'IPv4') as PublicDnsResult;
    assert.deepEqual(asked(fake), ['4.3.2.1.in-addr.arpa PTR']);
    assert.deepEqual(result, {
      Status: 0, TC: false, RD: true, RA: true, AD: false, CD: false,
      Question: [{ name: '4.3.2.1.in-addr.arpa.', type: 12 }],
      Answer: [{ name: '4.3.2.1.in-addr.arpa.', type: 12, TTL: 21600, data: 'one.example.net.', type_name: 'PTR' }],
    });
    assert.equal(engine.summary(result), 'PTR one.example.net');
  });

  test('IPv6: PTR under the nibble name in ip6.arpa', async () => {
    fake.reset();
    const result = await harness.run('2001:db8::1', 'IPv6') as PublicDnsResult;
    assert.deepEqual(asked(fake), [`${V6_PTR} PTR`]);
    assert.equal(engine.summary(result), 'PTR v6.example.net');
  });

  test('URL with an IP literal: PTR of the address', async () => {
    fake.reset();
    await harness.run('http://1.2.3.4:8080/x', 'URL');
    assert.deepEqual(asked(fake), ['4.3.2.1.in-addr.arpa PTR']);
  });

  test('no PTR record: the upstream answer with an empty Answer', async () => {
    const result = await harness.run('198.51.100.7', 'IPv4') as PublicDnsResult;
    assert.deepEqual(result, {
      Status: 3, TC: false, RD: true, RA: true, AD: false, CD: false,
      Question: [{ name: '7.100.51.198.in-addr.arpa.', type: 12 }],
      Answer: [],
    });
    assert.equal(engine.summary(result), 'no PTR record');
  });
});

describe('public_dns older catalog: A, AAAA, CNAME, NS, MX, TXT, PTR', () => {
  const older = new Catalog([engine], 'older').find('public_dns')!;
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    fake = await startFakeHttp({ 'GET /resolve': dohHandler(zone) });
    harness = engineHarness(older, { settings: { base_url: `${fake.url}/resolve` } });
    closers.push(() => harness.close(), () => fake.close());
  });

  test('main definition unchanged: SPF and DMARC in its description and its lookup', () => {
    assert.equal(new Catalog([engine]).find('google_dns'), engine);
    assert.match(engine.description, /TXT \(with SPF and DMARC\)/);
    assert.equal(engine.run, publicDnsLookup);
  });

  test('older definition: its own description and lookup; tags, types, settings as main', () => {
    assert.equal(older.run, publicDnsOlderLookup);
    assert.equal(older.description, 'A, AAAA, CNAME, NS, MX and TXT of a domain, or PTR of an IP, from a public DNS-over-HTTPS resolver');
    assert.doesNotMatch(older.description, /SPF|DMARC|SOA/);
    assert.deepEqual(older.tags, engine.tags);
    assert.deepEqual(older.types, engine.types);
    assert.deepEqual(older.defaults, engine.defaults);
    assert.equal(older.cacheScope, 'older');
  });

  test('a domain: the older record set in its order, SPF left among the TXT records, no DMARC', async () => {
    fake.reset();
    const result = await harness.run('example.com', 'FQDN') as PublicDnsResult;
    assert.deepEqual(result, {
      Answer: [
        { name: 'example.com.', type: 1, TTL: 300, data: '93.184.215.14', type_name: 'A' },
        { name: 'example.com.', type: 1, TTL: 300, data: '93.184.215.15', type_name: 'A' },
        { name: 'example.com.', type: 28, TTL: 300, data: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', type_name: 'AAAA' },
        { name: 'example.com.', type: 2, TTL: 21600, data: 'a.iana-servers.net', type_name: 'NS' },
        { name: 'example.com.', type: 2, TTL: 21600, data: 'b.iana-servers.net', type_name: 'NS' },
        { name: 'example.com.', type: 15, TTL: 3600, data: 'mx1.example.com', type_name: 'MX' },
        { name: 'example.com.', type: 15, TTL: 3600, data: 'mx2.example.com', type_name: 'MX' },
        { name: 'example.com.', type: 16, TTL: 3600, data: 'google-site-verification=abc', type_name: 'TXT' },
        { name: 'example.com.', type: 16, TTL: 3600, data: 'v=spf1 include:_spf.example.net -all', type_name: 'TXT' },
      ],
    });
    assert.equal(engine.summary(result), '2 A, 1 AAAA, 2 NS, 2 MX, 2 TXT');
    assert.deepEqual(asked(fake), [
      'example.com A',
      'example.com AAAA',
      'example.com CNAME',
      'example.com MX',
      'example.com NS',
      'example.com TXT',
    ]);
  });

  test('an IP: PTR, as in the main catalog', async () => {
    fake.reset();
    const result = await harness.run('1.2.3.4', 'IPv4') as { Answer: { data: string; type_name: string }[] };
    assert.deepEqual(result.Answer.map((record) => [record.type_name, record.data]), [['PTR', 'one.example.net.']]);
    assert.deepEqual(asked(fake), ['4.3.2.1.in-addr.arpa PTR']);
  });
});

describe('public_dns: minimal and degenerate answers', () => {
  /** A fake answering every question with `answer(name, type)`. */
  function answering(answer: (name: string, type: string) => unknown): FakeRoute {
    return (req) => reply.json(answer(req.query.get('name')!, req.query.get('type')!));
  }

  test('IP: an answer of records only (no Status, flags or Question): read with the defaults', async () => {
    const { harness } = await setup(answering(() => ({ Answer: [{ type: 12, data: 'one.example.net.' }] })));
    const result = await harness.run('1.2.3.4', 'IPv4') as PublicDnsResult;
    assert.deepEqual(result, {
      Status: 0, TC: false, RD: false, RA: false, AD: false, CD: false,
      Question: [],
      Answer: [{ name: null, type: 12, TTL: null, data: 'one.example.net.', type_name: 'PTR' }],
    });
    assert.equal(engine.summary(result), 'PTR one.example.net');
    assert.deepEqual(engine.details!(result, '1.2.3.4'), [{ label: 'PTR names', value: 'one.example.net' }]);
  });

  test('IP: flags as 0/1/""/null, null lists, one record for a list, null records', async () => {
    const { harness } = await setup(answering((name) => ({
      Status: '', TC: 0, RD: 1, RA: 'true', AD: '', CD: null,
      Question: { name: `${name}.`, type: '12' },
      Answer: [null, { name: `${name}.`, type: 12, TTL: '60', data: 'one.example.net.' }],
    })));
    assert.deepEqual(await harness.run('1.2.3.4', 'IPv4'), {
      Status: 0, TC: false, RD: true, RA: true, AD: false, CD: false,
      Question: [{ name: '4.3.2.1.in-addr.arpa.', type: 12 }],
      Answer: [{ name: '4.3.2.1.in-addr.arpa.', type: 12, TTL: 60, data: 'one.example.net.', type_name: 'PTR' }],
    });
    const empty = await setup(answering(() => ({ Status: 3, Question: null, Answer: null })));
    assert.deepEqual(await empty.harness.run('1.2.3.4', 'IPv4'), {
      Status: 3, TC: false, RD: false, RA: false, AD: false, CD: false, Question: [], Answer: [],
    });
  });

  test('domain: minimal answers ({} for no record), one record for a list, no name or TTL', async () => {
    const { harness } = await setup(answering((name, type) => {
      if (name === 'example.com' && type === 'A') return { Answer: { type: 1, data: '192.0.2.1' } };
      if (name === 'example.com' && type === 'TXT') return { Answer: [{ name: 'example.com.', type: 16, data: 'v=spf1 -all' }, null] };
      if (name === 'example.com' && type === 'MX') return { Status: 0, Answer: [{ type: 15, TTL: 60, data: '10 mx.example.com.' }] };
      if (name === '_dmarc.example.com') return { Answer: { type: 16, data: 'v=DMARC1; p=none' } };
      return {};
    }));
    assert.deepEqual(await harness.run('example.com', 'FQDN'), {
      Answer: [
        { name: null, type: 1, TTL: null, data: '192.0.2.1', type_name: 'A' },
        { name: null, type: 15, TTL: 60, data: 'mx.example.com', type_name: 'MX' },
        { type_name: 'SPF', data: 'v=spf1 -all' },
        { type_name: 'DMARC', data: 'v=DMARC1;p=none' },
      ],
    });
  });

  test('a Status other than NOERROR/NXDOMAIN, even as a string, is still an error', async () => {
    const { harness } = await setup(answering(() => ({ Status: '2' })), { retries: 0 });
    await rejectsWith(harness.run('1.2.3.4', 'IPv4'), /^DNS server failure \(SERVFAIL\)$/);
  });
});

describe('public_dns: upstream failures', () => {
  test('HTTP 500: the error, not an empty result', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then 200: succeeds after the wait', async () => {
    // The first request of each question is rate-limited; its retry is answered.
    const seen = new Set<string>();
    const doh = dohHandler(zone);
    const limited: FakeRoute = (req) => {
      const key = `${req.query.get('name')} ${req.query.get('type')}`;
      if (seen.has(key)) return doh(req);
      seen.add(key);
      return reply.tooMany(1);
    };
    const { fake, harness } = await setup(limited);
    const started = Date.now();
    assert.deepEqual(await harness.run('example.com', 'FQDN'), { Answer: EXAMPLE_COM });
    assert.ok(Date.now() - started >= 900, 'waited as asked');
    assert.equal(fake.requests.length, 16);
  });

  test('malformed JSON: a clean error naming it', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('example.com', 'FQDN'), /malformed JSON/);
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    // Issue 26: missing flags (TC...) are read as false; the record that cannot be read is named.
    const { harness } = await setup(reply.json({ Status: 0, Answer: 'nope' }));
    await rejectsWith(harness.run('1.2.3.4', 'IPv4'), /^unexpected answer from upstream at Answer\.0: /);
    const list = await setup(reply.json([]));
    await rejectsWith(list.harness.run('1.2.3.4', 'IPv4'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
    const noData = await setup(reply.json({ Answer: [{ name: 'x.', type: 12, TTL: 5 }] }));
    await rejectsWith(noData.harness.run('1.2.3.4', 'IPv4'), /^unexpected answer from upstream at Answer\.0\.data: /);
  });

  test('an upstream that hangs: timeout within the call budget', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300 });
    const started = Date.now();
    await rejectsWith(harness.run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
    assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
  });

  test('failure of the _dmarc query only drops DMARC', async () => {
    const doh = dohHandler(zone);
    const { harness } = await setup((req) => (req.query.get('name')!.startsWith('_dmarc.') ? reply.status(500) : doh(req)), { retries: 0 });
    assert.deepEqual(await harness.run('example.com', 'FQDN'), {
      Answer: EXAMPLE_COM.filter((record) => record.type_name !== 'DMARC'),
    });
  });
});
