import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { infostealerLookup, type DomainExposure, type EmailExposure } from '../../engines/hudsonrock.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

const BASE = '/api/json/v2/osint-tools';

/** search-by-email for an infected address (engines.md 5.12, made complete). */
const EMAIL_FOUND = {
  message: 'This email address is associated with a computer that was infected by an info-stealer, all the credentials saved on this computer are at risk of being accessed by cybercriminals. Visit https://www.hudsonrock.com/free-tools to discover additional free tools and Infostealers related data.',
  stealers: [
    {
      total_corporate_services: 2,
      total_user_services: 17,
      date_compromised: '2024-03-02T10:11:12.000Z',
      stealer_family: 'RedLine',
      computer_name: 'DESKTOP-1A2B',
      operating_system: 'Windows 10 Pro x64',
      malware_path: 'C:\\Users\\x\\AppData\\Local\\Temp\\a.exe',
      antiviruses: ['Windows Defender'],
      ip: '81.2.**.**',
      top_passwords: ['P••••••', 'q••••••••'],
      top_logins: ['j••••@example.com'],
    },
    {
      total_corporate_services: 0,
      total_user_services: 4,
      date_compromised: '2025-06-20T08:00:00.000Z',
      stealer_family: 'Lumma',
      computer_name: 'LAPTOP-JD',
      operating_system: 'Windows 11 Home x64',
      malware_path: 'C:\\Users\\jd\\Downloads\\setup.exe',
      antiviruses: 'Not Found',
      ip: '92.184.**.**',
      top_passwords: ['1••••••'],
      top_logins: ['j••••@example.com'],
    },
  ],
  total_corporate_services: 2,
  total_user_services: 21,
};

const EMAIL_NOT_FOUND = {
  message: 'This email address is not associated with a computer infected by an info-stealer. Visit https://www.hudsonrock.com/free-tools to discover additional free tools and Infostealers related data.',
  stealers: [],
  total_corporate_services: 0,
  total_user_services: 0,
};

/** search-by-domain (engines.md 5.12), with masked entries in every list it cleans. */
function domainAnswer(): Record<string, unknown> {
  return {
    total: 120,
    totalStealers: 98,
    employees: 12,
    users: 108,
    third_parties: 4,
    totalUrls: 57,
    last_employee_compromised: '2025-11-02T00:00:00.000Z',
    last_user_compromised: '2026-01-05T00:00:00.000Z',
    is_shopify: false,
    applications: [{ keyword: 'vpn', occurrence: 3 }, { keyword: 'sso', occurrence: 2 }],
    stealerFamilies: { RedLine: 40, Lumma: 30, Raccoon: 28, total: 98 },
    employeePasswords: { totalPass: 12, too_weak: { qty: 3, perc: 25 } },
    data: {
      all_urls: [
        { type: 'client', url: 'https://login.example.com', occurrence: 33 },
        { type: 'client', url: 'https://••••••.example.com', occurrence: 2 },
        { type: 'employee', url: 'https://vpn.example.com', occurrence: 5 },
      ],
      clients_urls: [{ url: 'https://login.example.com', occurrence: 33 }, { url: 'https://••••.example.com/a', occurrence: 1 }],
      employees_urls: [{ url: 'https://vpn.example.com', occurrence: 5 }],
    },
    stats: {
      // A URL with the letters "url" in it: the reference crashed on it (see the Bug test).
      clients_urls: ['https://login.example.com', 'https://myurl.example.com', 'https://••••.example.com'],
      employees_urls: ['https://vpn.example.com'],
      totalEmployees: 12,
      totalUsers: 108,
    },
    thirdPartyDomains: [{ domain: 'partner.example', occurrence: 4 }, { domain: null, occurrence: 1 }, { domain: '••••.example', occurrence: 1 }],
  };
}

