import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import rdapWhois, { type RdapWhoisResult } from '../../engines/rdap_whois.js';
import { EngineError } from '../../src/engine/contract.js';
import { parseBootstrap, rdapBaseUrl, resetBootstrapMemory, BOOTSTRAP_TTL_MS } from '../../src/rdap/bootstrap.js';
import { parseReferral, parseServer } from '../../src/whois/client.js';
import { isEmptyRecord, isNotFound, normalizeDate, parseWhois } from '../../src/whois/parse.js';
import { reply } from '../fakes/http.js';
import { bootstrapFile, exampleOrg, ianaTldAnswer, noSelfLink, rdapReply, startFakeRdap, whoisTexts, type FakeRdap } from '../fakes/rdap.js';
import { closedPort, startFakeWhois, type FakeWhoisServer } from '../fakes/whois.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';

const FIELDS = [
  'abuse_contact', 'creation_date', 'data_source', 'emails', 'expiration_date', 'link', 'name_servers',
  'organization', 'registrant', 'registrant_country', 'registrant_email', 'registrar', 'update_date',
];

/** Section 5.21's example result. */
const CYBERBRO_RDAP: RdapWhoisResult = {
  abuse_contact: 'registrar-abuse@cloudflare.com',
  creation_date: '2024-12-20',
  data_source: 'rdap',
  emails: ['registrar-abuse@cloudflare.com'],
  expiration_date: '2026-12-20',
  link: 'https://rdap.verisign.com/net/v1/domain/CYBERBRO.NET',
  name_servers: ['anderson.ns.cloudflare.com', 'lisa.ns.cloudflare.com'],
  organization: null,
  registrant: null,
  registrant_country: null,
  registrant_email: null,
  registrar: 'Cloudflare, Inc.',
  update_date: '2025-11-20',
};

/** The same domain from Verisign's WHOIS: the link is the registrar's URL. */
const CYBERBRO_WHOIS: RdapWhoisResult = { ...CYBERBRO_RDAP, data_source: 'whois', link: 'https://www.cloudflare.com' };

let rdap: FakeRdap;
let registry: FakeWhoisServer;
let iana: FakeWhoisServer;
let silent: FakeWhoisServer;
const harnesses: EngineHarness[] = [];

/** A harness pointed at the fakes; retries off so failures are quick and request counts exact. */
function harness(settings: Record<string, unknown> = {}): EngineHarness {
  const h = engineHarness(rdapWhois, {
    settings: { bootstrap_url: rdap.bootstrapUrl, whois_iana_server: iana.address, retries: 0, timeout_ms: 3000, ...settings },
  });
  harnesses.push(h);
  return h;
}

before(async () => {
  rdap = await startFakeRdap();
  registry = await startFakeWhois({
    'cyberbro.net': whoisTexts.cyberbroNet,
    'example.com': whoisTexts.exampleCom,
    'example-labs.xyz': whoisTexts.exampleXyz,
    'exemple-boulangerie.fr': whoisTexts.exampleFr,
    'banner.xyz': 'Your connection limit exceeded. Please slow down and try again later.\r\n',
  });
  iana = await startFakeWhois({
    com: ianaTldAnswer('com', registry.address),
    net: ianaTldAnswer('net', registry.address),
    xyz: ianaTldAnswer('xyz', registry.address),
    fr: ianaTldAnswer('fr', registry.address),
    ws: ianaTldAnswer('ws', null),
  });
  silent = await startFakeWhois({}, { mode: 'silent' });
});

after(async () => {
  // Fakes first: closing them ends requests the engine abandoned, which transports wait for.
  await Promise.all([rdap.http.close(), registry.close(), iana.close(), silent.close()]);
  await Promise.all(harnesses.map((h) => h.close()));
});

beforeEach(() => {
  rdap.http.reset();
  registry.reset();
  iana.reset();
  silent.reset();
});

