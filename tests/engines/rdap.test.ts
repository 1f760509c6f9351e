import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import rdapEngine, { type RdapResult } from '../../engines/rdap.js';
import rdapWhois from '../../engines/rdap_whois.js';
import { resetBootstrapMemory } from '../../src/rdap/bootstrap.js';
import { reply } from '../fakes/http.js';
import { exampleCom, noSelfLink, rdapReply, startFakeRdap, type FakeRdap } from '../fakes/rdap.js';
import { startFakeWhois, type FakeWhoisServer } from '../fakes/whois.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';

const FIELDS = [
  'abuse_contact', 'creation_date', 'expiration_date', 'link', 'name_servers', 'organization', 'registrant',
  'registrant_email', 'registrar', 'update_date',
];

/** Section 6.1's example result, verbatim. */
const EXAMPLE_COM: RdapResult = {
  abuse_contact: 'abuse@registrar.example',
  registrar: 'RESERVED-Internet Assigned Numbers Authority',
  organization: 'Example Inc.',
  registrant: 'Example Holder',
  registrant_email: 'owner@example.com',
  name_servers: ['a.iana-servers.net', 'b.iana-servers.net'],
  creation_date: '1995-08-14',
  expiration_date: '2026-08-13',
  update_date: '2025-08-14',
  link: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM',
};

let rdap: FakeRdap;
/** A WHOIS server the legacy engine must never contact, even when told about it. */
let whois: FakeWhoisServer;
const harnesses: EngineHarness[] = [];

function harness(settings: Record<string, unknown> = {}): EngineHarness {
  const h = engineHarness(rdapEngine, {
    settings: {
      bootstrap_url: rdap.bootstrapUrl, retries: 0, timeout_ms: 3000,
      whois_server: whois.address, whois_iana_server: whois.address, ...settings,
    },
  });
  harnesses.push(h);
  return h;
}

before(async () => {
  rdap = await startFakeRdap();
  whois = await startFakeWhois({ 'cyberbro.net': 'Domain Name: CYBERBRO.NET\nRegistrar: Cloudflare, Inc.\n' });
});

after(async () => {
  await Promise.all([rdap.http.close(), whois.close()]);
  await Promise.all(harnesses.map((h) => h.close()));
});

beforeEach(() => {
  rdap.http.reset();
  whois.reset();
});

describe('rdap (older catalog): declaration', () => {
  test('catalog entry', () => {
    assert.equal(rdapEngine.id, 'rdap');
    assert.equal(rdapEngine.service, 'rdap');
    assert.deepEqual(rdapEngine.catalogs, ['older']);
    assert.equal(rdapEngine.label, 'RDAP (older catalog)');
    assert.deepEqual(rdapEngine.tags, ['default', 'the service', 'domain', 'free_no_key']);
    assert.deepEqual(rdapEngine.types, ['FQDN', 'URL']);
    assert.deepEqual(rdapEngine.defaults, { timeout_ms: 10000, bootstrap_url: 'https://data.iana.org/rdap/dns.json' });
  });

  test('summary', () => {
    assert.equal(rdapEngine.summary(EXAMPLE_COM),
      'RESERVED-Internet Assigned Numbers Authority; created 1995-08-14, expires 2026-08-13');
  });

  test('details: the registration card, "" values left out, RDAP record linked', () => {
    assert.deepEqual(rdapEngine.details!(EXAMPLE_COM, 'example.com'), [
      { label: 'Registrar', value: 'RESERVED-Internet Assigned Numbers Authority' },
      { label: 'Registrant', value: 'Example Holder' },
      { label: 'Organization', value: 'Example Inc.' },
      { label: 'Registrant e-mail', value: 'owner@example.com' },
      { label: 'Abuse contact', value: 'abuse@registrar.example' },
      { label: 'Created', value: '1995-08-14' },
      { label: 'Expires', value: '2026-08-13' },
      { label: 'Updated', value: '2025-08-14' },
      { label: 'Name servers', value: 'a.iana-servers.net, b.iana-servers.net' },
      {
        label: 'RDAP record',
        value: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM',
        href: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM',
      },
    ]);
    const thin = { ...EXAMPLE_COM, registrant: '', organization: '', registrant_email: '', update_date: '' };
    assert.deepEqual(rdapEngine.details!(thin, 'example.com').map((f) => f.label),
      ['Registrar', 'Abuse contact', 'Created', 'Expires', 'Name servers', 'RDAP record']);
  });
});

