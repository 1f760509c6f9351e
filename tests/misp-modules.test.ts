/**
 * Issue 39, misp-modules: `oas serve` (a subprocess, engines at loopback fakes) answering MISP's
 * enrichment. The requests are MISP's own, as its source builds them (MISP 2.5's app/Model/Module.php
 * getModules/getEnabledModules/queryModuleServer/sendRequest, AttributesController::hoverEnrichment,
 * EventsController::__queryEnrichment and __queryOldEnrichment: `GET /modules`, then `POST /query`
 * with a JSON body, in the simple form `{"module", "<type>": value}` or, for a module declaring
 * `misp_standard`, `{"module", "attribute": {...}}`), and the answers are read as MISP reads them
 * (getEnabledModules' type maps, hoverEnrichment's popover, Event::handleModuleResult and
 * handleMispFormatFromModuleResult), the objects checked against misp-objects' templates. The
 * module listing is checked as misp-modules' own tests check theirs (tests/test.py,
 * test_introspection_module_structure), and `timeout` in a query is read as misp-modules reads it
 * (tests/body_timeout.json).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { moduleRecorder } from './helpers/module-log.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'misp-modules-test-token-0123456789abcdef';
const PUBLIC = 'https://oas.example.org';

interface Module {
  name: string;
  type: string;
  mispattributes: { input: string[]; output: string[]; format?: string };
  meta: Record<string, unknown> & { 'module-type': string[]; config: unknown[]; description: string };
}

/** An attribute as MISP's fetchAttributes gives it flattened (what hover and expansion send). */
function mispAttribute(type: string, value: string, uuid: string): Record<string, unknown> {
  return {
    id: '1742', event_id: '12', object_id: '0', object_relation: null, category: type.startsWith('ip') || type === 'domain' ? 'Network activity' : 'Payload delivery',
    type, to_ids: true, uuid, timestamp: '1764237340', distribution: '5', sharing_group_id: '0', comment: '', deleted: false,
    disable_correlation: false, first_seen: null, last_seen: null, value,
  };
}

/** Module::getEnabledModules with every module enabled: which modules MISP offers per attribute type. */
function enabledModules(modules: Module[]): { types: Record<string, string[]>; hover_type: Record<string, string[]> } {
  const output = { types: {} as Record<string, string[]>, hover_type: {} as Record<string, string[]> };
  for (const module of modules) {
    const kinds = module.meta['module-type'];
    if (['import', 'export', 'action'].some((kind) => kinds.includes(kind))) continue;
    for (const input of module.mispattributes.input) {
      if (kinds.includes('expansion') || kinds.includes('cortex')) (output.types[input] ??= []).push(module.name);
      if (kinds.includes('hover')) (output.hover_type[input] ??= []).push(module.name);
    }
  }
  return output;
}

/** The body MISP posts for a hover (hoverEnrichment) or an expansion (__queryEnrichment / __queryOldEnrichment). */
function mispQuery(module: Module, attribute: Record<string, unknown>, how: 'hover' | 'expansion'): Record<string, unknown> {
  const data: Record<string, unknown> = { module: module.name };
  // meta.config lists the settings MISP would send as `config`: none.
  const options = Object.fromEntries(module.meta.config.map((conf) => [String(conf), '']));
  const standard = module.mispattributes.format === 'misp_standard';
  if (how === 'hover') {
    if (Object.keys(options).length > 0) data.config = options;
    if (standard) data.attribute = attribute;
    else data[attribute.type as string] = attribute.value;
    return data;
  }
  if (standard) return { module: module.name, attribute, event_id: attribute.event_id, ...(Object.keys(options).length ? { config: options } : {}) };
  return { module: module.name, [attribute.type as string]: attribute.value, event_id: attribute.event_id, attribute_uuid: attribute.uuid };
}