describe('rdap_whois: declaration', () => {
  test('catalog entry', () => {
    assert.equal(rdapWhois.id, 'rdap_whois');
    assert.equal(rdapWhois.service, 'rdap_whois');
    assert.equal(rdapWhois.label, 'RDAP / WHOIS');
    assert.deepEqual(rdapWhois.catalogs, ['main'], 'rdap replaces it in the older catalog');
    assert.deepEqual(rdapWhois.tags, ['default', 'the service', 'domain', 'free_no_key']);
    assert.deepEqual(rdapWhois.types, ['FQDN', 'URL']);
    assert.deepEqual(rdapWhois.defaults, {
      timeout_ms: 10000,
      bootstrap_url: 'https://data.iana.org/rdap/dns.json',
      whois_iana_server: 'whois.iana.org:43',
      whois_server: '',
    });
    assert.deepEqual(rdapWhois.credentials, []);
  });

  test('summary', () => {
    assert.equal(rdapWhois.summary(CYBERBRO_RDAP), 'Cloudflare, Inc.; created 2024-12-20, expires 2026-12-20 (rdap)');
    assert.equal(rdapWhois.summary({ ...CYBERBRO_WHOIS, registrar: null, creation_date: null }),
      'registrar unknown; expires 2026-12-20 (whois)');
  });

  test('details: registration card with the RDAP record linked; WHOIS links the registrar', () => {
    const thick: RdapWhoisResult = {
      ...CYBERBRO_RDAP,
      registrar: 'MarkMonitor Inc.',
      registrant: 'Example Relief Foundation',
      organization: 'Example Relief Foundation',
      registrant_country: 'CH',
      registrant_email: 'domains@example-ngo.org',
      abuse_contact: 'abusecomplaints@markmonitor.com',
      emails: ['abusecomplaints@markmonitor.com', 'domains@example-ngo.org', 'HOSTMASTER@example-ngo.org'],
      link: 'https://rdap.publicinterestregistry.org/rdap/domain/example-ngo.org',
    };
    assert.deepEqual(rdapWhois.details!(thick, 'example-ngo.org'), [
      { label: 'Registrar', value: 'MarkMonitor Inc.' },
      { label: 'Registrant', value: 'Example Relief Foundation' },
      { label: 'Registrant country', value: 'CH' },
      { label: 'Registrant e-mail', value: 'domains@example-ngo.org' },
      { label: 'Abuse contact', value: 'abusecomplaints@markmonitor.com' },
      { label: 'Created', value: '2024-12-20' },
      { label: 'Expires', value: '2026-12-20' },
      { label: 'Updated', value: '2025-11-20' },
      { label: 'Name servers', value: 'anderson.ns.cloudflare.com, lisa.ns.cloudflare.com' },
      { label: 'Other e-mails', value: 'HOSTMASTER@example-ngo.org' },
      {
        label: 'RDAP record',
        value: 'https://rdap.publicinterestregistry.org/rdap/domain/example-ngo.org',
        href: 'https://rdap.publicinterestregistry.org/rdap/domain/example-ngo.org',
      },
    ]);
    const whois = rdapWhois.details!(CYBERBRO_WHOIS, 'cyberbro.net');
    assert.deepEqual(whois[0], { label: 'Registrar', value: 'Cloudflare, Inc.', href: 'https://www.cloudflare.com/' });
    assert.deepEqual(whois.at(-1), { label: 'Data source', value: 'WHOIS' });
    assert.ok(!whois.some((f) => f.label === 'RDAP record' || f.label === 'Other e-mails'));
    // A WHOIS record without a registrar URL has a whois:// link, which is not shown.
    const bare = rdapWhois.details!({ ...CYBERBRO_WHOIS, registrar: null, link: 'whois://whois.verisign-grs.com/cyberbro.net' }, 'cyberbro.net');
    assert.ok(bare.every((f) => f.href === undefined));
  });
});

