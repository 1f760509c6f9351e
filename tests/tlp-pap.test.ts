/**
 * What leaves (issue 34): TLP and PAP through the API, the CLI and MCP, against the loopback
 * fakes, each recording which upstream saw which observable (the DNS fake its queries, the HTTP
 * fakes their requests). TLP:RED reaches only the engines the team runs; an internal address or
 * domain never reaches a third party, even at TLP:CLEAR; PAP:AMBER resolves nothing; a per-engine
 * ceiling; custom engines' declarations; the defaults as before; bad values refused naming the
 * allowed ones; a cached answer shown whatever the marking; withheld is not failed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import ExcelJS from 'exceljs';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ChildProcess } from 'node:child_process';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import * as mispFake from './fakes/misp.js';
import { intelDefinitions, startInternalIntel, INTEL_KEY, type InternalIntelFake } from './fakes/internal-intel.js';
import { startFakeCyberbro, type FakeCyberbro } from './fakes/cyberbro-server.js';
import { noStack, runOas } from './helpers/cli.js';
import { call, textOf } from './helpers/mcp.js';
import { BIN, completedResults, spawnServe, type ServeProcess } from './helpers/serve.js';
import { killAtExit, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const MISP_KEY = 'misp-key-for-tlp-tests-0123456789';
/** Third parties: reverse_dns (touches the target), ipquery (provider_13, on the resolved IP), ipapi (provider_11). The team's own: MISP (provider_15). */
const ENGINES = ['reverse_dns', 'provider_13', 'provider_15'];

type Result = Record<string, unknown> & { withheld?: Record<string, string>; errors?: Record<string, string> };

let upstreams: Upstreams;
let misp: FakeHttpServer;
let intel: InternalIntelFake;
let server: ServeProcess;
let config: { dir: string; file: string; dataDir: string };
let audit: string;

/** Who saw what: names the DNS fake was asked, paths of ipquery, ipapi and MISP's searched values. */
function seen() {
  return {
    dns: upstreams.dns.queries.map((q) => q.name.replace(/\.$/, '').toLowerCase()),
    ipquery: upstreams.intel.requests.filter((r) => r.path.startsWith('/ipquery/')).map((r) => decodeURIComponent(r.path.slice('/ipquery/'.length))),
    ipapi: upstreams.intel.requests.filter((r) => r.path.startsWith('/ipapi/')).map((r) => r.path),
    misp: misp.requests.map((r) => (JSON.parse(r.body) as { value: string }).value),
  };
}

function reset(): void {
  upstreams.dns.queries.length = 0;
  upstreams.intel.reset();
  misp.reset();
  intel.server.reset();
}

