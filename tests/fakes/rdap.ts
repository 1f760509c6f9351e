/**
 * Realistic RDAP and WHOIS material for the rdap_whois / rdap engine tests: an RFC 9224
 * bootstrap file pointing at the fake itself, RFC 9083 domain objects shaped like the ones
 * Verisign, PIR and registrars publish, and WHOIS answers in the common text formats.
 */
import { reply, startFakeHttp, type FakeHttpOptions, type FakeHttpServer, type FakeReply, type FakeRoute } from './http.js';

// ---------------------------------------------------------------------------------------------
// RDAP

/** IANA's dns.json, shaped as published, with every registry served by the fake. */
export function bootstrapFile(fakeUrl: string): unknown {
  return {
    version: '1.0',
    publication: '2026-01-08T18:00:01Z',
    description: 'RDAP bootstrap file for Domain Name System registrations',
    services: [
      [['com'], [`${fakeUrl}/rdap/com/v1/`]],
      [['net'], [`${fakeUrl}/rdap/net/v1/`]],
      [['org', 'ngo', 'ong'], [`${fakeUrl}/rdap/org/`]],
      [['uk'], [`${fakeUrl}/rdap/uk/`]],
    ],
  };
}

/** Section 6.1's example, verbatim: Verisign's record for EXAMPLE.COM. */
export const exampleCom = {
  objectClassName: 'domain', ldhName: 'EXAMPLE.COM',
  links: [
    { value: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM', rel: 'self', href: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM', type: 'application/rdap+json' },
    { rel: 'related', href: 'https://rdap.registrar.example/domain/EXAMPLE.COM' },
  ],
  events: [
    { eventAction: 'registration', eventDate: '1995-08-14T04:00:00Z' },
    { eventAction: 'expiration', eventDate: '2026-08-13T04:00:00Z' },
    { eventAction: 'last changed', eventDate: '2025-08-14T07:01:44Z' },
    { eventAction: 'last update of RDAP database', eventDate: '2026-01-10T12:00:00Z' },
  ],
  entities: [
    {
      objectClassName: 'entity', roles: ['registrar'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'RESERVED-Internet Assigned Numbers Authority']]],
      entities: [{
        objectClassName: 'entity', roles: ['abuse'],
        vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', ''],
          ['tel', { type: 'voice' }, 'uri', 'tel:+1.3105551212'],
          ['email', {}, 'text', 'abuse@registrar.example']]],
      }],
    },
    {
      objectClassName: 'entity', roles: ['registrant'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Example Holder'],
        ['org', {}, 'text', 'Example Inc.'], ['email', {}, 'text', 'owner@example.com']]],
    },
  ],
  nameservers: [
    { objectClassName: 'nameserver', ldhName: 'A.IANA-SERVERS.NET' },
    { objectClassName: 'nameserver', ldhName: 'B.IANA-SERVERS.NET' },
  ],
  status: ['client delete prohibited'],
};

/** Verisign's thin .net record for CYBERBRO.NET (section 5.21's example): no registrant. */
export const cyberbroNet = {
  objectClassName: 'domain',
  handle: '2938471920_DOMAIN_NET-VRSN',
  ldhName: 'CYBERBRO.NET',
  links: [{ value: 'https://rdap.verisign.com/net/v1/domain/CYBERBRO.NET', rel: 'self', href: 'https://rdap.verisign.com/net/v1/domain/CYBERBRO.NET', type: 'application/rdap+json' },
    { value: 'https://rdap.cloudflare.com/rdap/v1/domain/CYBERBRO.NET', rel: 'related', href: 'https://rdap.cloudflare.com/rdap/v1/domain/CYBERBRO.NET', type: 'application/rdap+json' }],
  status: ['client transfer prohibited'],
  entities: [{
    objectClassName: 'entity', handle: '1910', roles: ['registrar'],
    publicIds: [{ type: 'IANA Registrar ID', identifier: '1910' }],
    vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Cloudflare, Inc.']]],
    entities: [{
      objectClassName: 'entity', roles: ['abuse'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', ''],
        ['tel', { type: 'voice' }, 'uri', 'tel:+1.4153197517'],
        ['email', {}, 'text', 'registrar-abuse@cloudflare.com']]],
    }],
  }],
  events: [
    { eventAction: 'registration', eventDate: '2024-12-20T13:05:44Z' },
    { eventAction: 'expiration', eventDate: '2026-12-20T13:05:44Z' },
    { eventAction: 'last changed', eventDate: '2025-11-20T20:43:08Z' },
    { eventAction: 'last update of RDAP database', eventDate: '2026-01-10T12:00:00Z' },
  ],
  secureDNS: { delegationSigned: false },
  nameservers: [
    { objectClassName: 'nameserver', ldhName: 'ANDERSON.NS.CLOUDFLARE.COM' },
    { objectClassName: 'nameserver', ldhName: 'LISA.NS.CLOUDFLARE.COM' },
  ],
  rdapConformance: ['rdap_level_0', 'icann_rdap_technical_implementation_guide_1', 'icann_rdap_response_profile_1'],
};