describe('rdap_whois: RDAP', () => {
  test('thin registry record: exactly the 13 fields, as in the spec example', async () => {
    const result = await harness().run('cyberbro.net', 'FQDN');
    assert.deepEqual(Object.keys(result as object).sort(), FIELDS);
    assert.deepEqual(result, CYBERBRO_RDAP);
    const [request] = rdap.http.hits('GET /rdap/net/v1/domain/');
    assert.equal(request?.path, '/rdap/net/v1/domain/cyberbro.net');
    assert.match(String(request?.headers.accept), /application\/rdap\+json/);
    assert.deepEqual(registry.queries, [], 'no WHOIS when RDAP answers');
  });

  test('RFC 9083 example: registrant, nested abuse contact, lower-case name servers, dates', async () => {
    assert.deepEqual(await harness().run('example.com', 'FQDN'), {
      abuse_contact: 'abuse@registrar.example',
      creation_date: '1995-08-14',
      data_source: 'rdap',
      emails: ['abuse@registrar.example', 'owner@example.com'],
      expiration_date: '2026-08-13',
      link: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM',
      name_servers: ['a.iana-servers.net', 'b.iana-servers.net'],
      organization: 'Example Inc.',
      registrant: 'Example Holder',
      registrant_country: null,
      registrant_email: 'owner@example.com',
      registrar: 'RESERVED-Internet Assigned Numbers Authority',
      update_date: '2025-08-14',
    });
  });

  test('thick record: organisation entity, adr cc, all e-mails, fractional/offset dates', async () => {
    assert.deepEqual(await harness().run('https://www.example-ngo.org/donate', 'URL'), {
      abuse_contact: 'abusecomplaints@markmonitor.com',
      creation_date: '2003-02-17',
      data_source: 'rdap',
      emails: ['abusecomplaints@markmonitor.com', 'domains@example-ngo.org', 'HOSTMASTER@example-ngo.org'],
      expiration_date: '2027-02-17',
      link: 'https://rdap.publicinterestregistry.org/rdap/domain/example-ngo.org',
      name_servers: ['ns1.example-ngo.org', 'ns2.example-ngo.org'],
      organization: 'Example Relief Foundation',
      registrant: 'Example Relief Foundation',
      registrant_country: 'CH',
      registrant_email: 'domains@example-ngo.org',
      registrar: 'MarkMonitor Inc.',
      update_date: '2025-01-18',
    });
  });

  test('registrant country from the last adr component when there is no cc parameter', async () => {
    const record = structuredClone(exampleOrg);
    const vcard = record.entities[1]!.vcardArray as [string, unknown[][]];
    vcard[1].find((p) => p[0] === 'adr')![1] = {};
    rdap.serve('other-ngo.org', record);
    const result = await harness().run('other-ngo.org', 'FQDN') as RdapWhoisResult;
    assert.equal(result.registrant_country, 'Switzerland');
  });

  test('redacted registrant: placeholders become null, the privacy service stays', async () => {
    const result = await harness().run('private-shop.com', 'FQDN') as RdapWhoisResult;
    assert.equal(result.registrant, null);
    assert.equal(result.registrant_email, null);
    assert.equal(result.organization, 'Privacy service provided by Withheld for Privacy ehf');
    assert.equal(result.registrant_country, 'IS');
    assert.equal(result.abuse_contact, 'abuse@namecheap.com');
    assert.deepEqual(result.emails, ['abuse@namecheap.com']);
    assert.equal(result.update_date, null);
  });

  test('minimal record: unknown values are null, lists empty, link "" (no self link, no registrar site)', async () => {
    assert.deepEqual(await harness().run('minimal.com', 'FQDN'), {
      abuse_contact: null,
      creation_date: null,
      data_source: 'rdap',
      emails: [],
      expiration_date: null,
      // Issue 26: engines.md 5.21's link is rdap_link, else registrar_url, else "" (never the queried URL).
      link: '',
      name_servers: [],
      organization: null,
      registrant: null,
      registrant_country: null,
      registrant_email: null,
      registrar: null,
      update_date: null,
    });
  });

  test('registrable domain from a deep subdomain and from a URL with port', async () => {
    const h = harness();
    assert.deepEqual(await h.run('a.b.c.CYBERBRO.net.', 'FQDN'), CYBERBRO_RDAP);
    assert.deepEqual(await h.run('https://www.cyberbro.net:8443/path/x?q=1#top', 'URL'), CYBERBRO_RDAP);
    assert.deepEqual(rdap.http.hits('GET /rdap/net/v1/domain/').map((r) => r.path),
      ['/rdap/net/v1/domain/cyberbro.net', '/rdap/net/v1/domain/cyberbro.net']);
  });

  test('RDAP 404: not registered, null, and no WHOIS', async () => {
    assert.equal(await harness().run('www.nope-nope.com', 'FQDN'), null);
    assert.equal(rdap.http.hits('GET /rdap/com/v1/domain/nope-nope.com').length, 1);
    assert.deepEqual(registry.queries, []);
    assert.deepEqual(iana.queries, []);
  });

  test('no registrable domain: null without any request', async () => {
    const h = harness();
    for (const [value, type] of [
      ['http://192.0.2.1/login', 'URL'], ['https://[2001:db8::1]:8443/', 'URL'], ['localhost', 'FQDN'],
      ['printer.lan', 'FQDN'], ['co.uk', 'FQDN'],
    ] as const) {
      assert.equal(await h.run(value, type), null, value);
    }
    assert.deepEqual(rdap.http.requests, []);
    assert.deepEqual(iana.queries, []);
    assert.deepEqual(registry.queries, []);
  });
});