const DOMAIN_RESULT = {
  total: 120,
  totalStealers: 98,
  employees: 12,
  users: 108,
  third_parties: 4,
  totalUrls: 57,
  last_employee_compromised: '2025-11-02T00:00:00.000Z',
  last_user_compromised: '2026-01-05T00:00:00.000Z',
  is_shopify: false,
  applications: [{ keyword: 'vpn', occurrence: 3 }, { keyword: 'sso', occurrence: 2 }],
  stealerFamilies: { RedLine: 40, Lumma: 30, Raccoon: 28, total: 98 },
  employeePasswords: { totalPass: 12, too_weak: { qty: 3, perc: 25 } },
  data: {
    all_urls: [
      { type: 'client', url: 'https://login.example.com', occurrence: 33 },
      { type: 'employee', url: 'https://vpn.example.com', occurrence: 5 },
    ],
    clients_urls: [{ url: 'https://login.example.com', occurrence: 33 }],
    employees_urls: [{ url: 'https://vpn.example.com', occurrence: 5 }],
  },
  stats: {
    clients_urls: ['https://login.example.com', 'https://myurl.example.com'],
    employees_urls: ['https://vpn.example.com'],
    totalEmployees: 12,
    totalUsers: 108,
  },
  thirdPartyDomains: [{ domain: 'partner.example', occurrence: 4 }],
};

const DOMAIN_NOT_FOUND = {
  total: 0, totalStealers: 0, employees: 0, users: 0, third_parties: 0, totalUrls: 0,
  last_employee_compromised: null, last_user_compromised: null, is_shopify: false,
  applications: [], stealerFamilies: { total: 0 },
  data: { all_urls: [], clients_urls: [], employees_urls: [] },
  stats: { clients_urls: [], employees_urls: [], totalEmployees: 0, totalUsers: 0 },
  thirdPartyDomains: [],
};

/** Answers by query value, like the real API. */
const upstream: Record<string, FakeRoute> = {
  [`GET ${BASE}/search-by-email`]: (req) => reply.json(req.query.get('email') === 'jane.doe@example.com' ? EMAIL_FOUND : EMAIL_NOT_FOUND),
  [`GET ${BASE}/search-by-domain`]: (req) => reply.json(req.query.get('domain') === 'example.com' || req.query.get('domain') === 'login.example.com' ? domainAnswer() : DOMAIN_NOT_FOUND),
};

const closers: (() => Promise<void>)[] = [];

async function setup(routes: Record<string, FakeRoute>, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp(routes);
  const harness = engineHarness(engine, { settings: { base_url: `${fake.url}${BASE}`, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}

/** Every route answering `route` (for failure tests). */
function both(route: FakeRoute): Record<string, FakeRoute> {
  return { [`GET ${BASE}/search-by-email`]: route, [`GET ${BASE}/search-by-domain`]: route };
}


after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_08 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_08');
    assert.equal(engine.service, 'hudsonrock');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'email', 'free_no_key']);
    assert.deepEqual(engine.types, ['FQDN', 'URL', 'Email']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, []);
    assert.equal(engine.defaults.base_url, 'https://cavalier.hudsonrock.com/api/json/v2/osint-tools');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, infostealerLookup);
  });

  test('summary', () => {
    assert.equal(engine.summary(EMAIL_FOUND as EmailExposure), '2 infected computers (RedLine, Lumma), last 2025-06-20');
    assert.equal(engine.summary(EMAIL_NOT_FOUND as EmailExposure), 'no infostealer infection');
    assert.equal(engine.summary(DOMAIN_RESULT as DomainExposure), '120 compromised (12 employees, 108 users), last 2026-01-05');
    assert.equal(engine.summary(DOMAIN_NOT_FOUND as DomainExposure), 'no infostealer data');
  });

  test('details: e-mail infections, domain exposure with its hudsonrock.com page; no passwords', () => {
    assert.deepEqual(engine.details!(EMAIL_FOUND as EmailExposure, 'jane.doe@example.com'), [
      { label: 'Infected computers', value: '2' },
      { label: 'Stealer families', value: 'RedLine, Lumma' },
      { label: 'Last compromised', value: '2025-06-20T08:00:00.000Z' },
      { label: 'Computers', value: 'DESKTOP-1A2B, LAPTOP-JD' },
      { label: 'Operating systems', value: 'Windows 10 Pro x64, Windows 11 Home x64' },
      { label: 'Corporate services', value: '2' },
      { label: 'User services', value: '21' },
    ]);
    const domain = engine.details!(DOMAIN_RESULT as DomainExposure, 'https://Login.Example.com:8443/sso');
    assert.deepEqual(domain, [
      { label: 'Compromised', value: '120' },
      { label: 'Employees', value: '12' },
      { label: 'Users', value: '108' },
      { label: 'Third parties', value: '4' },
      { label: 'Last employee compromised', value: '2025-11-02T00:00:00.000Z' },
      { label: 'Last user compromised', value: '2026-01-05T00:00:00.000Z' },
      { label: 'Stealer families', value: 'RedLine (40), Lumma (30), Raccoon (28)' },
      { label: 'Employee URLs', value: 'https://vpn.example.com (5)' },
      { label: 'Applications', value: 'vpn (3), sso (2)' },
      {
        label: 'Hudson Rock',
        value: 'https://www.hudsonrock.com/search/domain/login.example.com',
        href: 'https://www.hudsonrock.com/search/domain/login.example.com',
      },
    ]);
    const text = JSON.stringify(engine.details!(EMAIL_FOUND as EmailExposure, 'jane.doe@example.com'));
    assert.ok(!text.includes('••'), 'masked passwords and logins are not shown');
    assert.deepEqual(engine.details!(DOMAIN_NOT_FOUND as DomainExposure, 'quiet.example.org').map((f) => f.label),
      ['Compromised', 'Employees', 'Users', 'Third parties', 'Hudson Rock']);
  });
});