/** A thick registry (PIR-style .org): registrant organisation with an address, a tech contact. */
export const exampleOrg = {
  objectClassName: 'domain', handle: 'D402200000001234567-LROR', ldhName: 'example-ngo.org', unicodeName: 'example-ngo.org',
  links: [{ rel: 'self', href: 'https://rdap.publicinterestregistry.org/rdap/domain/example-ngo.org', type: 'application/rdap+json' }],
  events: [
    { eventAction: 'registration', eventDate: '2003-02-17T16:42:08.000+00:00' },
    { eventAction: 'last changed', eventDate: '2025-01-18T09:12:30.120+00:00' },
    { eventAction: 'expiration', eventDate: '2027-02-17T16:42:08.000+00:00' },
  ],
  entities: [
    {
      objectClassName: 'entity', roles: ['registrar'], handle: '292',
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'MarkMonitor Inc.'],
        ['url', {}, 'uri', 'http://www.markmonitor.com']]],
      entities: [{
        objectClassName: 'entity', roles: ['abuse'],
        vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Abuse Contact'],
          ['email', {}, 'text', 'abusecomplaints@markmonitor.com']]],
      }],
    },
    {
      objectClassName: 'entity', roles: ['registrant'], handle: 'C1234-LROR',
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['kind', {}, 'text', 'org'],
        ['fn', {}, 'text', 'Example Relief Foundation'],
        ['adr', { cc: 'ch' }, 'text', ['', '', 'Rue de l\'Exemple 12', 'Geneva', '', '1201', 'Switzerland']],
        ['email', {}, 'text', 'domains@example-ngo.org']]],
    },
    {
      objectClassName: 'entity', roles: ['technical'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Hostmaster'],
        ['email', { type: 'work' }, 'text', 'mailto:HOSTMASTER@example-ngo.org']]],
    },
  ],
  nameservers: [
    { objectClassName: 'nameserver', ldhName: 'NS1.EXAMPLE-NGO.ORG.' },
    { objectClassName: 'nameserver', ldhName: 'ns2.example-ngo.org' },
    { objectClassName: 'nameserver', ldhName: '' },
  ],
};

/** A registrar's record with the registrant redacted (RFC 9537 style). */
export const redactedCom = {
  objectClassName: 'domain', ldhName: 'private-shop.com',
  links: [{ rel: 'self', href: 'https://rdap.namecheap.com/domain/PRIVATE-SHOP.COM' }],
  events: [
    { eventAction: 'registration', eventDate: '2021-03-04T10:20:30Z' },
    { eventAction: 'expiration', eventDate: '2026-03-04T10:20:30Z' },
  ],
  entities: [
    {
      objectClassName: 'entity', roles: ['registrant'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'REDACTED FOR PRIVACY'],
        ['org', {}, 'text', 'Privacy service provided by Withheld for Privacy ehf'],
        ['adr', {}, 'text', ['', '', 'Kalkofnsvegur 2', 'Reykjavik', 'Capital Region', '101', 'IS']],
        ['email', {}, 'text', 'Please query the RDAP service of the registrar of record identified in this output for information on how to contact the Registrant']]],
    },
    {
      objectClassName: 'entity', roles: ['registrar'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'NameCheap, Inc.']]],
      entities: [{ objectClassName: 'entity', roles: ['abuse'], vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['email', {}, 'text', 'abuse@namecheap.com']]] }],
    },
  ],
  redacted: [{ name: { type: 'Registrant Name' }, method: 'replacementValue' }],
  nameservers: [{ objectClassName: 'nameserver', ldhName: 'DNS1.REGISTRAR-SERVERS.COM' }],
};