describe('rdap_whois: minimal and degenerate RDAP answers', () => {
  const EMPTY: RdapWhoisResult = {
    abuse_contact: null, creation_date: null, data_source: 'rdap', emails: [], expiration_date: null, link: '',
    name_servers: [], organization: null, registrant: null, registrant_country: null, registrant_email: null,
    registrar: null, update_date: null,
  };

  test('no objectClassName, no ldhName: read as a domain record, no WHOIS', async () => {
    await rdap.answering('cyberbro.net', rdapReply({ nameservers: [{ ldhName: 'NS.EXAMPLE.NET' }] }), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), { ...EMPTY, name_servers: ['ns.example.net'] });
    });
    await rdap.answering('cyberbro.net', rdapReply({}), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), EMPTY);
    });
    assert.deepEqual(registry.queries, []);
  });

  test('no self link: the registrar\'s site, else ""', async () => {
    const record = noSelfLink('CYBERBRO.NET', 'https://rdap.cloudflare.com/rdap/v1/domain/CYBERBRO.NET', 'Cloudflare, Inc.', 'https://www.cloudflare.com');
    await rdap.answering('cyberbro.net', rdapReply(record), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), { ...EMPTY, registrar: 'Cloudflare, Inc.', link: 'https://www.cloudflare.com' });
    });
  });

  test('null parts, one object for a list, null items: read as lists', async () => {
    const record = {
      objectClassName: 'domain',
      links: { rel: 'self', href: 'https://rdap.example/domain/CYBERBRO.NET' },
      events: [null, { eventAction: 'registration', eventDate: '2024-12-20T13:05:44Z' }],
      entities: [null, {
        roles: 'registrant',
        vcardArray: ['vcard', [['fn', {}, 'text', 'Jane Doe'], ['adr', { cc: 'fr' }, 'text', ['', '', '', '', '', '', '']], ['email', {}, 'text', 'jane@example.net']]],
        entities: null,
      }],
      nameservers: { ldhName: 'LISA.NS.CLOUDFLARE.COM' },
    };
    await rdap.answering('cyberbro.net', rdapReply(record), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), {
        ...EMPTY,
        creation_date: '2024-12-20',
        emails: ['jane@example.net'],
        link: 'https://rdap.example/domain/CYBERBRO.NET',
        name_servers: ['lisa.ns.cloudflare.com'],
        registrant: 'Jane Doe',
        registrant_country: 'FR',
        registrant_email: 'jane@example.net',
      });
    });
    await rdap.answering('cyberbro.net', rdapReply({ objectClassName: 'domain', links: null, events: null, entities: null, nameservers: null }), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), EMPTY);
    });
  });

  test('another object class: not a domain record, WHOIS fallback', async () => {
    await rdap.answering('cyberbro.net', rdapReply({ objectClassName: 'nameserver', ldhName: 'CYBERBRO.NET' }), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
    });
  });
});

