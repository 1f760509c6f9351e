/**
 * The clients written for the reference work against `oas serve` unchanged: their request shapes
 * are replayed here as they send them (engine lists, how they join base URL and prefix, polling,
 * results), against a real server on loopback fakes.
 *
 * - The reference's MCP server (mcp-cyberbro): `get_engines` offers 35 names; `analyze_observable`
 *   posts `{text, engines}` to `{CYBERBRO_URL}/{API_PREFIX}/analyze` (API_PREFIX as the operator
 *   wrote it, so `/api` gives `//api/analyze`), then polls `is_analysis_complete/<id>` and reads
 *   `results/<id>`.
 * - The third-party CLI (cyberbro-cli): posts `{text, engines, ignore_cache}` to
 *   `{base}/{prefix}/analyze` (prefix trimmed of slashes), requires `analysis_id` and `link` in the
 *   answer, polls, and reads results as an array; its default engines for a domain include crtsh.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';

/** Every engine name the MCP server offers (its `get_engines` list). */
const MCP_ENGINES = [
  'misp_feedback', 'ransomware_live', 'reverse_dns', 'dfir_iris', 'rdap_whois', 'ipquery', 'abuseipdb', 'ipapi',
  'ipinfo', 'virustotal', 'spur', 'mde', 'crowdstrike', 'google_safe_browsing', 'shodan', 'phishtank', 'threatfox',
  'urlscan', 'google', 'github', 'ioc_one_html', 'ioc_one_pdf', 'opencti', 'abusix', 'hudsonrock', 'hister',
  'webscout', 'criminalip', 'alienvault', 'misp', 'google_dns', 'crtsh', 'rl_analyze', 'bad_asn', 'rosti',
];

/** The 33 names the third-party CLI knows, and its default lists per observable type. */
const CLI_ENGINES = [
  'abuseipdb', 'abusix', 'alienvault', 'bad_asn', 'chrome_extension', 'criminalip', 'crowdstrike', 'crtsh', 'dfir_iris',
  'github', 'google', 'google_dns', 'google_safe_browsing', 'hudsonrock', 'ioc_one_html', 'ioc_one_pdf', 'ipapi',
  'ipinfo', 'ipquery', 'mde', 'misp', 'opencti', 'phishtank', 'rdap_whois', 'reverse_dns', 'rl_analyze', 'rosti',
  'shodan', 'spur', 'threatfox', 'urlscan', 'virustotal', 'webscout',
];
const CLI_DEFAULTS = {
  FQDN: ['virustotal', 'urlscan', 'google_dns', 'rdap_whois', 'crtsh', 'phishtank', 'google_safe_browsing'],
  IPv4: ['abuseipdb', 'virustotal', 'shodan', 'ipquery', 'google_dns', 'reverse_dns', 'bad_asn', 'urlscan'],
  CHROME_EXTENSION: ['chrome_extension', 'github', 'opencti'],
};

/** Names of the older catalog and the reference's releases beyond the two lists above. */
const OLDER_NAMES = ['rdap'];

let upstreams: Upstreams;
const servers: ServeProcess[] = [];

before(async () => {
  upstreams = await startUpstreams();
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await upstreams.close();
});

async function serve(extra: Record<string, unknown> = {}): Promise<ServeProcess> {
  const server = await spawnServe(configFor(upstreams, extra).file);
  servers.push(server);
  return server;
}

interface Json {
  status: number;
  body: unknown;
}

async function postJson(url: string, payload: unknown): Promise<Json> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  return { status: response.status, body: await response.json() };
}

