import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import engine, { abusixLookup, abusixQueryName, type AbusixResult } from '../../engines/abusix.js';
import { startFakeDns, type FakeDnsServer, type Zone } from '../fakes/dns.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';

/** Query names written out by hand (engines.md 5.1), so the test does not trust the code it checks. */
const CLOUDFLARE = '1.1.1.1.abuse-contacts.abusix.zone';
const GOOGLE = '8.8.8.8.abuse-contacts.abusix.zone';
const GOOGLE_V6 = '8.8.8.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.8.4.0.6.8.4.1.0.0.2.abuse-contacts.abusix.zone';

const zone: Zone = {
  [CLOUDFLARE]: { TXT: ['abuse@cloudflare.com'] },
  // One record, split into two character-strings on the wire: the strings form one text.
  [GOOGLE]: { TXT: [['arin-contact@google.com,', 'network-abuse@google.com']] },
  [GOOGLE_V6]: { TXT: ['arin-contact@google.com,network-abuse@google.com'] },
  // Asymmetric octets: a name built without reversing would miss.
  '10.2.0.192.abuse-contacts.abusix.zone': { TXT: ['abuse@example.net'] },
  // Several records, spaces around commas, a contact repeated with other case.
  '7.100.51.198.abuse-contacts.abusix.zone': {
    TXT: ['noc@example.org , abuse@example.org', 'Abuse@Example.org'],
  },
  '9.100.51.198.abuse-contacts.abusix.zone': { TXT: ['this is not an address'] },
  '10.100.51.198.abuse-contacts.abusix.zone': { TXT: [''] },
  // A private zone an operator might run instead of Abusix'.
  '1.1.1.1.abuse.corp.example': { TXT: ['soc@corp.example'] },
  // For the pivot: a domain resolving to Cloudflare's address.
  'one.one.example': { A: ['1.1.1.1'] },
  // A public address the zone has no contact for.
  'nowhere.example': { A: ['9.9.9.9'] },
};


describe('provider_01 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_01');
    assert.equal(engine.service, 'abusix');
    assert.equal(engine.label, 'Abusix');
    assert.deepEqual(engine.tags, ['the service', 'free_no_key']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, []);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, zone: 'abuse-contacts.abusix.zone' });
    assert.equal(engine.run, abusixLookup);
  });

  test('query names: reversed octets, IPv6 as reversed nibbles, under the zone', () => {
    assert.equal(abusixQueryName('1.1.1.1'), CLOUDFLARE);
    assert.equal(abusixQueryName('192.0.2.10'), '10.2.0.192.abuse-contacts.abusix.zone');
    assert.equal(abusixQueryName('2001:4860:4860::8888'), GOOGLE_V6);
    assert.equal(abusixQueryName('1.1.1.1', '.Abuse.Corp.Example.'), '1.1.1.1.abuse.corp.example');
  });

  test('summary: the abuse e-mails', () => {
    assert.equal(engine.summary({ abuse: 'abuse@cloudflare.com', contacts: ['abuse@cloudflare.com'] }), 'abuse@cloudflare.com');
    assert.equal(
      engine.summary({ abuse: 'arin-contact@google.com', contacts: ['arin-contact@google.com', 'network-abuse@google.com'] }),
      'arin-contact@google.com, network-abuse@google.com',
    );
  });

  test('details: the abuse contact, the other contacts, the address on Abusix Lookup', () => {
    const google: AbusixResult = { abuse: 'arin-contact@google.com', contacts: ['arin-contact@google.com', 'network-abuse@google.com'] };
    assert.deepEqual(engine.details!(google, '8.8.8.8'), [
      { label: 'Abuse contact', value: 'arin-contact@google.com' },
      { label: 'Other contacts', value: 'network-abuse@google.com' },
      { label: 'Abusix Lookup', value: 'https://lookup.abusix.com/search?q=8.8.8.8', href: 'https://lookup.abusix.com/search?q=8.8.8.8' },
    ]);
    const v6 = engine.details!({ abuse: 'abuse@cloudflare.com', contacts: ['abuse@cloudflare.com'] }, '2606:4700::1111');
    assert.deepEqual(v6.map((f) => f.label), ['Abuse contact', 'Abusix Lookup']);
    assert.equal(v6[1]!.href, 'https://lookup.abusix.com/search?q=2606%3A4700%3A%3A1111');
  });

  test('settings schema: a zone name is accepted, garbage is not', () => {
    assert.ok(v.safeParse(engine.settingsSchema!, { zone: 'abuse.corp.example' }).success);
    assert.ok(!v.safeParse(engine.settingsSchema!, { zone: 'not a zone/' }).success);
    assert.ok(!v.safeParse(engine.settingsSchema!, { zone: 42 }).success);
  });
});