/** What hoverEnrichment makes of an answer for the popover. */
function hoverView(name: string, result: Record<string, unknown>): Record<string, unknown> {
  if ('error' in result && !('results' in result)) return { error: result.error };
  const results = result.results as unknown;
  const view: Record<string, unknown> = {};
  const list: unknown[] = [];
  if (results && typeof results === 'object' && !Array.isArray(results)) {
    const { Object: objects, Attribute: attributes } = results as { Object?: { name: string; Attribute?: Record<string, string>[] }[]; Attribute?: Record<string, string>[] };
    if (objects?.length) view.Object = objects.filter((o) => o.Attribute?.length).map((o) => ({ name: o.name, Attribute: o.Attribute!.map((a) => ({ object_relation: a.object_relation, value: a.value, type: a.type })) }));
    if (attributes?.length) view.Attribute = attributes.map((a) => ({ type: a.type, value: a.value }));
  } else if (Array.isArray(results)) {
    for (const r of results as { values: unknown }[]) {
      if (Array.isArray(r.values) && r.values.length > 0) list.push({ [name]: r.values.map((v) => (typeof v === 'object' ? 'Array returned' : v)) });
      else if (r.values === null) list.push({ [name]: 'No result' });
      else list.push({ [name]: r.values });
    }
    view.list = list;
  }
  return view;
}

/** Event::handleModuleResult: the attributes a simple-form expansion proposes. */
function proposed(result: { results: { types?: string[] | string; type?: string; values: unknown }[] }): { default_type: string; value: string }[] {
  const out: { default_type: string; value: string }[] = [];
  for (const r of result.results) {
    const values = Array.isArray(r.values) ? r.values : [r.values];
    const types = r.types === undefined && r.type !== undefined ? [r.type] : Array.isArray(r.types) ? r.types : [r.types!];
    for (const value of values) if (value) out.push({ default_type: types[0]!, value: String(value) });
  }
  return out;
}

/** misp-objects' templates of the objects oas answers: each relation's MISP type (objects/<name>/definition.json). */
const TEMPLATES: Record<string, { uuid: string; relations: Record<string, string> }> = {
  report: { uuid: '70a68471-df22-4e3f-aa1a-5a3be19f82df', relations: { 'case-number': 'text', link: 'link', 'report-file': 'attachment', summary: 'text', title: 'text', type: 'text' } },
  'domain-ip': { uuid: '43b3b146-77eb-4931-b4cc-b66c60f28734', relations: { domain: 'domain', 'first-seen': 'datetime', hostname: 'hostname', ip: 'ip-dst', 'last-seen': 'datetime', port: 'port', 'registration-date': 'datetime', text: 'text' } },
  asn: { uuid: '4ec55cc6-9e49-4c64-b794-03c25c1a6587', relations: { asn: 'AS', country: 'text', description: 'text', 'subnet-announced': 'ip-src', name: 'text', organization: 'text' } },
  whois: {
    uuid: '429faea1-34ff-47af-8a00-7c62d3be5a6a',
    relations: { comment: 'text', 'creation-date': 'datetime', domain: 'domain', 'expiration-date': 'datetime', 'ip-address': 'ip-src', 'modification-date': 'datetime', nameserver: 'hostname', 'registrant-email': 'whois-registrant-email', 'registrant-name': 'whois-registrant-name', 'registrant-org': 'whois-registrant-org', registrar: 'whois-registrar', text: 'text' },
  },
};

interface StandardAnswer {
  results: {
    Attribute: (Record<string, unknown> & { uuid: string; type: string; value: string; Tag: { name: string }[] })[];
    Object: { name: string; 'meta-category': string; template_uuid: string; uuid: string; Attribute: { object_relation: string; type: string; value: string; uuid: string; Tag?: { name: string }[] }[]; ObjectReference: { referenced_uuid: string; relationship_type: string }[] }[];
  };
}