describe('rdap_whois: bootstrap file', () => {
  test('downloaded once, then reused from memory and from the store', async () => {
    resetBootstrapMemory();
    const h = harness();
    await h.run('cyberbro.net', 'FQDN');
    await h.run('example.com', 'FQDN');
    assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 1);
    const stored = await h.storage.get(`rdap_whois:bootstrap:${rdap.bootstrapUrl}`) as { services: Record<string, string> };
    assert.equal(stored.services.net, `${rdap.http.url}/rdap/net/v1/`);

    // A restarted process finds it in the store.
    resetBootstrapMemory();
    await h.run('cyberbro.net', 'FQDN');
    assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 1);

    // An empty store (and memory) downloads again.
    resetBootstrapMemory();
    await harness().run('cyberbro.net', 'FQDN');
    assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 2);
  });

  test('concurrent first lookups share one download', async () => {
    resetBootstrapMemory();
    rdap.http.route('GET /rdap/dns.json', reply.slow(100, reply.json(bootstrapFile(rdap.http.url))));
    const h = harness();
    const results = await Promise.all([
      h.run('cyberbro.net', 'FQDN'), h.run('example.com', 'FQDN'), h.run('www.cyberbro.net', 'FQDN'),
    ]);
    assert.deepEqual(results[0], CYBERBRO_RDAP);
    assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 1);
  });

  test('a stored copy older than 24 h is downloaded again', async () => {
    resetBootstrapMemory();
    const h = harness();
    await h.storage.set(`rdap_whois:bootstrap:${rdap.bootstrapUrl}`, {
      fetchedAt: Date.now() - BOOTSTRAP_TTL_MS - 1000, services: {},
    });
    assert.deepEqual(await h.run('cyberbro.net', 'FQDN'), CYBERBRO_RDAP);
    assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 1);
  });

  test('https preferred, longest label suffix wins', () => {
    const table = parseBootstrap([
      [['uk'], ['https://rdap.nominet.uk/uk/']],
      [['co.uk', 'ltd.uk'], ['http://rdap.example/co/', 'https://rdap.example/co/']],
      [['NET'], ['http://rdap.example/net']],
      [['org'], []],
    ]);
    assert.equal(rdapBaseUrl(table, 'shop.example.co.uk'), 'https://rdap.example/co/');
    assert.equal(rdapBaseUrl(table, 'example.uk'), 'https://rdap.nominet.uk/uk/');
    assert.equal(rdapBaseUrl(table, 'example.net'), 'http://rdap.example/net/');
    assert.equal(rdapBaseUrl(table, 'example.org'), null);
    assert.equal(rdapBaseUrl(table, 'example.xyz'), null);
  });
});