async function getJson(url: string): Promise<Json> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/** What both clients do after the POST: poll until complete, then read the results. */
async function pollAndRead(api: string, id: string): Promise<unknown[]> {
  for (let polls = 0; ; polls++) {
    const poll = await getJson(`${api}/is_analysis_complete/${id}`);
    assert.equal(poll.status, 200);
    assert.equal(typeof (poll.body as { complete: unknown }).complete, 'boolean');
    if ((poll.body as { complete: boolean }).complete) break;
    assert.ok(polls < 600, 'the analysis completes');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const results = await getJson(`${api}/results/${id}`);
  assert.equal(results.status, 200);
  assert.ok(Array.isArray(results.body), 'results are an array');
  return results.body as unknown[];
}

/** The analysis handle both clients parse: analysis_id and link, as the spec gives them. */
function handle(answer: Json): string {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const { analysis_id: id, link } = answer.body as { analysis_id: unknown; link: unknown };
  assert.equal(typeof id, 'string');
  assert.equal(link, `/results/${String(id)}`);
  return id as string;
}

describe('the reference MCP server', () => {
  test('every engine it offers, by its API_PREFIX written api, /api and api/', async () => {
    const server = await serve();
    for (const prefix of ['api', '/api', 'api/']) {
      // mcp-cyberbro: f"{CYBERBRO_URL.rstrip('/')}/{API_PREFIX.rstrip('/')}"
      const api = `${server.url}/${prefix.replace(/\/+$/, '')}`;
      const id = handle(await postJson(`${api}/analyze`, { text: 'Check example.com and 8.8.8.8 please', engines: MCP_ENGINES }));
      const results = await pollAndRead(api, id);
      assert.equal(results.length, 2);
      const domain = results.find((r) => (r as { observable: string }).observable === 'example.com') as Record<string, unknown>;
      assert.ok(domain, 'the domain has its result');
      assert.equal(domain.type, 'FQDN');
      for (const engine of ['reverse_dns', 'rdap_whois', 'urlscan']) assert.ok(engine in domain, `${engine} answered for the domain`);
      // Engines without their keys answer as errors of their own, never as a failed request.
      const errors = (domain.errors ?? {}) as Record<string, string>;
      assert.match(errors.virustotal ?? '', /not configured/);
    }
  });
});

describe('the third-party CLI', () => {
  test('its default engines per type, with ignore_cache, and every name it knows', async () => {
    const server = await serve();
    // cyberbro-cli: format!("{}/{}/{}", base.trim_end_matches('/'), prefix.trim_matches('/'), path)
    const api = `${server.url}/api`;
    for (const [text, engines] of [['example.com', CLI_DEFAULTS.FQDN], ['8.8.8.8', CLI_DEFAULTS.IPv4], ['aapbdbdomjkkjkaonfhkkikfgjllcleb', CLI_DEFAULTS.CHROME_EXTENSION]] as const) {
      const id = handle(await postJson(`${api}/analyze`, { text, engines, ignore_cache: false }));
      const results = await pollAndRead(api, id);
      assert.equal(results.length, 1, `${text}: one result`);
    }
    const all = handle(await postJson(`${api}/analyze`, { text: 'example.com', engines: CLI_ENGINES, ignore_cache: true }));
    assert.equal((await pollAndRead(api, all)).length, 1);
  });
});

describe('names and prefixes', () => {
  test('the older catalog\'s names run too; a name that is no engine is still a 400 naming it', async () => {
    const server = await serve();
    const api = `${server.url}/api`;
    const id = handle(await postJson(`${api}/analyze`, { text: 'example.com', engines: [...OLDER_NAMES, 'crtsh'] }));
    await pollAndRead(api, id);
    const refused = await postJson(`${api}/analyze`, { text: 'example.com', engines: ['urlscan', 'no_such_engine'] });
    assert.equal(refused.status, 400);
    assert.match((refused.body as { error: string }).error, /no_such_engine/);
  });

  for (const written of ['tools/api', '/tools/api', 'tools/api/', '/tools/api/', 'tools//api']) {
    test(`api_prefix written ${JSON.stringify(written)} serves /tools/api/ with no double slash needed`, async () => {
      const server = await serve({ api_prefix: written });
      const api = `${server.url}/tools/api`;
      const id = handle(await postJson(`${api}/analyze`, { text: 'example.com', engines: ['reverse_dns'] }));
      assert.equal((await pollAndRead(api, id)).length, 1);
      assert.equal((await getJson(`${server.url}/api/is_analysis_complete/${id}`)).status, 404, 'the default prefix is not served');
    });
  }
});