/** handleMispFormatFromModuleResult's reading, with each object checked against its template; the objects by name. */
function readStandard(answer: StandardAnswer, asked: string): Map<string, StandardAnswer['results']['Object']> {
  assert.ok(Array.isArray(answer.results.Attribute) && Array.isArray(answer.results.Object), JSON.stringify(answer).slice(0, 300));
  const byName = new Map<string, StandardAnswer['results']['Object']>();
  for (const object of answer.results.Object) {
    const template = TEMPLATES[object.name];
    assert.ok(template, `an object of a known template: ${object.name}`);
    assert.equal(object.template_uuid, template.uuid);
    assert.ok(object['meta-category'] && object.uuid);
    assert.ok(object.Attribute.length > 0);
    for (const attribute of object.Attribute) {
      assert.equal(attribute.type, template.relations[attribute.object_relation], `${object.name}.${attribute.object_relation} is a ${template.relations[attribute.object_relation]}`);
      assert.equal(typeof attribute.value, 'string');
      assert.ok(attribute.value.length > 0 && attribute.uuid);
    }
    assert.deepEqual(object.ObjectReference.map((r) => r.referenced_uuid), [asked], 'each object refers to the attribute asked about');
    byName.set(object.name, [...(byName.get(object.name) ?? []), object]);
  }
  return byName;
}

const values = (object: { Attribute: { object_relation: string; value: string }[] }, relation: string) => object.Attribute.filter((a) => a.object_relation === relation).map((a) => a.value);