describe('rdap (older catalog): lookups', () => {
  test('the RFC 9083 example gives exactly the spec result (10 keys)', async () => {
    const result = await harness().run('example.com', 'FQDN');
    assert.deepEqual(Object.keys(result as object).sort(), FIELDS);
    assert.deepEqual(result, EXAMPLE_COM);
  });

  test('unknown values are "" and [], never null', async () => {
    assert.deepEqual(await harness().run('minimal.com', 'FQDN'), {
      abuse_contact: '',
      registrar: '',
      organization: '',
      registrant: '',
      registrant_email: '',
      name_servers: [],
      creation_date: '',
      expiration_date: '',
      update_date: '',
      // Issue 26: without a self link, "" as the reference (engines.md 6.1), not the queried URL.
      link: '',
    });
  });

  test('thin record and redacted registrant', async () => {
    const h = harness();
    assert.deepEqual(await h.run('cyberbro.net', 'FQDN'), {
      abuse_contact: 'registrar-abuse@cloudflare.com',
      registrar: 'Cloudflare, Inc.',
      organization: '',
      registrant: '',
      registrant_email: '',
      name_servers: ['anderson.ns.cloudflare.com', 'lisa.ns.cloudflare.com'],
      creation_date: '2024-12-20',
      expiration_date: '2026-12-20',
      update_date: '2025-11-20',
      link: 'https://rdap.verisign.com/net/v1/domain/CYBERBRO.NET',
    });
    const redacted = await h.run('private-shop.com', 'FQDN') as RdapResult;
    assert.equal(redacted.registrant, '');
    assert.equal(redacted.registrant_email, '');
    assert.equal(redacted.update_date, '');
    for (const value of Object.values(redacted)) assert.notEqual(value, null);
  });

  test('registrable domain from a deep subdomain and from a URL', async () => {
    const h = harness();
    assert.deepEqual(await h.run('www.sub.example.com', 'FQDN'), EXAMPLE_COM);
    assert.deepEqual(await h.run('http://login.example.com:8080/a/b?c=d', 'URL'), EXAMPLE_COM);
    assert.deepEqual(rdap.http.hits('GET /rdap/com/v1/domain/').map((r) => r.path),
      ['/rdap/com/v1/domain/example.com', '/rdap/com/v1/domain/example.com']);
  });

  test('404: null', async () => {
    assert.equal(await harness().run('nope-nope.com', 'FQDN'), null);
  });

  test('no registrable domain: null without any request', async () => {
    const h = harness();
    assert.equal(await h.run('http://198.51.100.7/', 'URL'), null);
    assert.equal(await h.run('intranet.local', 'FQDN'), null);
    assert.deepEqual(rdap.http.requests, []);
  });
});

describe('rdap (older catalog): failures never fall back to WHOIS', () => {
  test('HTTP 500 is thrown', async () => {
    await rdap.answering('cyberbro.net', reply.status(500), async () => {
      await assert.rejects(harness().run('cyberbro.net', 'FQDN'), { name: 'HttpStatusError', message: 'HTTP 500 Internal Server Error' });
    });
    assert.deepEqual(whois.queries, []);
  });

  test('malformed JSON is a clean one-line error', async () => {
    await rdap.answering('example.com', reply.malformed(), async () => {
      await assert.rejects(harness().run('example.com', 'FQDN'), { message: 'upstream answered with malformed JSON' });
    });
    assert.deepEqual(whois.queries, []);
  });

  test('timeout is thrown', async () => {
    await rdap.answering('example.com', reply.hang(), async () => {
      // The shared client names the host it was waiting for (issue 21).
      await assert.rejects(harness({ timeout_ms: 500 }).run('example.com', 'FQDN'), { message: new RegExp(`^timeout after 500 ms waiting for 127\\.0\\.0\\.1:${new URL(rdap.http.url).port}$`) });
    });
  });

  test('TLD without RDAP service', async () => {
    await assert.rejects(harness().run('example-labs.xyz', 'FQDN'), { name: 'EngineError', message: 'no RDAP service for .xyz' });
    assert.deepEqual(whois.queries, []);
  });
});

