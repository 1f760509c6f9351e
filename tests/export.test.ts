/**
 * The export module (src/export/): every format from the same results, with a catalog of test
 * engines whose evidence is known. STIX is validated against the STIX 2.1 JSON schemas of
 * tests/data/stix/, MISP checked field by field against the MISP core format, the xlsx read back
 * with exceljs, formulas neutralised in CSV and xlsx.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import ExcelJS from 'exceljs';
import { observableVerdict } from '../src/analysis/rows.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import { CSV_COLUMNS, csvCell, resultsCsv } from '../src/export/csv.js';
import type { ExportSource } from '../src/export/common.js';
import { EXPORT_FORMATS, exportChunks, exportFileName, type ExportFormat } from '../src/export/index.js';
import { jsonLine } from '../src/export/json.js';
import { mispType } from '../src/export/misp.js';
import { stixObservable } from '../src/export/stix.js';
import { canonicalJson, STIX_NAMESPACE, uuidv5 } from '../src/export/uuid.js';
import { flatten } from '../src/export/xlsx.js';
import type { ObservableResult } from '../src/runner/result.js';

// Test engines: `rep` judges every type from a score; `geo` (IPs) never judges; `page` gives a
// summary with markup.
interface Rep {
  score: number;
  note?: string;
}
const rep = defineEngine<Rep>({
  id: 'rep', service: 'reputation', label: 'Rep', description: 'test reputation', tags: [],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION'],
  defaults: { timeout_ms: 1000 },
  summary: (r) => `score ${r.score}${r.note ? ` ${r.note}` : ''}`,
  evidence: (r) => {
    if (r === null) return { level: 'clean', reason: 'not listed' };
    if (r.score >= 50) return { level: 'malicious', reason: `score ${r.score}` };
    if (r.score >= 20) return { level: 'suspicious', reason: `score ${r.score}` };
    return { level: 'clean', reason: `score ${r.score}` };
  },
  run: async () => null,
});
const geo = defineEngine<{ country: string; asn: { number: number; name: string }; tags: string[] }>({
  id: 'geo', service: 'geolocation', label: 'Geo', description: 'test geolocation', tags: [],
  types: ['IPv4', 'IPv6'], reversedIp: true, defaults: { timeout_ms: 1000 },
  summary: (r) => r.asn.name,
  run: async () => null,
});
const page = defineEngine<{ title: string }>({
  id: 'page', service: 'pagetitle', label: 'Page', description: 'test page title', tags: [],
  types: ['URL'], defaults: { timeout_ms: 1000 },
  summary: (r) => r.title,
  run: async () => null,
});
const catalog = new Catalog([rep, geo, page] as EngineDefinition[]);

const MD5 = 'D41D8CD98F00B204E9800998ECF8427E';
const SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
const SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const URL_VALUE = "https://evil.example/a'b\\c";
const EXTENSION = 'abcdefghijklmnopabcdefghijklmnop';

const results: ObservableResult[] = [
  { observable: 'example.com', type: 'FQDN', reversed_success: true, reversed_ip: '192.0.2.1', rep: { score: 80 }, geo: { country: 'FR', asn: { number: 64500, name: 'Example' }, tags: ['a', 'b'] } },
  { observable: 'www.example.com', type: 'FQDN', reversed_success: false, rep: { score: 30 } },
  { observable: '8.8.8.8', type: 'IPv4', reversed_success: true, rep: { score: 0 }, geo: { country: 'US', asn: { number: 15169, name: '=HYPERLINK("http://x")' }, tags: [] } },
  { observable: '2001:db8::1', type: 'IPv6', reversed_success: false, rep: null, geo: null, errors: { rep: 'timeout after 5000 ms' } },
  { observable: URL_VALUE, type: 'URL', reversed_success: false, rep: { score: 99 }, page: { title: '<script>alert(1)</script><b>Login</b> page' } },
  { observable: MD5, type: 'MD5', reversed_success: false, rep: { score: 60, note: '+cmd' } },
  { observable: SHA1, type: 'SHA1', reversed_success: false, rep: { score: 5 } },
  { observable: SHA256, type: 'SHA256', reversed_success: false, rep: { score: 5 } },
  { observable: 'user@example.org', type: 'Email', reversed_success: false, rep: null },
  { observable: EXTENSION, type: 'CHROME_EXTENSION', reversed_success: false, rep: { score: 90 } },
  { observable: '203.0.113.9', type: 'IPv4', reversed_success: false, page: null },
];
const VERDICTS = ['malicious', 'suspicious', 'clean', 'unknown', 'malicious', 'malicious', 'clean', 'clean', 'clean', 'malicious', 'unknown'];

const ANALYSIS_ID = '5d0c7a3e-1f2b-4c3d-8e9f-0a1b2c3d4e5f';
function source(list: readonly ObservableResult[] = results, pageSize = 3): ExportSource {
  return {
    id: ANALYSIS_ID,
    created_at: '2026-11-23T12:00:00.000Z',
    finished_at: '2026-11-23T12:00:04.250Z',
    async *pages() {
      // No verdicts stored beside them (rows of an older version): the exports work them out.
      for (let i = 0; i < list.length; i += pageSize) yield list.slice(i, i + pageSize).map((r) => ({ value: JSON.stringify(r) }));
    },
  };
}

async function text(format: ExportFormat, list?: readonly ObservableResult[]): Promise<string> {
  let out = '';
  for await (const chunk of exportChunks(format, source(list), catalog)) out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return out;
}

async function bytes(format: ExportFormat, list?: readonly ObservableResult[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of exportChunks(format, source(list), catalog)) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(parts);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('formats', () => {
  test('the five formats and their file names', () => {
    assert.deepEqual([...EXPORT_FORMATS], ['csv', 'json', 'xlsx', 'stix', 'misp']);
    assert.equal(exportFileName(ANALYSIS_ID, 'stix'), `oas-${ANALYSIS_ID}.stix.json`);
    assert.equal(exportFileName(ANALYSIS_ID, 'xlsx'), `oas-${ANALYSIS_ID}.xlsx`);
  });
});

describe('json and jsonl', () => {
  test('each element is the result with its verdict and reasons after it, written in pieces', async () => {
    const parsed = JSON.parse(await text('json')) as Record<string, unknown>[];
    assert.equal(parsed.length, results.length);
    parsed.forEach((element, i) => {
      const { verdict, reasons, ...rest } = element;
      assert.deepEqual(rest, results[i], 'the API element, untouched');
      assert.equal(verdict, VERDICTS[i], results[i]!.observable);
      assert.ok(Array.isArray(reasons));
      assert.deepEqual(Object.keys(element).slice(-2), ['verdict', 'reasons']);
    });
    assert.deepEqual(parsed[0]!.reasons, ['rep: score 80']);
    assert.deepEqual(parsed[3]!.reasons, [], 'an engine error never counts');
    assert.equal(await text('json'), `${JSON.stringify(parsed, null, 2)}`, 'the same text as the whole array indented');
    assert.equal(await text('json', []), '[]');
  });

  test('a JSON line is one compact element', () => {
    const line = jsonLine(results[4]!, observableVerdict(results[4]!, catalog));
    assert.ok(!line.includes('\n'));
    assert.deepEqual(JSON.parse(line), { ...results[4], verdict: 'malicious', reasons: ['rep: score 99'] });
  });
});

describe('csv', () => {
  test('one row per observable and engine that applies, with the verdict and reasons; formulas neutralised', async () => {
    const csv = await text('csv');
    assert.equal(csv, resultsCsv(results, catalog), 'streamed = whole');
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.deepEqual(CSV_COLUMNS.slice(-4), ['verdict', 'reasons', 'tlp', 'found_in']);
    // These results have no marking (an analysis of an older version): the tlp column is empty;
    // none came from a file: found_in is empty too.
    assert.ok(lines.includes('example.com,FQDN,192.0.2.1,rep,ok,score 80,"{""score"":80}",malicious,rep: score 80,,'), csv);
    assert.ok(lines.includes('2001:db8::1,IPv6,,rep,error,error: timeout after 5000 ms,,unknown,,,'), csv);
    // geo's summary is attacker-controlled text starting with "=": prefixed, quoted.
    assert.ok(lines.some((l) => l.startsWith(`8.8.8.8,IPv4,,geo,ok,"'=HYPERLINK(""http://x"")",`)), csv);
    // An observable no selected engine applies to keeps one row for its verdict.
    assert.ok(lines.includes('203.0.113.9,IPv4,,,empty,no selected engine applies to IPv4,,unknown,,,'), csv);
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('\tx'), "'\tx");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
  });
});

describe('xlsx', () => {
  test('read back with exceljs: Observables with verdicts and engine summaries, one sheet per engine with its fields', async () => {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await bytes('xlsx')) as unknown as ExcelJS.Buffer);
    assert.deepEqual(workbook.worksheets.map((s) => s.name), ['Observables', 'rep', 'geo', 'page']);
    const main = workbook.getWorksheet('Observables')!;
    const values = (row: number, sheet = main) => (sheet.getRow(row).values as unknown[]).slice(1);
    assert.deepEqual(values(1), ['observable', 'type', 'reversed_ip', 'verdict', 'reasons', 'found_in', 'rep', 'geo', 'page']);
    assert.equal(main.rowCount, results.length + 1);
    // found_in (column 6) is empty: these observables were not found in a file.
    const second = values(2);
    assert.equal(second.splice(5, 1)[0] ?? '', '');
    assert.deepEqual(second, ['example.com', 'FQDN', '192.0.2.1', 'malicious', 'rep: score 80', 'score 80', 'Example']);
    main.eachRow((row, n) => {
      if (n > 1) assert.equal(row.getCell(4).value, VERDICTS[n - 2], String(row.getCell(1).value));
    });
    // Formula-like text is text, prefixed: never a formula.
    const ip = main.getRow(4);
    assert.equal(ip.getCell(8).value, `'=HYPERLINK("http://x")`);
    assert.equal(ip.getCell(8).type, ExcelJS.ValueType.String);
    assert.equal(main.getRow(7).getCell(7).value, 'score 60 +cmd', 'only a leading character counts');

    const geoSheet = workbook.getWorksheet('geo')!;
    assert.deepEqual(values(1, geoSheet), ['observable', 'type', 'status', 'summary', 'country', 'asn.number', 'asn.name', 'tags']);
    assert.deepEqual(values(2, geoSheet), ['example.com', 'FQDN', 'ok', 'Example', 'FR', 64500, 'Example', 'a, b']);
    assert.equal(geoSheet.getRow(3).getCell(7).value, `'=HYPERLINK("http://x")`);
    const repSheet = workbook.getWorksheet('rep')!;
    const errorRow = (repSheet.getRows(2, repSheet.rowCount - 1) ?? []).find((r) => r.getCell(1).value === '2001:db8::1')!;
    assert.equal(errorRow.getCell(3).value, 'error');
    assert.equal(errorRow.getCell(4).value, 'error: timeout after 5000 ms');
  });

  test('fields are flattened to dotted columns; lists of objects are JSON', () => {
    assert.deepEqual(Object.fromEntries(flatten({ a: { b: { c: 1 } }, list: [1, 'x'], objs: [{ k: 1 }], none: null, deep: { a: { b: { c: { d: 1 } } } } })), {
      'a.b.c': 1, list: '1, x', objs: '[{"k":1}]', none: '', 'deep.a.b': '{"c":{"d":1}}',
    });
    assert.deepEqual(Object.fromEntries(flatten(['x', 'y'])), { value: 'x, y' });
  });
});

describe('stix', () => {
  const ajv = new Ajv2020.default({ allErrors: true, strictSchema: true, strictTypes: false, strictRequired: false });
  for (const name of ['common', 'sdos', 'observables', 'bundle']) {
    ajv.addSchema(JSON.parse(readFileSync(new URL(`../../tests/data/stix/${name}.json`, import.meta.url), 'utf8')) as object);
  }
  const validate = ajv.getSchema('https://oas.test/stix/bundle.json')!;

  test('UUIDv5 and canonical JSON as RFC 4122 and RFC 8785 define them', () => {
    assert.equal(uuidv5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
    assert.equal(canonicalJson({ b: 1, a: { d: 'x', c: [true, null] } }), '{"a":{"c":[true,null],"d":"x"},"b":1}');
  });

  test('the bundle validates against the STIX 2.1 schemas', async () => {
    const bundle = JSON.parse(await text('stix')) as { objects: Record<string, unknown>[] };
    assert.ok(validate(bundle), JSON.stringify(validate.errors, null, 2));
    // The schemas can fail: a bundle with a broken object is refused.
    const broken = structuredClone(bundle);
    delete broken.objects[1]!.id;
    assert.equal(validate(broken), false);
    const extra = structuredClone(bundle);
    (extra.objects[0] as Record<string, unknown>).secret = 'x';
    assert.equal(validate(extra), false);
    for (const o of bundle.objects) {
      if (typeof o.created === 'string') assert.ok(Date.parse(o.modified as string) >= Date.parse(o.created), 'modified not before created');
    }
  });

  test('observables with the deterministic ids of the spec; indicators for malicious and suspicious ones; a note each', async () => {
    const bundle = JSON.parse(await text('stix')) as { type: string; id: string; objects: Record<string, any>[] };
    assert.equal(bundle.type, 'bundle');
    const byType = (type: string) => bundle.objects.filter((o) => o.type === type);
    assert.equal(byType('identity').length, 1);
    const identity = byType('identity')[0]!;
    assert.equal(identity.name, 'oas');
    // Ids computed independently (Python's uuid.uuid5 over the canonical JSON of the contributing properties).
    const expected: Record<string, string> = {
      'domain-name--bedb4899-d24b-5401-bc86-8f6b4cc18ec7': 'example.com',
      'ipv4-addr--2f689bf9-0ff2-545f-aa61-e495eb8cecc7': '8.8.8.8',
      'ipv6-addr--6469e3a9-b053-5e34-a025-9396ae051d26': '2001:db8::1',
      'url--25ea78e2-88cb-5b5d-9e10-5195c47ef9d0': URL_VALUE,
      'file--02fff920-f614-527c-81d1-6353633a6d21': MD5.toLowerCase(),
      'file--22f8ff52-8f62-5f03-a53a-6f50f54fd74c': SHA256,
      'email-addr--2efa180d-9496-5fb5-a9be-5d728215e656': 'user@example.org',
    };
    const scos = bundle.objects.filter((o) => !['identity', 'indicator', 'relationship', 'note'].includes(o.type));
    assert.equal(scos.length, results.length - 1, 'every observable but the browser extension id');
    for (const [id, value] of Object.entries(expected)) {
      const sco = scos.find((o) => o.id === id);
      assert.ok(sco, `${id} (${value})`);
      assert.equal(sco.value ?? Object.values(sco.hashes as object)[0], value);
    }
    for (const sco of scos) {
      const { type, id, spec_version, ...contributing } = sco;
      assert.equal(spec_version, '2.1');
      assert.equal(id, `${type}--${uuidv5(STIX_NAMESPACE, canonicalJson(contributing))}`);
      assert.match(id.split('--')[1]!, /^[0-9a-f]{8}-[0-9a-f]{4}-5/, 'UUID version 5');
    }
    assert.equal(scos.filter((o) => o.type === 'file').length, 3);
    assert.deepEqual(scos.find((o) => o.type === 'file' && o.hashes['SHA-1'])!.hashes, { 'SHA-1': SHA1 });

    // Indicators: example.com, www.example.com (suspicious), the URL and the MD5.
    const indicators = byType('indicator');
    assert.deepEqual(indicators.map((i) => i.pattern).sort(), [
      `[domain-name:value = 'example.com']`,
      `[domain-name:value = 'www.example.com']`,
      `[file:hashes.'MD5' = '${MD5.toLowerCase()}']`,
      `[url:value = 'https://evil.example/a\\'b\\\\c']`,
    ]);
    const PATTERN = /^\[(domain-name|ipv4-addr|ipv6-addr|url|email-addr):value = '(?:[^'\\]|\\['\\])*'\]$|^\[file:hashes\.'(MD5|SHA-1|SHA-256)' = '[0-9a-f]+'\]$/;
    for (const indicator of indicators) {
      assert.match(indicator.pattern, PATTERN);
      assert.equal(indicator.pattern_type, 'stix');
      assert.equal(indicator.valid_from, '2026-11-23T12:00:00.000Z');
      assert.equal(indicator.created_by_ref, identity.id);
      const relationship = byType('relationship').find((r) => r.source_ref === indicator.id);
      assert.ok(relationship, 'related to its observable');
      assert.equal(relationship.relationship_type, 'based-on');
      assert.ok(scos.some((s) => s.id === relationship.target_ref));
    }
    const suspicious = indicators.find((i) => i.pattern.includes('www.example.com'))!;
    assert.deepEqual(suspicious.indicator_types, ['anomalous-activity']);
    assert.deepEqual(indicators.find((i) => i.pattern.includes("'example.com'"))!.indicator_types, ['malicious-activity']);
    assert.equal(byType('relationship').length, indicators.length);

    // A note per observable: verdict, reasons, engine summaries; plain text only.
    const notes = byType('note');
    assert.equal(notes.length, scos.length);
    const urlNote = notes.find((n) => n.object_refs[0] === 'url--25ea78e2-88cb-5b5d-9e10-5195c47ef9d0')!;
    assert.match(urlNote.content, /^Verdict: malicious\nReasons:\n- rep: score 99\nEngines:\n- rep: score 99\n- page: alert\(1\)Login page$/);
    const ipNote = notes.find((n) => n.object_refs[0] === 'ipv6-addr--6469e3a9-b053-5e34-a025-9396ae051d26')!;
    assert.match(ipNote.content, /Verdict: unknown/);
    assert.match(ipNote.content, /rep: error: timeout after 5000 ms/);
    const whole = JSON.stringify(bundle);
    assert.doesNotMatch(whole, /<script|<b>/i, 'no raw HTML');
    assert.doesNotMatch(whole, new RegExp(EXTENSION), 'browser extension ids are left out');
  });

  test('the same analysis gives the same bundle', async () => {
    assert.equal(await text('stix'), await text('stix'));
    const empty = JSON.parse(await text('stix', [])) as { objects: unknown[] };
    assert.equal(empty.objects.length, 1, 'the identity alone');
    assert.ok(validate(empty));
    assert.equal(stixObservable({ observable: EXTENSION, type: 'CHROME_EXTENSION' }), undefined);
  });
});

describe('misp', () => {
  // MISP core format (draft-dulaunoy-misp-core-format), "Attribute" > "type": the category-type
  // combinations allowed, for the categories and types oas uses.
  const CATEGORY_TYPES: Record<string, string[]> = {
    'Network activity': ['ip-src', 'ip-dst', 'hostname', 'domain', 'email', 'email-dst', 'email-src', 'url', 'uri'],
    'Payload delivery': ['md5', 'sha1', 'sha256', 'ip-dst', 'hostname', 'domain', 'email', 'email-src', 'url', 'chrome-extension-id'],
  };
  const THREAT_LEVELS = ['1', '2', '3', '4'];
  const ANALYSIS_LEVELS = ['0', '1', '2'];
  const EVENT_DISTRIBUTIONS = ['0', '1', '2', '3', '4'];
  const ATTRIBUTE_DISTRIBUTIONS = ['0', '1', '2', '3', '4', '5'];

  test('an event in MISP\'s JSON format, field by field', async () => {
    const document = JSON.parse(await text('misp')) as { Event: Record<string, any> };
    assert.deepEqual(Object.keys(document), ['Event']);
    const event = document.Event;
    assert.match(event.uuid, UUID);
    assert.equal(typeof event.info, 'string');
    assert.ok(event.info.length <= 256 && !event.info.includes('\n'), 'info: at most 256 characters, one line');
    assert.equal(event.info, `oas analysis ${ANALYSIS_ID}: ${results.length} observable(s), 4 malicious, 1 suspicious`);
    assert.equal(event.date, '2026-11-23');
    assert.ok(THREAT_LEVELS.includes(event.threat_level_id));
    assert.equal(event.threat_level_id, '1', 'High: a malicious observable');
    assert.ok(ANALYSIS_LEVELS.includes(event.analysis));
    assert.equal(event.analysis, '2', 'Completed');
    assert.ok(EVENT_DISTRIBUTIONS.includes(event.distribution));
    assert.equal(event.distribution, '0', 'your organisation only');
    assert.equal(event.published, false);
    assert.equal(event.timestamp, String(Date.parse('2026-11-23T12:00:04.250Z') / 1000 | 0));
    assert.equal(event.publish_timestamp, '0');
    assert.deepEqual(event.Tag, [{ name: 'oas' }]);
    assert.ok(Array.isArray(event.Attribute));
    assert.equal(event.Attribute.length, results.length);

    const expected: [string, string, string, boolean][] = [
      ['example.com', 'domain', 'Network activity', true],
      ['www.example.com', 'hostname', 'Network activity', false],
      ['8.8.8.8', 'ip-dst', 'Network activity', false],
      ['2001:db8::1', 'ip-dst', 'Network activity', false],
      [URL_VALUE, 'url', 'Network activity', true],
      [MD5.toLowerCase(), 'md5', 'Payload delivery', true],
      [SHA1, 'sha1', 'Payload delivery', false],
      [SHA256, 'sha256', 'Payload delivery', false],
      ['user@example.org', 'email-src', 'Payload delivery', false],
      [EXTENSION, 'chrome-extension-id', 'Payload delivery', true],
      ['203.0.113.9', 'ip-dst', 'Network activity', false],
    ];
    const uuids = new Set<string>();
    event.Attribute.forEach((attribute: Record<string, any>, i: number) => {
      const [value, type, category, toIds] = expected[i]!;
      assert.equal(attribute.value, value);
      assert.equal(attribute.type, type, value);
      assert.equal(attribute.category, category, value);
      assert.ok(CATEGORY_TYPES[attribute.category]!.includes(attribute.type), `${attribute.category}/${attribute.type} is a valid combination`);
      assert.equal(attribute.to_ids, toIds, `to_ids only for a malicious observable (${value})`);
      assert.equal(typeof attribute.to_ids, 'boolean');
      assert.match(attribute.uuid, UUID);
      uuids.add(attribute.uuid);
      assert.ok(ATTRIBUTE_DISTRIBUTIONS.includes(attribute.distribution));
      assert.equal(attribute.distribution, '5', 'inherits the event\'s');
      assert.equal(attribute.timestamp, event.timestamp);
      assert.equal(attribute.deleted, false);
      assert.match(attribute.comment, new RegExp(`^oas verdict: ${VERDICTS[i]}\\. `));
      assert.deepEqual(attribute.Tag, [{ name: `oas:verdict="${VERDICTS[i]}"` }]);
    });
    assert.equal(uuids.size, results.length, 'one uuid per attribute');
    assert.equal(event.Attribute[0].comment, 'oas verdict: malicious. rep: score 80');
    assert.equal(event.Attribute[3].comment, 'oas verdict: unknown. no engine that judges this observable answered');
  });

  test('the threat level follows the worst verdict; an empty analysis is still an event', async () => {
    const clean = JSON.parse(await text('misp', [results[2]!])) as { Event: Record<string, any> };
    assert.equal(clean.Event.threat_level_id, '3');
    assert.equal(clean.Event.Attribute[0].to_ids, false);
    const suspicious = JSON.parse(await text('misp', [results[1]!, results[2]!])) as { Event: Record<string, any> };
    assert.equal(suspicious.Event.threat_level_id, '2');
    const empty = JSON.parse(await text('misp', [])) as { Event: Record<string, any> };
    assert.deepEqual(empty.Event.Attribute, []);
    assert.equal(empty.Event.threat_level_id, '4');
    assert.equal(await text('misp'), await text('misp'), 'the same uuids every time');
  });

  test('a domain is its registrable name; a longer host name is a hostname; a URL gives no hostname', () => {
    assert.equal(mispType({ observable: 'example.co.uk', type: 'FQDN' }).type, 'domain');
    assert.equal(mispType({ observable: 'mail.example.co.uk', type: 'FQDN' }).type, 'hostname');
    assert.equal(mispType({ observable: 'https://docs.example.com/x', type: 'URL' }).type, 'url');
  });
});