/** POST /query as MISP's sendRequest does: the JSON body, `Content-Type: application/json`, no credential. */
async function query(base: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${base}/query`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

let upstreams: Upstreams;
let intel: FakeHttpServer;
let server: ServeProcess;
let audit: string;
let modules: Module[];

const moduleNamed = (name: string) => {
  const module = modules.find((m) => m.name === name);
  assert.ok(module, `module ${name} listed`);
  return module;
};

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({
    'GET /intel/*': (req) => ({ json: { score: req.path.endsWith('/45.33.32.156') ? 90 : 5 } }),
    'GET /slow/*': { hang: true },
  });
  audit = join(tempDir('oas-misp-audit-'), 'audit.log');
  const config = configFor(upstreams, {
    misp_modules: true,
    audit_log: audit,
    api_token: TOKEN,
    public_url: PUBLIC,
    custom_engines: {
      intel: {
        label: 'Intel',
        types: ['IPv4', 'FQDN', 'MD5'],
        request: { url: `${intel.url}/intel/{value}` },
        fields: { score: '/score' },
        summary: 'score {score}',
        evidence: [{ field: 'score', op: '>=', value: 50, verdict: 'malicious', reason: 'score {score}' }, { field: 'score', op: '<', value: 50, verdict: 'clean', reason: 'score {score}' }],
      },
      slow: { label: 'Slow', types: ['IPv4'], request: { url: `${intel.url}/slow/{value}` }, fields: { score: '/score' }, timeout_ms: 3000 },
    },
    engine_sets: { triage: ['reverse_dns', 'provider_11', 'intel'] },
  });
  server = await spawnServe(config.file);
  const res = await fetch(`${server.url}/modules`);
  assert.equal(res.status, 200);
  modules = (await res.json()) as Module[];
});

after(async () => {
  await server?.stop();
  await Promise.all([upstreams?.close(), intel?.close()]);
});

describe('GET /modules, as MISP reads it', () => {
  test('oas, a module per engine set and per configured engine, each shaped as misp-modules lists its own', () => {
    const names = modules.map((m) => m.name);
    assert.equal(names[0], 'oas');
    assert.ok(names.includes('oas_set_triage'));
    for (const name of ['oas_provider_11', 'oas_reverse_dns', 'oas_rdap_whois', 'oas_intel', 'oas_slow']) assert.ok(names.includes(name), name);
    // An engine without its key cannot run here: it is offered once configured.
    assert.ok(!names.includes('oas_provider_24'), 'virustotal, not configured, is not offered');
    // misp-modules' tests/test.py, test_introspection_module_structure: the keys of moduleinfo.
    const template = ['version', 'author', 'module-type', 'name', 'description', 'logo', 'requirements', 'features', 'references', 'input', 'output'];
    for (const module of modules) {
      assert.equal(module.type, 'expansion');
      assert.match(module.name, /^oas(_[A-Za-z0-9_]+)?$/);
      for (const key of template) assert.ok(key in module.meta, `${module.name}: meta.${key}`);
      assert.deepEqual(module.meta['module-type'], ['expansion', 'hover']);
      assert.deepEqual(module.meta.config, [], 'no setting for MISP to send: oas holds the keys');
      assert.ok(module.mispattributes.input.length > 0);
      assert.equal(module.mispattributes.format, module.name === 'oas' || module.name.startsWith('oas_set_') ? 'misp_standard' : undefined, module.name);
    }
  });

  test('getEnabledModules: which attribute types each module is offered on, for hover and expansion', () => {
    const { types, hover_type } = enabledModules(modules);
    for (const type of ['ip-src', 'ip-dst', 'domain', 'hostname', 'url', 'domain|ip', 'ip-dst|port']) {
      assert.ok(types[type]?.includes('oas'), `oas expands ${type}`);
      assert.ok(hover_type[type]?.includes('oas'), `oas on hover over ${type}`);
    }
    assert.deepEqual(moduleNamed('oas_provider_11').mispattributes.input, ['ip-src', 'ip-dst', 'ip-src|port', 'ip-dst|port', 'domain', 'hostname', 'domain|ip', 'hostname|port', 'url', 'link'], 'an IP engine, also on the address a domain or URL resolves to');
    assert.deepEqual(moduleNamed('oas_rdap_whois').mispattributes.input, ['domain', 'hostname', 'domain|ip', 'hostname|port', 'url', 'link']);
    assert.ok(types['md5']?.includes('oas_intel') && types['filename|md5']?.includes('oas_intel'));
    assert.ok(!types['md5']?.includes('oas'), 'the default engines take no hash');
    assert.ok(hover_type['ip-dst']?.includes('oas_set_triage'));
  });

  test('answered without the token, which the rest of the server still asks for', async () => {
    assert.equal((await fetch(`${server.url}/api/is_analysis_complete/x`)).status, 401);
    assert.equal((await fetch(`${server.url}/ui/engines`)).status, 401);
  });
});

describe('POST /query, MISP\'s hover and expansion', () => {
  test('hover, simple form: the verdict with its reasons, the engine\'s summary, the link to the analysis', async () => {
    const module = moduleNamed('oas_intel');
    const body = mispQuery(module, mispAttribute('ip-src', '45.33.32.156', 'c0a8e2b4-1d2e-4f6a-9b1c-2d3e4f5a6b7c'), 'hover');
    assert.deepEqual(body, { module: 'oas_intel', 'ip-src': '45.33.32.156' });
    const answer = await query(server.url, body);
    assert.equal(answer.status, 200);
    const view = hoverView(module.name, answer.json) as { list: Record<string, string[]>[] };
    const lines = view.list.map((entry) => entry['oas_intel']![0]!);
    assert.equal(lines[0], 'oas verdict: malicious (intel: score 90)');
    assert.equal(lines[1], 'Intel: score 90');
    assert.match(lines[2]!, new RegExp(`^${PUBLIC}/results/[0-9a-f-]{36}$`));
  });

  test('expansion, simple form (__queryOldEnrichment): text attributes proposed, and the link', async () => {
    const module = moduleNamed('oas_provider_11');
    const attribute = mispAttribute('ip-dst', '8.8.8.8', '0b9c7a5e-2f1d-4c3b-8a7e-6d5c4b3a2f1e');
    const body = mispQuery(module, attribute, 'expansion');
    assert.deepEqual(body, { module: 'oas_provider_11', 'ip-dst': '8.8.8.8', event_id: '12', attribute_uuid: '0b9c7a5e-2f1d-4c3b-8a7e-6d5c4b3a2f1e' });
    const before = upstreams.intel.hits('POST /ipapi').length;
    const answer = await query(server.url, body);
    const attributes = proposed(answer.json as Parameters<typeof proposed>[0]);
    assert.deepEqual(attributes.map((a) => a.default_type), ['text', 'text', 'link']);
    assert.equal(attributes[0]!.value, 'oas verdict: unknown (no engine that judges this observable answered)');
    assert.match(attributes[1]!.value, /^IPapi: .*AS15169/);
    const called = upstreams.intel.hits('POST /ipapi').length;
    assert.equal(called, before + 1, 'ipapi was asked once');
    // The same query again: its answer comes from the cache.
    const again = await query(server.url, body);
    assert.deepEqual(proposed(again.json as Parameters<typeof proposed>[0]).slice(0, 2), attributes.slice(0, 2));
    assert.equal(upstreams.intel.hits('POST /ipapi').length, called, 'the second from the cache');
  });

  test('expansion, misp_standard (__queryEnrichment): the attribute tagged, report, domain-ip, asn and whois objects', async () => {
    const module = moduleNamed('oas');
    const uuid = '6a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const attribute = mispAttribute('domain', 'example.com', uuid);
    const body = mispQuery(module, attribute, 'expansion');
    assert.deepEqual(Object.keys(body), ['module', 'attribute', 'event_id']);
    const answer = await query(server.url, body);
    assert.equal(answer.status, 200);
    const json = answer.json as unknown as StandardAnswer;
    const objects = readStandard(json, uuid);
    const [asked] = json.results.Attribute;
    assert.equal(asked!.uuid, uuid, 'the attribute asked about, as MISP knows it');
    assert.equal(asked!.type, 'domain');
    assert.equal(asked!.value, 'example.com');
    assert.equal(asked!.category, 'Network activity');
    assert.deepEqual(asked!.Tag, [{ name: 'oas:verdict="unknown"' }]);

    const [report] = objects.get('report')!;
    assert.deepEqual(values(report!, 'title'), ['oas verdict for example.com: unknown']);
    const summary = values(report!, 'summary');
    assert.ok(summary.some((line) => /^RDAP \/ WHOIS: /.test(line)), summary.join('\n'));
    assert.ok(summary.some((line) => /^Reverse DNS: /.test(line)), summary.join('\n'));
    assert.ok(summary.some((line) => /^IPapi: /.test(line)), summary.join('\n'));
    assert.match(values(report!, 'link')[0]!, new RegExp(`^${PUBLIC}/results/`));
    assert.deepEqual(report!.Attribute.find((a) => a.object_relation === 'title')!.Tag, [{ name: 'oas:verdict="unknown"' }]);

    const [resolution] = objects.get('domain-ip')!;
    assert.deepEqual(values(resolution!, 'domain'), ['example.com']);
    assert.deepEqual(values(resolution!, 'ip'), ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    const [asn] = objects.get('asn')!;
    assert.deepEqual(values(asn!, 'asn'), ['AS15169']);
    assert.deepEqual(values(asn!, 'description'), ['Google LLC']);
    const [whois] = objects.get('whois')!;
    assert.deepEqual(values(whois!, 'domain'), ['example.com']);
    assert.deepEqual(values(whois!, 'registrar'), ['RESERVED-Internet Assigned Numbers Authority']);
    assert.deepEqual(values(whois!, 'creation-date'), ['1995-08-14']);
    assert.deepEqual(values(whois!, 'expiration-date'), ['2026-08-13']);
    assert.deepEqual(values(whois!, 'nameserver'), ['a.iana-servers.net', 'b.iana-servers.net']);
  });

  test('a url attribute: its host and the addresses it resolves to, the registration of its registrable domain', async () => {
    const uuid = '2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f';
    const answer = await query(server.url, mispQuery(moduleNamed('oas'), mispAttribute('url', 'hxxps://www.example[.]com/login?session=9f2c', uuid), 'hover'));
    const objects = readStandard(answer.json as unknown as StandardAnswer, uuid);
    assert.deepEqual(values(objects.get('report')![0]!, 'title'), ['oas verdict for https://www.example.com/login?session=9f2c: unknown'], 'read as oas reads a pasted one: refanged');
    assert.deepEqual(values(objects.get('domain-ip')![0]!, 'hostname'), ['www.example.com']);
    assert.deepEqual(values(objects.get('domain-ip')![0]!, 'ip'), ['93.184.215.14']);
    assert.deepEqual(values(objects.get('whois')![0]!, 'domain'), ['example.com']);
  });

  test('hover, misp_standard: an analyst\'s mark decides the verdict the popover shows', async () => {
    const marked = await fetch(`${server.url}/api/marks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ value: '8.8.4.4', verdict: 'malicious', note: 'red-team C2 for exercise X' }),
    });
    assert.equal(marked.status, 201, await marked.text());
    const module = moduleNamed('oas');
    const attribute = mispAttribute('ip-dst', '8.8.4.4', '1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6');
    const body = mispQuery(module, attribute, 'hover');
    assert.deepEqual(body, { module: 'oas', attribute });
    const answer = await query(server.url, body);
    const view = hoverView('oas', answer.json) as { Object: { name: string; Attribute: { object_relation: string; value: string }[] }[]; Attribute: { type: string; value: string }[] };
    assert.deepEqual(view.Attribute, [{ type: 'ip-dst', value: '8.8.4.4' }]);
    const report = view.Object.find((o) => o.name === 'report')!;
    assert.deepEqual(values(report, 'title'), ['oas verdict for 8.8.4.4: malicious']);
    assert.match(values(report, 'summary')[0]!, /^marked malicious by api_token on \d{4}-\d{2}-\d{2}: red-team C2 for exercise X$/);
    assert.deepEqual(values(view.Object.find((o) => o.name === 'asn')!, 'asn'), ['AS15169']);
    assert.equal((answer.json as unknown as StandardAnswer).results.Attribute[0]!.Tag[0]!.name, 'oas:verdict="malicious"');
  });

  test('an attribute sent with its tlp: and PAP: tags is analysed at the most restrictive of them; without, at the defaults', async () => {
    const uuid = '3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a';
    const attribute = { ...mispAttribute('domain', 'cyberbro.net', uuid), Tag: [{ name: 'tlp:green' }, { name: 'tlp:red' }, { name: 'PAP:AMBER' }, { name: 'red' }] };
    const answer = await query(server.url, { module: 'oas', attribute });
    const report = readStandard(answer.json as unknown as StandardAnswer, uuid).get('report')![0]!;
    const summary = values(report, 'summary');
    assert.ok(summary.some((line) => /^RDAP \/ WHOIS: withheld: /.test(line)), summary.join('\n'));
    const started = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.action === 'analysis_started' && line.origin === 'misp');
    assert.deepEqual([started.at(-1)!.tlp, started.at(-1)!.pap], ['RED', 'AMBER']);
    assert.ok(started.slice(0, -1).every((line) => line.tlp === 'AMBER' && line.pap === 'GREEN'), 'MISP\'s own requests carry no tags: the defaults');
  });

  test('a set\'s module on a composite domain|ip attribute: both observables, each with its report', async () => {
    const module = moduleNamed('oas_set_triage');
    const uuid = '7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2918';
    const answer = await query(server.url, mispQuery(module, mispAttribute('domain|ip', 'example.com|45.33.32.156', uuid), 'expansion'));
    const json = answer.json as unknown as StandardAnswer;
    const objects = readStandard(json, uuid);
    assert.deepEqual(objects.get('report')!.map((r) => values(r, 'title')[0]), ['oas verdict for example.com: clean', 'oas verdict for 45.33.32.156: malicious']);
    assert.deepEqual(json.results.Attribute[0]!.Tag, [{ name: 'oas:verdict="malicious"' }], 'the attribute: the worse of the two');
  });

  test('what MISP cannot use is misp-modules\' error body, with status 200', async () => {
    const cases: [unknown, RegExp][] = [
      [{ module: 'dns', hostname: 'www.circl.lu', config: { nameserver: '8.8.8.8' } }, /^unknown module: dns; this oas server offers oas, oas_set_triage, /],
      [{ module: 'oas_provider_11', md5: '44d88612fea8a8f36de82e1278abb02f' }, /^Unsupported attribute type: oas_provider_11 takes no "md5" attribute; it takes ip-src, /],
      [{ module: 'oas', attribute: { type: 'sha256', value: 'x', uuid: 'u' } }, /^Unsupported attribute type: oas takes no "sha256" attribute/],
      [{ module: 'oas_provider_11', 'ip-dst': 'example.com' }, /^the ip-dst attribute "example\.com" holds no IPv4 address or IPv6 address oas can analyse$/],
      [{ module: 'oas', attribute: { uuid: 'u' } }, /^This module requires an "attribute" field as input, which should contain at least a type, a value and an uuid\.$/],
      [{ module: 'oas_provider_24', 'ip-dst': '8.8.8.8' }, /^oas_provider_24: the engine provider_24 \(virustotal\) is not configured on this oas server: give its credentials under engines\.provider_24/],
      [{ hostname: 'www.circl.lu' }, /^the query names no "module": GET \/modules lists those of this oas server$/],
      [{ module: 'oas_intel' }, /^the query holds no attribute: send \{"module": "oas_intel", "<type>": "<value>"\}/],
      ['{"module": "oas", ', /^the query is not valid JSON$/],
      [{ module: 'oas', 'ip-dst': '8.8.8.8', padding: 'x'.repeat(1_100_000) }, /^the query is larger than max_body_bytes \(1048576 bytes\)$/],
      [[1, 2], /^the query must be a JSON object/],
    ];
    for (const [body, error] of cases) {
      const answer = await query(server.url, body);
      assert.equal(answer.status, 200, JSON.stringify(body));
      assert.deepEqual(Object.keys(answer.json), ['error'], JSON.stringify(body));
      assert.match(answer.json.error as string, error, JSON.stringify(body));
    }
    const wrong = await fetch(`${server.url}/query`);
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
  });

  test('timeout: a query waits no longer than it asks (misp-modules\' tests/body_timeout.json), the analysis goes on', async () => {
    const answer = await query(server.url, { module: 'oas_slow', 'ip-dst': '45.33.32.200', timeout: 1 });
    assert.equal(answer.status, 200);
    assert.match(answer.json.error as string, /^oas is still analysing 45\.33\.32\.200 \(analysis [0-9a-f-]{36}\): it took longer than 1 s \(setting misp_modules_timeout_s\); ask again in a moment/);
  });

  test('the audit trail: analyses started by misp-modules, origin misp, and their results read', () => {
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const started = lines.filter((line) => line.action === 'analysis_started' && line.origin === 'misp');
    assert.ok(started.length >= 6, `${started.length} analyses`);
    const first = started.find((line) => line.module === 'oas_intel')!;
    assert.equal(first.user, 'misp-modules');
    assert.equal(first.client, '127.0.0.1');
    assert.deepEqual(first.engines, ['intel']);
    assert.equal(first.tlp, 'AMBER', 'the configuration\'s default: MISP sends none');
    const read = lines.filter((line) => line.action === 'results_read' && line.origin === 'misp');
    assert.ok(read.some((line) => line.outcome === 'success' && line.format === 'misp_standard'));
    assert.ok(read.some((line) => line.outcome === 'failure' && line.reason === 'analysis not complete yet'));
    assert.doesNotMatch(readFileSync(audit, 'utf8'), /45\.33\.32\.156|example\.com/, 'never an observable');
  });
});