async function analyze(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function resultsOf(body: Record<string, unknown>): Promise<Result[]> {
  const { status, json } = await analyze({ ignore_cache: true, ...body });
  assert.equal(status, 200, JSON.stringify(json));
  return completedResults<Result>(server.url, json.analysis_id as string);
}

before(async () => {
  upstreams = await startUpstreams();
  misp = await startFakeHttp(mispFake.fakeRoutes({ key: MISP_KEY }));
  intel = await startInternalIntel({ key: INTEL_KEY, records: { '9.9.9.10': { score: 90, category: 'c2', tags: [] } } });
  const definitions = intelDefinitions(intel.url) as Record<string, Record<string, unknown>>;
  config = configFor(upstreams, {
    internal_networks: ['45.33.0.0/16'],
    internal_domains: ['corp.example.net'],
    engines: {
      provider_15: { ...mispFake.fakeSettings(misp.url), api_key: MISP_KEY },
      provider_11: { max_tlp: 'GREEN' },
    },
    custom_engines: {
      // The fake's address engine three times: as defined (a third party), in-house, and a third party allowed RED.
      intel: definitions.intel,
      intel_inhouse: { ...definitions.intel, label: 'Intel in-house', disclosure: 'internal' },
      intel_red: { ...definitions.intel, label: 'Intel RED', max_tlp: 'RED' },
    },
  });
  audit = join(config.dir, 'audit.log');
  const written = JSON.parse(readFileSync(config.file, 'utf8')) as Record<string, unknown>;
  written.audit_log = audit;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(config.file, JSON.stringify(written));
  server = await spawnServe(config.file, { env: { INTEL_API_KEY: INTEL_KEY } });
});

after(async () => {
  await server?.stop();
  await Promise.all([upstreams?.close(), misp?.close(), intel?.close()]);
});

describe('the API', () => {
  test('a request that names neither behaves as before: every engine asked, nothing withheld, recorded as TLP:AMBER PAP:GREEN', async () => {
    reset();
    const [result] = await resultsOf({ text: 'example.com', engines: ENGINES });
    assert.equal(result!.withheld, undefined);
    assert.equal(result!.errors, undefined, JSON.stringify(result!.errors));
    const saw = seen();
    assert.ok(saw.dns.includes('example.com'), 'the domain was resolved');
    assert.deepEqual(saw.ipquery, ['93.184.215.14'], 'ipquery got the resolved address');
    assert.deepEqual(saw.misp, ['example.com']);
    assert.ok(result!.provider_13 !== null);
  });

  test('TLP:RED reaches only the engines the team runs: no DNS query, no third-party request, each withheld engine null with its reason', async () => {
    reset();
    const [result] = await resultsOf({ text: 'example.com', engines: ENGINES, tlp: 'TLP:RED' });
    const saw = seen();
    assert.deepEqual(saw.dns, [], 'no DNS query');
    assert.deepEqual(saw.ipquery, [], 'ipquery saw nothing');
    assert.deepEqual(saw.misp, ['example.com'], 'MISP (in-house) was asked');
    assert.equal(result!.reverse_dns, null);
    assert.equal(result!.provider_13, null);
    assert.equal(result!.errors, undefined, 'withheld is not an error');
    assert.deepEqual(Object.keys(result!.withheld ?? {}), ['reverse_dns', 'provider_13']);
    assert.match(result!.withheld!.reverse_dns!, /^not sent: TLP:RED allows only engines that keep data in-house \(.*engines\.reverse_dns\.max_tlp is AMBER\)$/);
    // The IP-only engine says it was not sent because the domain was not resolved.
    assert.match(result!.withheld!.provider_13!, /^not sent: .* runs on the address example\.com resolves to, and example\.com was not resolved: TLP:RED/);
    for (const reason of Object.values(result!.withheld!)) assert.ok(!reason.includes('\n'));
  });

  test('PAP:AMBER resolves nothing: the IP-only engines are withheld, saying why; a third party that does not touch the target still runs', async () => {
    reset();
    const [result] = await resultsOf({ text: 'example.com\n8.8.8.8', engines: [...ENGINES, 'provider_11'], pap: 'amber' }).then((r) => r);
    const saw = seen();
    assert.deepEqual(saw.dns, [], 'no DNS query at all (neither the name nor the PTR of 8.8.8.8)');
    assert.match(result!.withheld!.reverse_dns!, /PAP:AMBER forbids any lookup that reaches the observable's own infrastructure/);
    assert.match(result!.withheld!.provider_13!, /example\.com was not resolved: PAP:AMBER/);
    assert.deepEqual(saw.ipquery, ['8.8.8.8'], 'ipquery (PAP ceiling AMBER) still got the address given as such');
  });

  test('an internal address or domain never reaches a third party, even at TLP:CLEAR', async () => {
    reset();
    const results = await resultsOf({ text: '45.33.32.156 vpn.corp.example.net nas.home.arpa', engines: [...ENGINES, 'rdap_whois'], tlp: 'CLEAR', pap: 'CLEAR' });
    const saw = seen();
    assert.deepEqual(saw.ipquery, []);
    assert.deepEqual(saw.dns, []);
    assert.deepEqual(upstreams.rdap.http.requests.filter((r) => /corp\.example\.net|home\.arpa/.test(r.path)), []);
    assert.deepEqual(saw.misp.sort(), ['45.33.32.156', 'nas.home.arpa', 'vpn.corp.example.net'], 'the in-house MISP still gets them');
    const [ip, name, home] = results;
    assert.match(home!.withheld!.rdap_whois!, /nas\.home\.arpa is under \.home\.arpa, an internal domain/);
    assert.match(ip!.withheld!.provider_13!, /45\.33\.32\.156 is inside 45\.33\.0\.0\/16, an internal network/);
    assert.match(name!.withheld!.rdap_whois!, /vpn\.corp\.example\.net is under \.corp\.example\.net, an internal domain/);
  });

  test('a per-engine ceiling: engines.provider_11.max_tlp GREEN withholds ipapi from a TLP:AMBER analysis', async () => {
    reset();
    const [result] = await resultsOf({ text: '8.8.8.8', engines: ['provider_11', 'provider_13'], tlp: 'AMBER' });
    assert.deepEqual(seen().ipapi, []);
    assert.deepEqual(seen().ipquery, ['8.8.8.8']);
    assert.match(result!.withheld!.provider_11!, /TLP:AMBER is above what this engine may receive .*engines\.provider_11\.max_tlp is GREEN/);
  });

  test('custom engines declare where they send: third party by default, in-house when they say so, their own max_tlp', async () => {
    reset();
    const [result] = await resultsOf({ text: '9.9.9.10', engines: ['intel', 'intel_inhouse', 'intel_red'], tlp: 'RED' });
    assert.match(result!.withheld!.intel!, /TLP:RED allows only engines that keep data in-house/);
    assert.equal(Object.keys(result!.withheld!).length, 1);
    assert.equal(intel.server.requests.length, 2, 'the in-house one and the one allowed RED were called');
    assert.ok(result!.intel_inhouse !== null && result!.intel_red !== null);
  });

  test('an engine whose dependency is withheld is withheld, saying which', async () => {
    reset();
    const [result] = await resultsOf({ text: '8.8.8.8', engines: ['bad_asn'], tlp: 'RED' });
    assert.deepEqual(seen().ipquery, []);
    assert.match(result!.withheld!.bad_asn!, /^not sent: it works from provider_\d+, which was withheld \(TLP:RED/);
  });

  test('a cached answer is shown whatever the marking: using it sends nothing', async () => {
    reset();
    await resultsOf({ text: '9.9.9.9', engines: ['provider_13'] });
    assert.deepEqual(seen().ipquery, ['9.9.9.9']);
    reset();
    const { json } = await analyze({ text: '9.9.9.9', engines: ['provider_13'], tlp: 'RED' });
    const [result] = await completedResults<Result>(server.url, json.analysis_id as string);
    assert.deepEqual(seen().ipquery, [], 'answered from the cache');
    assert.equal(result!.withheld, undefined);
    assert.notEqual(result!.provider_13, null);
  });

  test('bad values are refused with 400, naming the allowed ones', async () => {
    const tlp = await analyze({ text: 'example.com', engines: ENGINES, tlp: 'PURPLE' });
    assert.equal(tlp.status, 400);
    assert.equal(tlp.json.error, 'tlp: "PURPLE" is no TLP level: use one of CLEAR, GREEN, AMBER, AMBER+STRICT, RED (with or without "TLP:", in any case)');
    const pap = await analyze({ text: 'example.com', engines: ENGINES, pap: 'AMBER+STRICT' });
    assert.equal(pap.status, 400);
    assert.match(pap.json.error as string, /^pap: "AMBER\+STRICT" is no PAP level: use one of CLEAR, GREEN, AMBER, RED/);
    const notString = await analyze({ text: 'example.com', engines: ENGINES, tlp: 3 });
    assert.equal(notString.status, 400);
    assert.match(notString.json.error as string, /"tlp" must be a string: CLEAR, GREEN, AMBER, AMBER\+STRICT or RED/);
  });

  test('the audit trail\'s analysis_started line records the marking', async () => {
    await resultsOf({ text: '8.8.4.4', engines: ['provider_13'], tlp: 'green', pap: 'RED' });
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const started = lines.filter((l) => l.action === 'analysis_started').at(-1)!;
    assert.equal(started.tlp, 'GREEN');
    assert.equal(started.pap, 'RED');
  });
});

describe('exports carry the marking', () => {
  let id: string;
  before(async () => {
    const { json } = await analyze({ text: '8.8.8.8 example.com', engines: ['provider_13'], tlp: 'amber+strict', pap: 'RED' });
    id = json.analysis_id as string;
    await completedResults(server.url, id);
  });
  const exported = async (format: string) => {
    const res = await fetch(`${server.url}/export/${id}?format=${format}`);
    assert.equal(res.status, 200, format);
    return format === 'xlsx' ? Buffer.from(await res.arrayBuffer()) : await res.text();
  };

  test('STIX: the TLP 2.0 marking definition (its fixed id) in the object_marking_refs of every object but oas\'s identity', async () => {
    const bundle = JSON.parse(await exported('stix') as string) as { objects: Record<string, unknown>[] };
    const definition = bundle.objects.find((o) => o.type === 'marking-definition')!;
    assert.equal(definition.id, 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003');
    assert.equal(definition.name, 'TLP:AMBER+STRICT');
    assert.deepEqual(definition.extensions, { 'extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d': { extension_type: 'property-extension', tlp_2_0: 'amber+strict' } });
    for (const object of bundle.objects) {
      if (object.type === 'identity' || object.type === 'marking-definition') assert.equal(object.object_marking_refs, undefined);
      else assert.deepEqual(object.object_marking_refs, [definition.id], `${object.type} ${object.id}`);
    }
    assert.ok(bundle.objects.some((o) => o.type === 'ipv4-addr'));
  });

  test('MISP: tlp: and PAP: tags, for your organisation only', async () => {
    const { Event } = JSON.parse(await exported('misp') as string) as { Event: { Tag: { name: string }[]; distribution: string } };
    assert.deepEqual(Event.Tag.map((t) => t.name), ['oas', 'tlp:amber+strict', 'PAP:RED']);
    assert.equal(Event.distribution, '0');
  });

  test('JSON: tlp and pap on each element; CSV: a tlp column; xlsx: a first line saying the marking', async () => {
    const elements = JSON.parse(await exported('json') as string) as Record<string, unknown>[];
    for (const element of elements) {
      assert.equal(element.tlp, 'AMBER+STRICT');
      assert.equal(element.pap, 'RED');
    }
    const csv = (await exported('csv') as string).trimEnd().split('\r\n');
    assert.deepEqual(csv[0]!.split(',').slice(-2), ['tlp', 'found_in']);
    for (const line of csv.slice(1)) assert.ok(line.endsWith(',TLP:AMBER+STRICT,'), line);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(await exported('xlsx') as unknown as ExcelJS.Buffer);
    const main = workbook.getWorksheet('Observables')!;
    assert.equal(main.getRow(1).getCell(1).value, 'TLP:AMBER+STRICT · PAP:RED');
    assert.equal(main.getRow(2).getCell(1).value, 'observable');
    assert.equal(main.getRow(3).getCell(1).value, '8.8.8.8');
  });

  test('the API\'s results stay as the spec has them: no tlp or pap keys', async () => {
    const [result] = await completedResults<Record<string, unknown>>(server.url, id);
    assert.equal(result!.tlp, undefined);
    assert.equal(result!.pap, undefined);
  });
});

describe('the CLI', () => {
  test('--tlp red: JSON with the withheld engines, exit 0 (withheld is not failed), nothing sent', async () => {
    reset();
    const run = await runOas(config.dir, ['analyze', 'example.com', '-e', 'reverse_dns,ipquery', '--tlp', 'red', '--ignore-cache', '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const [result] = JSON.parse(run.stdout) as Result[];
    assert.deepEqual(Object.keys(result!.withheld!), ['reverse_dns', 'ipquery']);
    assert.deepEqual(seen().dns, []);
    assert.deepEqual(seen().ipquery, []);
  });

  test('the table says the marking on its first line and each withheld engine with its reason', async () => {
    const run = await runOas(config.dir, ['analyze', '8.8.8.8', '-e', 'ipquery', '--tlp', 'RED', '--pap', 'amber', '--ignore-cache', '--no-color', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.split('\n')[0], 'TLP:RED · PAP:AMBER');
    assert.match(run.stdout.replace(/\s+/g, ' '), /withheld: not sent: TLP:RED allows only engines that keep data in-house/);
  });

  test('a bad --tlp is exit 2, one line naming the allowed values', async () => {
    const run = await runOas(config.dir, ['analyze', 'example.com', '-e', 'ipquery', '--tlp', 'purple', '--config', config.file]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /tlp: "purple" is no TLP level: use one of CLEAR, GREEN, AMBER, AMBER\+STRICT, RED/);
    noStack(run.stderr);
  });

  test('default_tlp RED in the settings marks an analysis that names none', async () => {
    reset();
    const red = configFor(upstreams, { default_tlp: 'RED' });
    const run = await runOas(red.dir, ['analyze', '8.8.8.8', '-e', 'ipquery', '--json', '--config', red.file]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok((JSON.parse(run.stdout) as Result[])[0]!.withheld?.ipquery);
    assert.deepEqual(seen().ipquery, []);
  });

  test('--server: the marking goes to an oas server, and one above AMBER is never sent to a Cyberbro server', async () => {
    reset();
    const run = await runOas(config.dir, ['analyze', '8.8.8.8', '-e', 'provider_13', '--tlp', 'RED', '--ignore-cache', '--json', '--server', server.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok((JSON.parse(run.stdout) as Result[])[0]!.withheld?.provider_13);
    assert.deepEqual(seen().ipquery, []);

    const cyberbro: FakeCyberbro = await startFakeCyberbro();
    try {
      const refused = await runOas(config.dir, ['analyze', '8.8.8.8', '-e', 'ipquery', '--tlp', 'amber+strict', '--server', cyberbro.url]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /not sent: the server at http:\/\/127\.0\.0\.1:\d+ is not an oas server .* TLP:AMBER\+STRICT/);
      assert.equal(cyberbro.requests.filter((r) => r.method === 'POST').length, 0, 'nothing was posted');
      assert.equal(cyberbro.analyses.size, 0);
      const amber = await runOas(config.dir, ['analyze', '8.8.8.8', '-e', 'ipquery', '--tlp', 'AMBER', '--json', '--server', cyberbro.url]);
      assert.notEqual(amber.code, 2, amber.stderr);
      assert.equal(cyberbro.analyses.size, 1, 'an AMBER analysis is sent');
    } finally {
      await cyberbro.close();
    }
  });
});

describe('MCP', () => {
  let client: Client;
  before(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--config', config.file],
      cwd: config.dir,
      env: { ...tmpEnv(), HOME: config.dir, PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    client = new Client({ name: 'oas-tests', version: '1.0.0' });
    await client.connect(transport);
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    if (child) killAtExit(child);
  });
  after(async () => {
    await client?.close();
  });

  test('analyze with tlp RED sends nothing to a third party and says which engines were withheld', async () => {
    reset();
    const result = await call({ client, messages: [], close: async () => {} }, 'analyze', { text: '8.8.8.8', engines: ['ipquery', 'misp'], tlp: 'RED', ignore_cache: true, wait_seconds: 20 });
    assert.notEqual(result.isError, true, textOf(result));
    assert.deepEqual(seen().ipquery, []);
    assert.deepEqual(seen().misp, ['8.8.8.8']);
    assert.match(textOf(result), /withheld: not sent: TLP:RED allows only engines that keep data in-house/);
  });

  test('a bad tlp is a tool error naming the allowed values', async () => {
    const result = await call({ client, messages: [], close: async () => {} }, 'analyze', { text: '8.8.8.8', engines: ['ipquery'], tlp: 'violet' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /"violet" is no TLP level: use one of CLEAR, GREEN, AMBER, AMBER\+STRICT, RED/);
  });
});

describe('the docs (docs/tlp-pap.md)', () => {
  test('its table of where each engine sends what is the catalog\'s, ceilings included', async () => {
    const { readdirSync } = await import('node:fs');
    const { defaultMaxPap, defaultMaxTlp } = await import('../src/marking/levels.js');
    const readme = readFileSync(new URL('../../docs/tlp-pap.md', import.meta.url), 'utf8');
    const start = readme.indexOf('# What leaves the building');
    assert.equal(start, 0, 'docs/tlp-pap.md is the page "What leaves the building"');
    const section = readme.slice(start, readme.indexOf('\n## What comes in'));
    const documented = new Map(section.split('\n').filter((line) => /^\| `/.test(line)).map((line) => {
      const [id, service, disclosure, touches, maxTlp, maxPap] = line.split('|').slice(1, -1).map((cell) => cell.trim().replace(/`/g, ''));
      return [id!, { service, disclosure, touches, maxTlp, maxPap }];
    }));
    const dir = new URL('../engines/', import.meta.url);
    const engines = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
      const engine = ((await import(new URL(file, dir).href)) as { default?: { id?: string; service: string; disclosure: 'none' | 'internal' | 'third_party'; touchesTarget: boolean } }).default;
      if (engine?.id) engines.push(engine);
    }
    assert.equal(documented.size, engines.length, 'one row per engine');
    for (const engine of engines) {
      assert.deepEqual(documented.get(engine.id!), {
        service: engine.service,
        disclosure: engine.disclosure,
        touches: engine.touchesTarget ? 'yes' : 'no',
        maxTlp: defaultMaxTlp(engine.disclosure),
        maxPap: defaultMaxPap(engine.disclosure, engine.touchesTarget),
      }, engine.id);
    }
  });
});