/** The least a registry may answer: a domain object without any optional part. */
export const minimalCom = { objectClassName: 'domain', ldhName: 'MINIMAL.COM' };

/**
 * A domain record without a self link: only the registry's `related` link, and a registrar
 * entity naming `registrar` and its site `url`.
 */
export function noSelfLink(ldhName: string, related: string, registrar: string, url: string): unknown {
  return {
    objectClassName: 'domain', ldhName,
    links: [{ rel: 'related', href: related }],
    entities: [{ roles: ['registrar'], vcardArray: ['vcard', [['fn', {}, 'text', registrar], ['url', {}, 'uri', url]]] }],
  };
}

/** Verisign's 404 body. */
export const rdapNotFound = { errorCode: 404, title: 'Not Found', description: ['The requested object was not found.'] };

/** An RDAP answer as a registry sends it. */
export function rdapReply(record: unknown, status = 200): FakeReply {
  return { status, headers: { 'content-type': 'application/rdap+json' }, body: JSON.stringify(record) };
}

/** Fake route of a domain: `/rdap/<tld path>/domain/<domain>` as the bootstrap above names it. */
export function domainPath(domain: string): string {
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  const base = tld === 'com' || tld === 'net' ? `/rdap/${tld}/v1/` : `/rdap/${tld === 'ngo' || tld === 'ong' ? 'org' : tld}/`;
  return `${base}domain/${domain}`;
}

export interface FakeRdap {
  http: FakeHttpServer;
  bootstrapUrl: string;
  /** Serves an RDAP `record` for `domain` (lower-case A-label, as the engines ask). */
  serve(domain: string, record: unknown): void;
  /** Any other answer for `domain`: an error status, a hang, malformed JSON... */
  answer(domain: string, route: FakeRoute): void;
  /** Answers `route` for `domain` during `fn`, then what it served before. */
  answering(domain: string, route: FakeRoute, fn: () => Promise<void>): Promise<void>;
}

/** The fake's RDAP paths for the fixtures above; unknown domains get the registry's 404. */
export async function startFakeRdap(options: FakeHttpOptions = {}): Promise<FakeRdap> {
  const http = await startFakeHttp({}, options);
  const routes = new Map<string, FakeRoute>();
  const fake: FakeRdap = {
    http,
    bootstrapUrl: `${http.url}/rdap/dns.json`,
    serve: (domain, record) => fake.answer(domain, rdapReply(record)),
    answer: (domain, route) => {
      routes.set(domain, route);
      http.route(`GET ${domainPath(domain)}`, route);
    },
    answering: async (domain, route, fn) => {
      const previous = routes.get(domain) ?? rdapReply(rdapNotFound, 404);
      fake.answer(domain, route);
      try {
        await fn();
      } finally {
        fake.answer(domain, previous);
      }
    },
  };
  http.route('GET /rdap/dns.json', reply.json(bootstrapFile(http.url)));
  http.route('GET /rdap/*', rdapReply(rdapNotFound, 404));
  fake.serve('example.com', exampleCom);
  fake.serve('cyberbro.net', cyberbroNet);
  fake.serve('example-ngo.org', exampleOrg);
  fake.serve('private-shop.com', redactedCom);
  fake.serve('minimal.com', minimalCom);
  return fake;
}

// ---------------------------------------------------------------------------------------------
// WHOIS