describe('provider_08 against a loopback Hudson Rock', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup(upstream));
  });

  test('e-mail: the answer passed through, field by field', async () => {
    fake.reset();
    const result = await harness.run('jane.doe@example.com', 'Email') as EmailExposure;
    assert.deepEqual(fake.requests.map((r) => `${r.path}?${r.query}`), [`${BASE}/search-by-email?email=jane.doe%40example.com`]);
    assert.equal(result.message, EMAIL_FOUND.message);
    assert.equal(result.total_corporate_services, 2);
    assert.equal(result.total_user_services, 21);
    assert.equal(result.stealers.length, 2);
    const [first] = result.stealers;
    assert.equal(first!.computer_name, 'DESKTOP-1A2B');
    assert.equal(first!.operating_system, 'Windows 10 Pro x64');
    assert.equal(first!.date_compromised, '2024-03-02T10:11:12.000Z');
    assert.equal(first!.stealer_family, 'RedLine');
    assert.equal(first!.total_corporate_services, 2);
    assert.equal(first!.total_user_services, 17);
    assert.deepEqual(first!.top_passwords, ['P••••••', 'q••••••••']);
    assert.deepEqual(result, EMAIL_FOUND);
  });

  test('e-mail not found: the documented empty answer', async () => {
    const result = await harness.run('nobody@example.org', 'Email') as EmailExposure;
    assert.deepEqual(result, EMAIL_NOT_FOUND);
    assert.equal(engine.summary(result), 'no infostealer infection');
  });

  test('e-mail with + and a query-significant character is encoded by the client', async () => {
    fake.reset();
    await harness.run('a+b&c=d@example.org', 'Email');
    assert.equal(fake.requests[0]!.query.get('email'), 'a+b&c=d@example.org');
  });

  test('domain: the answer without masked entries, field by field', async () => {
    fake.reset();
    const result = await harness.run('example.com', 'FQDN') as DomainExposure;
    assert.deepEqual(fake.requests.map((r) => `${r.path}?${r.query}`), [`${BASE}/search-by-domain?domain=example.com`]);
    assert.equal(result.total, 120);
    assert.equal(result.totalStealers, 98);
    assert.equal(result.employees, 12);
    assert.equal(result.users, 108);
    assert.equal(result.third_parties, 4);
    assert.equal(result.totalUrls, 57);
    assert.equal(result.last_employee_compromised, '2025-11-02T00:00:00.000Z');
    assert.equal(result.last_user_compromised, '2026-01-05T00:00:00.000Z');
    assert.equal(result.is_shopify, false);
    assert.deepEqual(result.stealerFamilies, { RedLine: 40, Lumma: 30, Raccoon: 28, total: 98 });
    assert.deepEqual(result.thirdPartyDomains, [{ domain: 'partner.example', occurrence: 4 }]);
    assert.deepEqual(result, DOMAIN_RESULT);
  });

  // Bug in the reference: it filtered stats' string lists as object lists, so a URL containing
  // "url" made it index a string and the whole engine returned null.
  test('Bug fixed: a stats URL containing "url" is kept, masked strings dropped', async () => {
    const result = await harness.run('example.com', 'FQDN') as DomainExposure;
    assert.deepEqual(result.stats?.clients_urls, ['https://login.example.com', 'https://myurl.example.com']);
    assert.deepEqual(result.data?.clients_urls, [{ url: 'https://login.example.com', occurrence: 33 }]);
  });

  test('domain not found: the documented empty answer', async () => {
    const result = await harness.run('quiet.example.org', 'FQDN') as DomainExposure;
    assert.deepEqual(result, DOMAIN_NOT_FOUND);
    assert.equal(engine.summary(result), 'no infostealer data');
  });

  test('FQDN is lower-cased, its root dot dropped', async () => {
    fake.reset();
    await harness.run('Example.COM.', 'FQDN');
    assert.equal(fake.requests[0]!.query.get('domain'), 'example.com');
  });

  // engines.md 8 item 15: the reference's splitting on "/" and ":" kept userinfo ("user")
  // or cut IPv6 literals; the shared URL parser gives the host.
  test('URL: its host, without userinfo or port', async () => {
    fake.reset();
    const result = await harness.run('https://jane:secret@Login.Example.com:8443/sso?next=/a:b', 'URL') as DomainExposure;
    assert.deepEqual(fake.requests.map((r) => r.query.get('domain')), ['login.example.com']);
    assert.equal(result.total, 120);
  });

  test('URL with an IP host (IPv4 or IPv6 literal): not looked up', async () => {
    fake.reset();
    assert.equal(await harness.run('http://[2001:db8::1]:8080/login', 'URL'), null);
    assert.equal(await harness.run('http://user@192.0.2.10/x', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('unparsable URL: null, no request', async () => {
    fake.reset();
    assert.equal(await harness.run('http://exa mple.com/', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_08: minimal and degenerate answers', () => {
  /** What the engine makes of `body`, answered for both searches. */
  async function read(body: unknown, value: string, type: 'Email' | 'FQDN'): Promise<unknown> {
    const { harness } = await setup(both(reply.json(body)));
    return harness.run(value, type);
  }

  const EMAIL_EMPTY = { stealers: [], total_corporate_services: 0, total_user_services: 0 };
  const DOMAIN_EMPTY = {
    total: 0, totalStealers: 0, employees: 0, users: 0, third_parties: 0, totalUrls: 0,
    last_employee_compromised: null, last_user_compromised: null, is_shopify: false, applications: [], thirdPartyDomains: [],
  };

  // Issue 26: the reference passes the body through; an answer without stealers/total was refused.
  test('{}: nothing found, with the documented defaults', async () => {
    const email = await read({}, 'jane.doe@example.com', 'Email') as EmailExposure;
    assert.deepEqual(email, EMAIL_EMPTY);
    assert.equal(engine.summary(email), 'no infostealer infection');
    assert.equal(engine.evidence!(email), undefined);
    const domain = await read({}, 'example.com', 'FQDN') as DomainExposure;
    assert.deepEqual(domain, DOMAIN_EMPTY);
    assert.equal(engine.summary(domain), 'no infostealer data');
  });

  test('a message only: passed through, with the defaults', async () => {
    const message = 'This email address is not associated with a computer infected by an info-stealer.';
    assert.deepEqual(await read({ message }, 'jane.doe@example.com', 'Email'), { message, ...EMAIL_EMPTY });
    assert.deepEqual(await read({ message, error: '' }, 'example.com', 'FQDN'), { message, error: '', ...DOMAIN_EMPTY });
  });

  test('e-mail: null stealers, one stealer for a list, null stealers dropped, totals as strings or null', async () => {
    assert.deepEqual(await read({ stealers: null, total_corporate_services: null, total_user_services: '' }, 'jane.doe@example.com', 'Email'), EMAIL_EMPTY);
    const one = await read({
      stealers: { computer_name: 'PC-1', date_compromised: '2024-03-02T10:11:12.000Z', total_user_services: '3', ip: '81.2.**.**' },
      total_user_services: '3',
    }, 'jane.doe@example.com', 'Email') as EmailExposure;
    assert.deepEqual(one, {
      stealers: [{
        computer_name: 'PC-1', operating_system: null, date_compromised: '2024-03-02T10:11:12.000Z', stealer_family: null,
        total_corporate_services: 0, total_user_services: 3, ip: '81.2.**.**',
      }],
      total_corporate_services: 0,
      total_user_services: 3,
    });
    assert.equal(engine.summary(one), '1 infected computer, last 2024-03-02');
    const nulls = await read({ stealers: [null, { stealer_family: 'Lumma' }, null] }, 'jane.doe@example.com', 'Email') as EmailExposure;
    assert.deepEqual(nulls.stealers, [{
      computer_name: null, operating_system: null, date_compromised: null, stealer_family: 'Lumma', total_corporate_services: 0, total_user_services: 0,
    }]);
  });

  test('domain: counts as strings or null, is_shopify as 0/"", one application or third party for a list', async () => {
    const result = await read({
      total: '5', totalStealers: null, employees: '2', users: 3, third_parties: '', totalUrls: null,
      last_employee_compromised: '', last_user_compromised: '2026-01-05T00:00:00.000Z', is_shopify: 0,
      applications: { keyword: 'vpn', occurrence: '3' },
      thirdPartyDomains: { domain: 'partner.example' },
      stealerFamilies: null, data: null,
    }, 'example.com', 'FQDN') as DomainExposure;
    assert.deepEqual(result, {
      ...DOMAIN_EMPTY,
      // `last_employee_compromised: ""` is what Hudson Rock sent: kept (issue 32; it was null before).
      total: 5, employees: 2, users: 3, last_employee_compromised: '', last_user_compromised: '2026-01-05T00:00:00.000Z',
      applications: [{ keyword: 'vpn', occurrence: 3 }],
      thirdPartyDomains: [{ domain: 'partner.example' }],
      stealerFamilies: null, data: null,
    });
    assert.equal(engine.summary(result), '5 compromised (2 employees, 3 users), last 2026-01-05');
    assert.equal(engine.evidence!(result)?.level, 'suspicious');
    assert.equal(engine.details!(result, 'example.com').some((f) => f.label === 'Last employee compromised'), false);
  });

  test('issue 32: a stealer\'s texts sent as "" stay ""; summary and card skip them', async () => {
    const result = await read({
      stealers: [{ computer_name: '', operating_system: '', date_compromised: '', stealer_family: '' }],
    }, 'jane.doe@example.com', 'Email') as EmailExposure;
    assert.deepEqual(result.stealers, [{
      computer_name: '', operating_system: '', date_compromised: '', stealer_family: '', total_corporate_services: 0, total_user_services: 0,
    }]);
    assert.equal(engine.summary(result), '1 infected computer');
    assert.deepEqual(engine.details!(result, 'jane.doe@example.com').map((f) => f.label), ['Infected computers', 'Corporate services', 'User services']);
  });

  test('a count that is no number: an error naming it', async () => {
    await rejectsWith(read({ total: 'lots' }, 'example.com', 'FQDN'), /^unexpected answer from upstream at total: expected a number$/);
    await rejectsWith(read({ stealers: ['PC-1'] }, 'jane.doe@example.com', 'Email'), /^unexpected answer from upstream at stealers\.0: /);
  });
});

describe('provider_08 upstream failures', () => {
  test('HTTP 500: an error, not an empty result', async () => {
    const { harness } = await setup(both(reply.status(500)), { retries: 0 });
    await rejectsWith(harness.run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    await rejectsWith(harness.run('jane.doe@example.com', 'Email'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(both(sequence(reply.tooMany(1), reply.json(domainAnswer()))));
    assert.deepEqual(await harness.run('example.com', 'FQDN'), DOMAIN_RESULT);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(both(reply.malformed()));
    await rejectsWith(harness.run('example.com', 'FQDN'), /malformed JSON/);
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    const { harness } = await setup(both(reply.json({ stealers: 'none', total: 'many' })));
    await rejectsWith(harness.run('jane.doe@example.com', 'Email'), /unexpected answer from upstream at stealers/);
    await rejectsWith(harness.run('example.com', 'FQDN'), /unexpected answer from upstream at total/);
  });

  test('an answer carrying Hudson Rock\'s error: an error in its words', async () => {
    const { harness } = await setup(both(reply.json({ error: 'Too many requests,\n please try again later.' })));
    await rejectsWith(harness.run('example.com', 'FQDN'), /^Hudson Rock: Too many requests, please try again later\.$/);
    await rejectsWith(harness.run('jane.doe@example.com', 'Email'), /^Hudson Rock: Too many requests/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(both(reply.hang()), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});