describe('who may ask', () => {
  test('a client not in misp_modules_clients: 403 on both paths, token or not; the rest of the server as usual', async () => {
    const config = configFor(upstreams, { misp_modules: true, misp_modules_clients: ['10.0.0.0/8', 'fd00::/8'] });
    const other = await spawnServe(config.file);
    try {
      for (const [path, init] of [['/modules', {}], ['/query', { method: 'POST', body: '{"module": "oas", "ip-dst": "8.8.8.8"}', headers: { 'Content-Type': 'application/json' } }]] as const) {
        const res = await fetch(`${other.url}${path}`, init);
        assert.equal(res.status, 403, path);
        assert.match(((await res.json()) as { error: string }).error, /^forbidden: 127\.0\.0\.1 is not a MISP server this oas answers \(setting misp_modules_clients\)$/);
      }
      assert.equal((await fetch(`${other.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${other.url}/api/is_analysis_complete/none`)).status, 404);
    } finally {
      await other.stop();
    }
  });

  test('the rate limit: a query that starts an analysis counts, over the limit the error body says so', async () => {
    const config = configFor(upstreams, { misp_modules: true, rate_limit_per_minute: 2 });
    const limited = await spawnServe(config.file);
    try {
      // A refused query starts nothing and costs nothing.
      assert.match((await query(limited.url, { module: 'nothing', 'ip-dst': '8.8.8.8' })).json.error as string, /^unknown module/);
      for (let i = 0; i < 2; i++) assert.ok('results' in (await query(limited.url, { module: 'oas_provider_11', 'ip-dst': '8.8.8.8' })).json);
      const over = await query(limited.url, { module: 'oas_provider_11', 'ip-dst': '8.8.8.8' });
      assert.equal(over.status, 200);
      assert.match(over.json.error as string, /^too many analyses: at most 2 per minute per client \(setting rate_limit_per_minute\); retry in \d+ s$/);
      assert.match(over.headers.get('retry-after') ?? '', /^\d+$/);
    } finally {
      await limited.stop();
    }
  });

  test('misp_modules off: /modules and /query are no paths of oas and nothing of misp-modules is loaded; a reload turns it on', async () => {
    const config = configFor(upstreams);
    const dir = tempDir('oas-misp-off-');
    const recorder = moduleRecorder(dir);
    const log = join(dir, 'modules.log');
    const serve = await spawnServe(config.file, { nodeArgs: recorder.nodeArgs, env: recorder.env(log) });
    const { child, url } = serve;
    try {
      assert.equal((await fetch(`${url}/modules`)).status, 404);
      assert.equal((await fetch(`${url}/query`, { method: 'POST', body: '{"module": "oas", "ip-dst": "8.8.8.8"}', headers: { 'Content-Type': 'application/json' } })).status, 404);
      const loaded = recorder.read(log).filter((m) => /\/dist\/src\/(enrichment\/|server\/misp-modules\.js)/.test(m));
      assert.deepEqual(loaded, [], 'no module of misp-modules is loaded');
      // SIGHUP with the setting on: the next requests meet it.
      writeFileSync(config.file, JSON.stringify({ ...JSON.parse(readFileSync(config.file, 'utf8')), misp_modules: true }));
      child.kill('SIGHUP');
      for (let i = 0; i < 200 && !/configuration (not )?reloaded/.test(serve.log()); i++) await new Promise((done) => setTimeout(done, 50));
      assert.match(serve.log(), /configuration reloaded/);
      const res = await fetch(`${url}/modules`);
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as Module[])[0]!.name, 'oas');
    } finally {
      await serve.stop();
    }
  });
});