const VERISIGN_FOOTER = `>>> Last update of whois database: 2026-01-10T12:00:00Z <<<

For more information on Whois status codes, please visit https://icann.org/epp

NOTICE: The expiration date displayed in this record is the date the
registrar's sponsorship of the domain name registration in the registry is
currently set to expire. This date does not necessarily reflect the expiration
date of the domain name registrant's agreement with the sponsoring
registrar.  Users may consult the sponsoring registrar's Whois database to
view the registrar's reported date of expiration for this registration.

TERMS OF USE: You are not authorized to access or query our Whois
database through the use of electronic processes that are high-volume and
automated except as reasonably necessary to register domain names or
modify existing registrations; the Data in VeriSign Global Registry
Services' ("VeriSign") Whois database is provided by VeriSign for
information purposes only.
`;

/** IANA's answer about a TLD; `refer` is the registry WHOIS server (here: a fake's host:port). */
export function ianaTldAnswer(tld: string, refer: string | null): string {
  return `% IANA WHOIS server
% for more information on IANA, visit http://www.iana.org
% This query returned 1 object
${refer ? `\nrefer:        ${refer}\n` : ''}
domain:       ${tld.toUpperCase()}

organisation: Example Registry Services, LLC
address:      2800 Example Drive
address:      Reston VA 20190
address:      United States of America (the)

contact:      administrative
name:         Registry Customer Service
e-mail:       info@registry.example
${refer ? `\nnserver:      A.NIC.${tld.toUpperCase()} 192.0.2.53\n\nwhois:        ${refer}\n` : ''}
status:       ACTIVE
remarks:      Registration information: http://www.registry.example

created:      1985-01-01
changed:      2023-12-07
source:       IANA
`;
}