describe('rdap (older catalog): minimal and degenerate answers', () => {
  const EMPTY: RdapResult = {
    abuse_contact: '', registrar: '', organization: '', registrant: '', registrant_email: '',
    name_servers: [], creation_date: '', expiration_date: '', update_date: '', link: '',
  };

  test('no objectClassName, no ldhName: read, not refused', async () => {
    await rdap.answering('bare.com', rdapReply({ events: [{ eventAction: 'registration', eventDate: '2020-02-02T00:00:00Z' }] }), async () => {
      assert.deepEqual(await harness().run('bare.com', 'FQDN'), { ...EMPTY, creation_date: '2020-02-02' });
    });
    await rdap.answering('bare.com', rdapReply({}), async () => {
      assert.deepEqual(await harness().run('bare.com', 'FQDN'), EMPTY);
    });
  });

  test('null parts, one object for a list, null items, a role as a string: read as lists', async () => {
    const record = {
      objectClassName: 'domain',
      links: { rel: 'self', href: 'https://rdap.example/domain/ODD.COM' },
      events: [null, { eventAction: 'expiration', eventDate: '2027-01-01T00:00:00Z' }, { eventAction: 'registration' }],
      entities: {
        roles: 'registrar',
        vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Odd Registrar']]],
        entities: { roles: ['abuse'], vcardArray: ['vcard', [['email', {}, 'text', 'abuse@odd.example']]] },
      },
      nameservers: { ldhName: 'NS1.ODD.EXAMPLE' },
      status: null,
    };
    await rdap.answering('odd.com', rdapReply(record), async () => {
      assert.deepEqual(await harness().run('odd.com', 'FQDN'), {
        ...EMPTY,
        abuse_contact: 'abuse@odd.example',
        registrar: 'Odd Registrar',
        name_servers: ['ns1.odd.example'],
        expiration_date: '2027-01-01',
        link: 'https://rdap.example/domain/ODD.COM',
      });
    });
    await rdap.answering('odd.com', rdapReply({ objectClassName: 'domain', links: null, events: null, entities: null, nameservers: null }), async () => {
      assert.deepEqual(await harness().run('odd.com', 'FQDN'), EMPTY);
    });
  });

  test('no self link: "" even when the registrar names its site', async () => {
    const record = noSelfLink('NOSELF.COM', 'https://rdap.registrar.example/domain/NOSELF.COM', 'Some Registrar', 'https://registrar.example');
    await rdap.answering('noself.com', rdapReply(record), async () => {
      assert.deepEqual(await harness().run('noself.com', 'FQDN'), { ...EMPTY, registrar: 'Some Registrar' });
    });
  });

  test('another object class or an error document: refused, one line', async () => {
    await rdap.answering('other.com', rdapReply({ objectClassName: 'entity', handle: 'X' }), async () => {
      await assert.rejects(harness().run('other.com', 'FQDN'), { name: 'BadResponseError', message: 'unexpected answer from upstream at (root): not an RDAP domain object' });
    });
    await rdap.answering('other.com', rdapReply({ errorCode: 500, title: 'Internal error' }), async () => {
      await assert.rejects(harness().run('other.com', 'FQDN'), { message: 'unexpected answer from upstream at (root): not an RDAP domain object' });
    });
    await rdap.answering('other.com', rdapReply([exampleCom]), async () => {
      await assert.rejects(harness().run('other.com', 'FQDN'), { message: 'unexpected answer from upstream at (root): expected a JSON object' });
    });
  });
});

test('the bootstrap file is shared with rdap_whois', async () => {
  resetBootstrapMemory();
  const whoisHarness = engineHarness(rdapWhois, { settings: { bootstrap_url: rdap.bootstrapUrl, retries: 0 } });
  harnesses.push(whoisHarness);
  await whoisHarness.run('example.com', 'FQDN');
  assert.deepEqual(await harness().run('example.com', 'FQDN'), EXAMPLE_COM);
  assert.equal(rdap.http.hits('GET /rdap/dns.json').length, 1);
});