describe('provider_01 against a loopback DNS server', () => {
  let dns: FakeDnsServer;
  let harness: EngineHarness;
  const extra: EngineHarness[] = [];

  before(async () => {
    dns = await startFakeDns(zone, { servfail: ['5.100.51.198.abuse-contacts.abusix.zone'] });
    harness = engineHarness(engine, { dnsServers: [dns.address] });
  });
  after(async () => {
    await Promise.all([harness.close(), ...extra.map((h) => h.close())]);
    await dns.close();
  });

  test('IPv4: one TXT question under the reversed name; the contact', async () => {
    dns.queries.length = 0;
    const result = (await harness.run('1.1.1.1', 'IPv4')) as AbusixResult;
    assert.equal(result.abuse, 'abuse@cloudflare.com');
    assert.deepEqual(result.contacts, ['abuse@cloudflare.com']);
    assert.deepEqual(Object.keys(result).sort(), ['abuse', 'contacts']);
    assert.deepEqual(dns.queries, [{ name: CLOUDFLARE, type: 'TXT' }]);
  });

  test('a record in several character-strings: joined, then split on commas; abuse is the first', async () => {
    assert.deepEqual(await harness.run('8.8.8.8', 'IPv4'), {
      abuse: 'arin-contact@google.com',
      contacts: ['arin-contact@google.com', 'network-abuse@google.com'],
    });
  });

  test('IPv6: asked under the 32 reversed nibbles', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('2001:4860:4860::8888', 'IPv6'), {
      abuse: 'arin-contact@google.com',
      contacts: ['arin-contact@google.com', 'network-abuse@google.com'],
    });
    assert.deepEqual(dns.queries, [{ name: GOOGLE_V6, type: 'TXT' }]);
  });

  test('the octets are reversed (192.0.2.10 is asked as 10.2.0.192)', async () => {
    assert.deepEqual(await harness.run('192.0.2.10', 'IPv4'), { abuse: 'abuse@example.net', contacts: ['abuse@example.net'] });
  });

  test('every TXT record is read; contacts trimmed and de-duplicated (the reference kept the first only)', async () => {
    assert.deepEqual(await harness.run('198.51.100.7', 'IPv4'), {
      abuse: 'noc@example.org',
      contacts: ['noc@example.org', 'abuse@example.org'],
    });
  });

  test('no contact for the address (NXDOMAIN): null', async () => {
    assert.equal(await harness.run('203.0.113.9', 'IPv4'), null);
  });

  test('an empty TXT record: null', async () => {
    assert.equal(await harness.run('198.51.100.10', 'IPv4'), null);
  });

  test('not an IP: null, nothing asked', async () => {
    dns.queries.length = 0;
    assert.equal(await harness.run('example.com', 'FQDN'), null);
    assert.deepEqual(dns.queries, []);
  });

  test('a TXT record that holds no e-mail address: a malformed-answer error', async () => {
    await rejectsWith(harness.run('198.51.100.9', 'IPv4'), /^abuse-contact zone answered without an e-mail address: "this is not an address"$/);
  });

  test('SERVFAIL: an error (the reference reported "no contact")', async () => {
    await rejectsWith(harness.run('198.51.100.5', 'IPv4'), /^DNS server failure \(SERVFAIL\)$/);
  });

  test('the zone is a setting', async () => {
    const h = engineHarness(engine, { dnsServers: [dns.address], settings: { zone: 'abuse.corp.example' } });
    extra.push(h);
    dns.queries.length = 0;
    assert.deepEqual(await h.run('1.1.1.1', 'IPv4'), { abuse: 'soc@corp.example', contacts: ['soc@corp.example'] });
    assert.deepEqual(dns.queries, [{ name: '1.1.1.1.abuse.corp.example', type: 'TXT' }]);
  });
});