/** Verisign thin-registry answer for .com/.net (what whois.verisign-grs.com says). */
export const whoisTexts = {
  cyberbroNet: `   Domain Name: CYBERBRO.NET
   Registry Domain ID: 2938471920_DOMAIN_NET-VRSN
   Registrar WHOIS Server: whois.cloudflare.com
   Registrar URL: https://www.cloudflare.com
   Updated Date: 2025-11-20T20:43:08Z
   Creation Date: 2024-12-20T13:05:44Z
   Registry Expiry Date: 2026-12-20T13:05:44Z
   Registrar: Cloudflare, Inc.
   Registrar IANA ID: 1910
   Registrar Abuse Contact Email: registrar-abuse@cloudflare.com
   Registrar Abuse Contact Phone: +1.4153197517
   Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
   Name Server: ANDERSON.NS.CLOUDFLARE.COM
   Name Server: LISA.NS.CLOUDFLARE.COM
   DNSSEC: unsigned
   URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/
${VERISIGN_FOOTER}`,

  /** Verisign's answer for EXAMPLE.COM: no registrar URL, empty abuse e-mail. */
  exampleCom: `   Domain Name: EXAMPLE.COM
   Registry Domain ID: 2336799_DOMAIN_COM-VRSN
   Registrar WHOIS Server: whois.iana.org
   Updated Date: 2025-08-14T07:01:44Z
   Creation Date: 1995-08-14T04:00:00Z
   Registry Expiry Date: 2026-08-13T04:00:00Z
   Registrar: RESERVED-Internet Assigned Numbers Authority
   Registrar IANA ID: 376
   Registrar Abuse Contact Email:
   Registrar Abuse Contact Phone:
   Domain Status: clientDeleteProhibited https://icann.org/epp#clientDeleteProhibited
   Name Server: A.IANA-SERVERS.NET
   Name Server: B.IANA-SERVERS.NET
   DNSSEC: signedDelegation
   URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/
${VERISIGN_FOOTER}`,

  /** A new-gTLD registry in the ICANN thick format, registrant partly redacted. */
  exampleXyz: `Domain Name: EXAMPLE-LABS.XYZ
Registry Domain ID: D123456789-CNIC
Registrar WHOIS Server: whois.namecheap.com
Registrar URL: https://www.namecheap.com/
Updated Date: 2025-03-02T10:11:12.0Z
Creation Date: 2014-06-02T00:00:00.0Z
Registry Expiry Date: 2026-06-01T23:59:59.0Z
Registrar: NameCheap, Inc.
Registrar IANA ID: 1068
Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
Registrant Name: REDACTED FOR PRIVACY
Registrant Organization: Example Labs Ltd
Registrant State/Province: Capital Region
Registrant Country: IS
Registrant Email: Please query the RDDS service of the Registrar of Record identified in this output for information on how to contact the Registrant, Admin, or Tech contact of the queried domain name.
Name Server: DNS1.REGISTRAR-SERVERS.COM
Name Server: DNS2.REGISTRAR-SERVERS.COM
DNSSEC: unsigned
Registrar Abuse Contact Email: abuse@namecheap.com
Registrar Abuse Contact Phone: +1.6613102107
URL of the ICANN Whois Inaccuracy Complaint Form: https://icann.org/wicf/
>>> Last update of WHOIS database: 2026-01-10T12:00:00.0Z <<<
`,

  /** AFNIC (.fr), RIPE-like blocks: the holder is a handle resolved in a later block. */
  exampleFr: `%%
%% This is the AFNIC Whois server.
%%
%% complete date format: YYYY-MM-DDThh:mm:ssZ
%%

domain:                        exemple-boulangerie.fr
status:                        ACTIVE
eppstatus:                     active
hold:                          NO
holder-c:                      EB1234-FRNIC
admin-c:                       JD5678-FRNIC
tech-c:                        GR283-FRNIC
registrar:                     GANDI
Expiry Date:                   2026-09-14T08:00:00Z
created:                       2009-09-14T08:00:00Z
last-update:                   2025-08-30T10:00:00Z
source:                        FRNIC

nserver:                       ns1.exemple-boulangerie.fr [192.0.2.10]
nserver:                       NS2.GANDI.NET
source:                        FRNIC

registrar:                     GANDI
address:                       63-65 boulevard Massena
address:                       75013 PARIS
country:                       FR
phone:                         +33.170377661
e-mail:                        support@gandi.net
website:                       http://www.gandi.net
anonymous:                     NO
registered:                    1999-03-01T00:00:00Z
source:                        FRNIC

nic-hdl:                       EB1234-FRNIC
type:                          ORGANIZATION
contact:                       Exemple Boulangerie SARL
address:                       12 rue du Pain
address:                       69001 Lyon
country:                       FR
e-mail:                        contact@exemple-boulangerie.fr
registrar:                     GANDI
changed:                       2025-08-30T10:00:00Z
anonymous:                     NO
source:                        FRNIC

nic-hdl:                       JD5678-FRNIC
type:                          PERSON
contact:                       Jeanne Dupont
e-mail:                        jeanne@exemple-boulangerie.fr
source:                        FRNIC
`,

  /** Nominet (.uk): sections with indented values, dd-Mon-yyyy dates. */
  exampleCoUk: `
    Domain name:
        example-shop.co.uk

    Data validation:
        Nominet was able to match the registrant's name and address against a 3rd party data source on 10-Dec-2012

    Registrar:
        Cloudflare, Inc. t/a Cloudflare [Tag = CLOUDFLARE]
        URL: https://www.cloudflare.com

    Relevant dates:
        Registered on: 04-Jun-2019
        Expiry date:  04-Jun-2026
        Last updated:  04-May-2025

    Registration status:
        Registered until expiry date.

    Name servers:
        jack.ns.cloudflare.com
        NORA.NS.CLOUDFLARE.COM

    WHOIS lookup made at 12:00:00 10-Jan-2026

-- 
This WHOIS information is provided for free by Nominet UK the central registry
for .uk domain names.
`,

  /** Not-found answers of several registries. */
  notFound: {
    verisign: 'No match for "NOPE-NOPE.COM".\r\n>>> Last update of whois database: 2026-01-10T12:00:00Z <<<\r\n',
    afnic: '%%\n%% This is the AFNIC Whois server.\n%%\n\n%% NOT FOUND\n',
    pir: 'NOT FOUND\n>>> Last update of WHOIS database: 2026-01-10T12:00:00.0Z <<<\n',
    cnic: 'The queried object does not exist: DOMAIN NOT FOUND\n',
    nominet: '\n    No match for "nope.co.uk".\n\n    This domain name has not been registered.\n',
    denic: 'Domain: nope.de\nStatus: free\n',
    generic: 'No Data Found\n',
    ripe: '%ERROR:101: no entries found\n%\n% No entries found in source RIPE.\n',
  },
};