describe('rdap_whois: WHOIS fallback', () => {
  test('TLD without RDAP: IANA referral (host:port), then the registry', async () => {
    const h = harness();
    assert.deepEqual(await h.run('http://shop.example-labs.xyz/cart', 'URL'), {
      abuse_contact: 'abuse@namecheap.com',
      creation_date: '2014-06-02',
      data_source: 'whois',
      emails: ['abuse@namecheap.com'],
      expiration_date: '2026-06-01',
      link: 'https://www.namecheap.com/',
      name_servers: ['dns1.registrar-servers.com', 'dns2.registrar-servers.com'],
      organization: 'Example Labs Ltd',
      registrant: null,
      registrant_country: 'IS',
      registrant_email: null,
      registrar: 'NameCheap, Inc.',
      update_date: '2025-03-02',
    });
    assert.deepEqual(iana.queries, ['xyz']);
    assert.deepEqual(registry.queries, ['example-labs.xyz']);
    assert.deepEqual(rdap.http.hits('GET /rdap/xyz'), []);

    // The referral is kept: the next .xyz lookup goes straight to the registry.
    await h.run('example-labs.xyz', 'FQDN');
    assert.deepEqual(iana.queries, ['xyz']);
    assert.deepEqual(registry.queries, ['example-labs.xyz', 'example-labs.xyz']);
  });

  test('whois_server overrides the referral; RIPE-style answer with holder handle', async () => {
    const result = await harness({ whois_server: registry.address }).run('exemple-boulangerie.fr', 'FQDN');
    assert.deepEqual(result, {
      abuse_contact: null,
      creation_date: '2009-09-14',
      data_source: 'whois',
      emails: ['support@gandi.net', 'contact@exemple-boulangerie.fr', 'jeanne@exemple-boulangerie.fr'],
      expiration_date: '2026-09-14',
      link: `whois://${registry.address}/exemple-boulangerie.fr`,
      name_servers: ['ns1.exemple-boulangerie.fr', 'ns2.gandi.net'],
      organization: 'Exemple Boulangerie SARL',
      registrant: 'Exemple Boulangerie SARL',
      registrant_country: 'FR',
      registrant_email: 'contact@exemple-boulangerie.fr',
      registrar: 'GANDI',
      update_date: '2025-08-30',
    });
    assert.deepEqual(iana.queries, []);
  });

  test('RDAP 500: WHOIS fallback with data_source "whois"', async () => {
    await rdap.answering('cyberbro.net', reply.status(500), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
      assert.deepEqual(iana.queries, ['net']);
      assert.deepEqual(registry.queries, ['cyberbro.net']);
    });
  });

  test('RDAP 503 with the default retries: retried, then WHOIS', async () => {
    await rdap.answering('cyberbro.net', reply.status(503), async () => {
      const h = harness({ retries: undefined });
      assert.equal(h.settings.retries, 2);
      assert.deepEqual(await h.run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
      assert.equal(rdap.http.hits('GET /rdap/net/v1/domain/cyberbro.net').length, 3);
    });
  });

  test('RDAP timeout: WHOIS still gets its share of the time', async () => {
    await rdap.answering('cyberbro.net', reply.hang(), async () => {
      const started = Date.now();
      assert.deepEqual(await harness({ timeout_ms: 1500 }).run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
      assert.ok(Date.now() - started < 1500);
    });
  });

  test('malformed RDAP JSON, or a 200 that is not a domain object: WHOIS fallback', async () => {
    await rdap.answering('cyberbro.net', reply.malformed(), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
    });
    await rdap.answering('cyberbro.net', rdapReply({ errorCode: 500, title: 'Internal error' }), async () => {
      assert.deepEqual(await harness().run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
    });
  });

  test('bootstrap download failing: WHOIS fallback', async () => {
    rdap.http.route('GET /rdap/broken.json', reply.status(500));
    const h = harness({ bootstrap_url: `${rdap.http.url}/rdap/broken.json` });
    assert.deepEqual(await h.run('cyberbro.net', 'FQDN'), CYBERBRO_WHOIS);
  });

  test('WHOIS "not found": null', async () => {
    assert.equal(await harness().run('nope-nope.xyz', 'FQDN'), null);
    assert.deepEqual(registry.queries, ['nope-nope.xyz']);
  });

  test('both failing: one line naming both reasons', async () => {
    const port = await closedPort();
    await rdap.answering('cyberbro.net', reply.status(500), async () => {
      await assert.rejects(harness({ whois_server: `127.0.0.1:${port}` }).run('cyberbro.net', 'FQDN'), (error: Error) => {
        assert.ok(error instanceof EngineError);
        assert.equal(error.message, `RDAP: HTTP 500 Internal Server Error; WHOIS: connection refused (127.0.0.1:${port})`);
        return true;
      });
    });
  });

  test('malformed RDAP and a silent WHOIS server: clean timeout message', async () => {
    await rdap.answering('cyberbro.net', reply.malformed(), async () => {
      const h = harness({ whois_server: silent.address, timeout_ms: 1000 });
      await assert.rejects(h.run('cyberbro.net', 'FQDN'), (error: Error) => {
        assert.equal(error.message, `RDAP: upstream answered with malformed JSON; WHOIS: timeout (${silent.address})`);
        return true;
      });
      assert.deepEqual(silent.queries, ['cyberbro.net']);
    });
  });

  test('no RDAP service and no WHOIS referral', async () => {
    await assert.rejects(harness().run('example.ws', 'FQDN'),
      { name: 'EngineError', message: 'RDAP: no RDAP service for .ws; WHOIS: no server known for .ws' });
  });

  test('an answer with no registration data is an error, not an empty record', async () => {
    await assert.rejects(harness().run('banner.xyz', 'FQDN'),
      { message: `RDAP: no RDAP service for .xyz; WHOIS: unrecognised answer from ${registry.address}` });
  });
});

describe('WHOIS parsing', () => {
  test('dates normalised to YYYY-MM-DD', () => {
    const cases: Array<[string, string | null]> = [
      ['1995-08-14T04:00:00Z', '1995-08-14'],
      ['2014-06-02T00:00:00.0Z', '2014-06-02'],
      ['2003-02-17 16:42:08', '2003-02-17'],
      ['14-Aug-1995', '1995-08-14'],
      ['04-jun-2019 10:00:00 UTC', '2019-06-04'],
      ['1995.08.14', '1995-08-14'],
      ['2001.01.01 13:00:00', '2001-01-01'],
      ['2001/01/01', '2001-01-01'],
      ['14.08.1995', '1995-08-14'],
      ['4.8.1995 12:00:00', '1995-08-04'],
      ['before Aug-1996', null],
      ['2025-13-01', null],
      ['', null],
    ];
    for (const [input, expected] of cases) assert.equal(normalizeDate(input), expected, input);
  });

  test('"not found" answers of several registries', () => {
    for (const [registry, text] of Object.entries(whoisTexts.notFound)) assert.ok(isNotFound(text), registry);
    for (const text of [whoisTexts.cyberbroNet, whoisTexts.exampleXyz, whoisTexts.exampleFr, whoisTexts.exampleCoUk]) {
      assert.equal(isNotFound(text), false);
    }
  });

  test('Nominet-style sections with indented values', () => {
    const record = parseWhois(whoisTexts.exampleCoUk);
    assert.equal(record.registrar, 'Cloudflare, Inc. t/a Cloudflare [Tag = CLOUDFLARE]');
    assert.equal(record.creationDate, '2019-06-04');
    assert.equal(record.expirationDate, '2026-06-04');
    assert.equal(record.updateDate, '2025-05-04');
    assert.deepEqual(record.nameServers, ['jack.ns.cloudflare.com', 'nora.ns.cloudflare.com']);
  });

  test('Verisign thin answer with empty abuse e-mail', () => {
    const record = parseWhois(whoisTexts.exampleCom);
    assert.equal(record.registrar, 'RESERVED-Internet Assigned Numbers Authority');
    assert.equal(record.abuseContact, null);
    assert.equal(record.registrarUrl, null);
    assert.deepEqual(record.emails, []);
    assert.deepEqual(record.nameServers, ['a.iana-servers.net', 'b.iana-servers.net']);
    assert.equal(record.creationDate, '1995-08-14');
  });

  test('lower-case keys and other date notations', () => {
    const record = parseWhois('domain: example.cz\nregistrar: REG-EXAMPLE\nregistered: 14.08.1995 12:00:00\nchanged: 1.2.2024\nexpire: 14.08.2026\nnserver: ns.example.cz (192.0.2.1)\n');
    assert.equal(record.registrar, 'REG-EXAMPLE');
    assert.equal(record.creationDate, '1995-08-14');
    assert.equal(record.updateDate, '2024-02-01');
    assert.equal(record.expirationDate, '2026-08-14');
    assert.deepEqual(record.nameServers, ['ns.example.cz']);
    assert.ok(isEmptyRecord(parseWhois('Quota exceeded\n')));
  });

  test('IANA referral and server addresses', () => {
    assert.deepEqual(parseReferral(ianaTldAnswer('xyz', 'whois.nic.xyz')), { host: 'whois.nic.xyz', port: 43 });
    assert.deepEqual(parseReferral('domain: EXAMPLE\nwhois:        127.0.0.1:4343\n'), { host: '127.0.0.1', port: 4343 });
    assert.equal(parseReferral(ianaTldAnswer('ws', null)), null);
    assert.deepEqual(parseServer('whois.iana.org'), { host: 'whois.iana.org', port: 43 });
    assert.deepEqual(parseServer('[::1]:4343'), { host: '::1', port: 4343 });
    assert.deepEqual(parseServer('2001:db8::43'), { host: '2001:db8::43', port: 43 });
    assert.equal(parseServer('  '), null);
  });
});