describe('provider_01: minimal and degenerate answers', () => {
  const ODD: Zone = {
    // The minimal answer: one record, one address.
    '1.0.51.198.abuse-contacts.abusix.zone': { TXT: ['abuse@example.net'] },
    // Blank parts, an empty record and empty character-strings around the address.
    '2.0.51.198.abuse-contacts.abusix.zone': { TXT: [',, abuse@example.net ,', '', ['', '']] },
    // Junk beside an address: the address.
    '3.0.51.198.abuse-contacts.abusix.zone': { TXT: ['see https://example.net/abuse, abuse@example.net'] },
    // Only empty things: no contact.
    '4.0.51.198.abuse-contacts.abusix.zone': { TXT: [',', ['', ' ']] },
  };
  let dns: FakeDnsServer;
  let harness: EngineHarness;

  before(async () => {
    dns = await startFakeDns(ODD);
    harness = engineHarness(engine, { dnsServers: [dns.address] });
  });
  after(async () => {
    await harness.close();
    await dns.close();
  });

  test('the minimal answer: one record, one address', async () => {
    assert.deepEqual(await harness.run('198.51.0.1', 'IPv4'), { abuse: 'abuse@example.net', contacts: ['abuse@example.net'] });
  });

  test('blank parts, empty records and empty character-strings are skipped', async () => {
    assert.deepEqual(await harness.run('198.51.0.2', 'IPv4'), { abuse: 'abuse@example.net', contacts: ['abuse@example.net'] });
  });

  test('a part that is no address beside one that is: the address', async () => {
    assert.deepEqual(await harness.run('198.51.0.3', 'IPv4'), { abuse: 'abuse@example.net', contacts: ['abuse@example.net'] });
  });

  test('records holding only blanks: null', async () => {
    assert.equal(await harness.run('198.51.0.4', 'IPv4'), null);
  });
});

describe('provider_01 failures', () => {
  let silent: FakeDnsServer;
  before(async () => {
    silent = await startFakeDns(zone, { silent: true });
  });
  after(() => silent.close());

  test('a DNS server that never answers: a timeout error within the call budget', async () => {
    const harness = engineHarness(engine, { dnsServers: [silent.address], settings: { timeout_ms: 300, retries: 0 } });
    try {
      await rejectsWith(harness.run('1.1.1.1', 'IPv4'), new RegExp(`^DNS timeout after 300 ms waiting for ${silent.address.replace(/\./g, '\\.')}$`));
      assert.ok(silent.queries.some((q) => q.name === CLOUDFLARE && q.type === 'TXT'), 'the query reached the server');
    } finally {
      await harness.close();
    }
  });
});

describe('provider_01 through the runner (reversed IP)', () => {
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    dns = await startFakeDns(zone);
    runner = runnerHarness([engine], { dnsServers: [dns.address] });
  });
  after(async () => {
    await runner.close();
    await dns.close();
  });

  test('a domain: the contact of the IP it resolves to, with reversed_ip', async () => {
    dns.queries.length = 0;
    const [result] = await runner.analyze([{ value: 'one.one.example', type: 'FQDN' }], ['abusix']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    assert.equal(result!.reversed_success, true);
    assert.deepEqual(result!.abusix, { abuse: 'abuse@cloudflare.com', contacts: ['abuse@cloudflare.com'] });
    assert.equal(result!.errors, undefined);
    assert.ok(dns.queries.some((q) => q.name === CLOUDFLARE && q.type === 'TXT'), 'asked for the resolved IP');
  });

  test('a URL: same pivot; an IP without contact gives null, not an error', async () => {
    const [result] = await runner.analyze([{ value: 'https://nowhere.example/login', type: 'URL' }], ['provider_01']);
    assert.equal(result!.reversed_ip, '9.9.9.9');
    assert.ok(dns.queries.some((q) => q.name === '9.9.9.9.abuse-contacts.abusix.zone'), 'asked for the resolved IP');
    assert.equal(result!.provider_01, null);
    assert.equal(result!.errors, undefined);
  });

  test('an IP directly: no reversed_ip', async () => {
    const [result] = await runner.analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['provider_01']);
    assert.equal(result!.reversed_ip, undefined);
    assert.deepEqual(result!.provider_01, {
      abuse: 'arin-contact@google.com',
      contacts: ['arin-contact@google.com', 'network-abuse@google.com'],
    });
  });
});
