/**
 * docs/custom-engines.md holds what it shows (issue 23). Its two examples, abuse.ch URLhaus and
 * MalwareBazaar, are the JSON files docs/custom-engines/urlhaus.json and malwarebazaar.json: the
 * doc's JSON blocks must be those files, byte for byte, and each file is run as shipped by `oas
 * analyze` (a subprocess, its key in ABUSE_CH_AUTH_KEY) against a loopback fake that answers as
 * the service documents (tests/fakes/urlhaus.ts, tests/fakes/malwarebazaar.ts). The one change
 * made to a snippet is the origin of each `request.url`: `https://urlhaus-api.abuse.ch` and
 * `https://mb-api.abuse.ch` become the fake's `http://127.0.0.1:<port>`; path, headers, body,
 * fields and rules are untouched. Nothing leaves 127.0.0.1.
 *
 * Also checked: the commands of "A first engine" (its `sh` block) run as written against a loopback
 * intel API (tests/readme-examples.test.ts leaves this page to this test), the doc's terminal captures (`$ oas ...` blocks) are what those commands print,
 * every configuration error it quotes is the one `oas engines` prints for that mistake, and its
 * reference names every field a definition accepts.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_OPS, RULE_VERDICTS } from '../src/custom/definition.js';
import { startMalwareBazaar, hashesOf, KNOWN, type MalwareBazaarFake } from './fakes/malwarebazaar.js';
import { startUrlhaus, type UrlhausFake } from './fakes/urlhaus.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const DOC = read('docs/custom-engines.md');
const SNIPPETS = { urlhaus: 'docs/custom-engines/urlhaus.json', malwarebazaar: 'docs/custom-engines/malwarebazaar.json' } as const;
/** The public origin each snippet calls, as abuse.ch documents it. */
const ORIGINS = { urlhaus: 'https://urlhaus-api.abuse.ch', malwarebazaar: 'https://mb-api.abuse.ch' } as const;

/** One abuse.ch key serves both services, as it does for real. */
const KEY = 'abuse-ch-test-key-0123456789abcdef0123456789abcdef';
const WRONG_KEY = 'not-the-abuse-ch-key-9876543210';

interface Snippet {
  custom_engines: Record<string, { request: { url: string } } & Record<string, unknown>>;
  engine_sets?: Record<string, string[]>;
}

const snippet = (name: keyof typeof SNIPPETS): Snippet => JSON.parse(read(SNIPPETS[name])) as Snippet;

/** The snippet with each request's origin (only it) replaced by the fake's. */
function pointedAt(name: keyof typeof SNIPPETS, fakeUrl: string): Snippet {
  const copy = snippet(name);
  for (const [id, definition] of Object.entries(copy.custom_engines)) {
    assert.ok(definition.request.url.startsWith(`${ORIGINS[name]}/`), `${id} calls ${ORIGINS[name]} in the shipped snippet`);
    definition.request.url = fakeUrl + definition.request.url.slice(ORIGINS[name].length);
  }
  return copy;
}

/** The ```lang blocks of a Markdown text, in order. */
function blocks(markdown: string): { lang: string; body: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

let urlhaus: UrlhausFake;
let bazaar: MalwareBazaarFake;
/** A folder whose oas.config.json holds both snippets, pointed at the fakes. */
let dir: string;

before(async () => {
  urlhaus = await startUrlhaus({ key: KEY });
  bazaar = await startMalwareBazaar({ key: KEY });
  dir = tempDir('oas-custom-docs-');
  writeConfig(dir, { edit: () => {} });
});

after(async () => {
  await Promise.all([urlhaus?.close(), bazaar?.close()]);
});

/** Writes `<folder>/oas.config.json`: both snippets at the fakes, a data folder of its own. */
function writeConfig(folder: string, options: { edit: (config: Snippet) => void }): void {
  const a = pointedAt('urlhaus', urlhaus.url);
  const b = pointedAt('malwarebazaar', bazaar.url);
  const config: Snippet = { custom_engines: { ...a.custom_engines, ...b.custom_engines }, engine_sets: { ...a.engine_sets, ...b.engine_sets } };
  options.edit(config);
  writeFileSync(join(folder, 'oas.config.json'), JSON.stringify({ data_dir: join(folder, 'data'), ...config }, null, 2));
}

/** `oas analyze --json` in `folder` with `key` in ABUSE_CH_AUTH_KEY (null: none), its result array parsed. */
async function analyzeJson(folder: string, args: string[], key: string | null = KEY): Promise<{ run: Run; results: Record<string, unknown>[] }> {
  const run = await runOas(folder, ['analyze', '-q', '--json', ...args], { env: key === null ? {} : { ABUSE_CH_AUTH_KEY: key } });
  noStack(run.stderr);
  return { run, results: JSON.parse(run.stdout) as Record<string, unknown>[] };
}

const byObservable = (results: Record<string, unknown>[], observable: string) => {
  const found = results.find((r) => r.observable === observable);
  assert.ok(found, `a result for ${observable}`);
  return found as Record<string, unknown> & { verdict: string; reasons: string[]; errors?: Record<string, string> };
};

describe('docs/custom-engines.md shows its snippet files', () => {
  for (const [name, path] of Object.entries(SNIPPETS)) {
    test(`${path} is valid JSON, calls the real public API, reads its key from ABUSE_CH_AUTH_KEY, and is in the doc as is`, () => {
      const text = read(path);
      const parsed = JSON.parse(text) as Snippet;
      for (const definition of Object.values(parsed.custom_engines)) {
        assert.ok(definition.request.url.startsWith(ORIGINS[name as keyof typeof ORIGINS]));
        assert.deepEqual(definition.secrets, { AUTH_KEY: 'ABUSE_CH_AUTH_KEY' });
      }
      const shown = blocks(DOC).filter((b) => b.lang === 'json' && b.body === text);
      assert.equal(shown.length, 1, `the doc shows ${path} exactly once, byte for byte, in a json block`);
      assert.ok(DOC.includes(path.replace('docs/', '')), `the doc names the file ${path}`);
    });
  }

  test('every json block of the doc that calls abuse.ch is a snippet file; every definition it shows is accepted', async () => {
    const files = Object.values(SNIPPETS).map(read);
    const json = blocks(DOC).filter((b) => b.lang === 'json');
    const abuseCh = json.filter((b) => b.body.includes('abuse.ch'));
    assert.equal(abuseCh.length, files.length);
    for (const block of abuseCh) assert.ok(files.includes(block.body));
    // The other configurations it shows (the first engine, say) are valid as they are.
    for (const block of json.filter((b) => !b.body.includes('abuse.ch') && b.body.includes('"custom_engines"'))) {
      const folder = tempDir('oas-custom-doc-block-');
      writeFileSync(join(folder, 'oas.config.json'), block.body);
      const run = await runOas(folder, ['engines', '--sets']);
      assert.equal(run.code, 0, `${block.body}\n${run.stderr}`);
    }
  });

  test('the reference names every field of a definition, every operator and every verdict', () => {
    for (const field of ['label', 'description', 'types', 'reversed_ip', 'request', 'secrets', 'not_found', 'fields', 'summary', 'evidence', 'timeout_ms', 'concurrency', 'quota', 'ssl_verify']) {
      assert.match(DOC, new RegExp(`^#+ \`${field}\``, 'm'), `a heading for ${field}`);
    }
    for (const field of ['method', 'url', 'headers', 'query', 'body']) assert.match(DOC, new RegExp(`^#+ \`request\\.${field}\``, 'm'), `a heading for request.${field}`);
    for (const op of RULE_OPS) assert.ok(DOC.includes(`| \`${op}\` |`), `the operator table has ${op}`);
    for (const verdict of RULE_VERDICTS) assert.ok(DOC.includes(`\`${verdict}\``), verdict);
    for (const placeholder of ['{value}', '{raw}', '{type}', '{secret.NAME}']) assert.ok(DOC.includes(`\`${placeholder}\``), placeholder);
  });
});

describe('the URLhaus example against a loopback URLhaus', () => {
  test('a listed host with a URL still online is malicious, its summary read from the answer', async () => {
    urlhaus.server.reset();
    const folder = tempDir('oas-urlhaus-');
    writeConfig(folder, { edit: () => {} });
    const { run, results } = await analyzeJson(folder, ['--set', 'urlhaus', 'vektorex.com']);
    assert.equal(run.code, 0, run.stderr);
    const result = byObservable(results, 'vektorex.com');
    assert.equal(result.verdict, 'malicious');
    assert.deepEqual(result.reasons, ['urlhaus_host: 2 malware URL(s), the latest still online: http://vektorex.com/source/Z/5016223.exe']);
    assert.deepEqual(result.urlhaus_host, {
      status: 'ok',
      url_count: '2',
      first_seen: '2019-02-11 06:47:03 UTC',
      spamhaus_dbl: 'abused_legit_malware',
      latest_url: 'http://vektorex.com/source/Z/5016223.exe',
      latest_status: 'online',
      latest_tags: ['AZORult', 'exe'],
      reference: 'https://urlhaus.abuse.ch/host/vektorex.com/',
    });
    // As the API documents the call: a form POST with the host, the key in Auth-Key.
    const [call] = urlhaus.server.hits('POST /v1/host/');
    assert.ok(call);
    assert.equal(call.headers['auth-key'], KEY);
    assert.match(String(call.headers['content-type']), /^application\/x-www-form-urlencoded/);
    assert.equal(call.body, 'host=vektorex.com');
    // The table shows the summary template filled in.
    const table = await runOas(folder, ['analyze', '-q', '--set', 'urlhaus', 'vektorex.com'], { env: { ABUSE_CH_AUTH_KEY: KEY, COLUMNS: '200' } });
    assert.match(table.stdout, /urlhaus_host +ok; URLs: 2, first seen: 2019-02-11 06:47:03 UTC, latest: online \(AZORult, exe\)/);
  });

  test('a listed address whose latest URL is offline is suspicious; an unlisted host ("no_results", HTTP 200) is clean', async () => {
    const { run, results } = await analyzeJson(dir, ['--set', 'urlhaus', '45.61.49.78', 'example.org']);
    assert.equal(run.code, 0, run.stderr);
    const listed = byObservable(results, '45.61.49.78');
    assert.equal(listed.verdict, 'suspicious');
    assert.deepEqual(listed.reasons, ['urlhaus_host: 1 malware URL(s) since 2024-09-27 10:44:06 UTC, the latest offline']);
    const unlisted = byObservable(results, 'example.org');
    assert.equal(unlisted.verdict, 'clean');
    assert.deepEqual(unlisted.reasons, ['urlhaus_host: not in URLhaus']);
    assert.equal((unlisted.urlhaus_host as Record<string, unknown>).status, 'no_results');
    assert.equal((unlisted.urlhaus_host as Record<string, unknown>).url_count, null);
  });

  test('a listed URL is malicious, an unlisted one clean; the URL goes as the form field "url"', async () => {
    urlhaus.server.reset();
    const { run, results } = await analyzeJson(dir, ['--set', 'urlhaus', 'http://vektorex.com/source/Z/5016223.exe', 'https://example.org/login']);
    assert.equal(run.code, 0, run.stderr);
    const listed = byObservable(results, 'http://vektorex.com/source/Z/5016223.exe');
    assert.equal(listed.verdict, 'malicious');
    assert.deepEqual(listed.reasons, ['urlhaus_url: malware_download URL, online (AZORult, exe)']);
    assert.equal(byObservable(results, 'https://example.org/login').verdict, 'clean');
    const bodies = urlhaus.server.hits('POST /v1/url/').map((r) => new URLSearchParams(r.body).get('url')).sort();
    assert.deepEqual(bodies, ['http://vektorex.com/source/Z/5016223.exe', 'https://example.org/login']);
  });

  test('a refused key is an authentication error naming ABUSE_CH_AUTH_KEY; the key is never printed', async () => {
    const folder = tempDir('oas-urlhaus-key-');
    writeConfig(folder, { edit: () => {} });
    const { run, results } = await analyzeJson(folder, ['--set', 'urlhaus', 'vektorex.com'], WRONG_KEY);
    assert.equal(run.code, 1, 'every selected engine failed');
    const result = byObservable(results, 'vektorex.com');
    assert.equal(result.verdict, 'unknown');
    assert.deepEqual(result.errors, { urlhaus_host: 'URLhaus host: authentication failed (HTTP 401) (key refused: check ABUSE_CH_AUTH_KEY)' });
    assert.ok(!run.stdout.includes(WRONG_KEY) && !run.stderr.includes(WRONG_KEY));
  });

  test('without ABUSE_CH_AUTH_KEY the engines are "not configured" and URLhaus is not called', async () => {
    urlhaus.server.reset();
    const folder = tempDir('oas-urlhaus-nokey-');
    writeConfig(folder, { edit: () => {} });
    const { results } = await analyzeJson(folder, ['--set', 'urlhaus', 'vektorex.com'], null);
    assert.deepEqual(byObservable(results, 'vektorex.com').errors, { urlhaus_host: 'not configured: ABUSE_CH_AUTH_KEY' });
    assert.equal(urlhaus.server.requests.length, 0);
  });

  test('answers are cached per observable; editing the definition leaves its cached answers behind', async () => {
    const folder = tempDir('oas-urlhaus-cache-');
    writeConfig(folder, { edit: () => {} });
    urlhaus.server.reset();
    await analyzeJson(folder, ['-e', 'urlhaus_host', 'vektorex.com']);
    await analyzeJson(folder, ['-e', 'urlhaus_host', 'vektorex.com']);
    assert.equal(urlhaus.server.requests.length, 1, 'the second analysis read the cache');
    writeConfig(folder, { edit: (config) => void (config.custom_engines.urlhaus_host!.summary = '{status}: {url_count} URL(s)') });
    const { results } = await analyzeJson(folder, ['-e', 'urlhaus_host', 'vektorex.com']);
    assert.equal(urlhaus.server.requests.length, 2, 'the edited definition asked again');
    assert.equal(byObservable(results, 'vektorex.com').verdict, 'malicious');
  });
});

describe('the MalwareBazaar example against a loopback MalwareBazaar', () => {
  const { md5, sha1, sha256 } = hashesOf(KNOWN);
  const unknown = 'f'.repeat(64);

  test('a known sample is malicious by its SHA256, SHA1 or MD5; an unknown hash ("hash_not_found", HTTP 200) is clean', async () => {
    bazaar.server.reset();
    const { run, results } = await analyzeJson(dir, ['-e', 'malwarebazaar', sha256, sha1, md5, unknown]);
    assert.equal(run.code, 0, run.stderr);
    for (const hash of [sha256, sha1, md5]) {
      const result = byObservable(results, hash);
      assert.equal(result.verdict, 'malicious', hash);
      assert.deepEqual(result.reasons, ['malwarebazaar: known AgentTesla sample (exe), first seen 2022-05-05 15:17:50']);
      assert.deepEqual(result.malwarebazaar, {
        status: 'ok', signature: 'AgentTesla', file_type: 'exe', file_name: 'Invoice.exe', first_seen: '2022-05-05 15:17:50', tags: ['AgentTesla', 'exe'], sha256,
      });
    }
    const missing = byObservable(results, unknown);
    assert.equal(missing.verdict, 'clean');
    assert.deepEqual(missing.reasons, ['malwarebazaar: not in MalwareBazaar']);
    // The documented call: a form POST of query=get_info and the hash, the key in Auth-Key.
    const calls = bazaar.server.hits('POST /api/v1/');
    assert.equal(calls.length, 4);
    for (const call of calls) {
      assert.equal(call.headers['auth-key'], KEY);
      const form = new URLSearchParams(call.body);
      assert.equal(form.get('query'), 'get_info');
      assert.ok([sha256, sha1, md5, unknown].includes(form.get('hash')!));
    }
  });

  test('the engine set "files" runs it beside VirusTotal, whose missing key fails only its own lookup', async () => {
    const { run, results } = await analyzeJson(dir, ['--set', 'files', sha256]);
    assert.equal(run.code, 0, run.stderr);
    const result = byObservable(results, sha256);
    assert.equal(result.verdict, 'malicious');
    assert.match(result.errors?.virustotal ?? '', /^not configured: /);
  });

  test('a refused key (403) is an authentication error naming ABUSE_CH_AUTH_KEY', async () => {
    const folder = tempDir('oas-bazaar-key-');
    writeConfig(folder, { edit: () => {} });
    const { run, results } = await analyzeJson(folder, ['-e', 'malwarebazaar', sha256], WRONG_KEY);
    assert.equal(run.code, 1);
    assert.deepEqual(byObservable(results, sha256).errors, { malwarebazaar: 'MalwareBazaar: authentication failed (HTTP 403) (key refused: check ABUSE_CH_AUTH_KEY)' });
    assert.ok(!run.stdout.includes(WRONG_KEY) && !run.stderr.includes(WRONG_KEY));
  });
});

describe('oas engines with the examples', () => {
  test('lists them as custom engines, configured once ABUSE_CH_AUTH_KEY is set, and their sets', async () => {
    const table = await runOas(dir, ['engines'], { env: { ABUSE_CH_AUTH_KEY: KEY, COLUMNS: '120' } });
    assert.equal(table.code, 0, table.stderr);
    for (const id of ['urlhaus_host', 'urlhaus_url', 'malwarebazaar']) assert.match(table.stdout, new RegExp(`^${id} ~ .* yes *$`, 'm'), id);
    assert.match(table.stdout, /~ custom \(setting custom_engines\)/);
    const missing = await runOas(dir, ['engines'], { env: { COLUMNS: '120' } });
    assert.match(missing.stdout, /^malwarebazaar ~ .* no: ABUSE_CH_AUTH_KEY *$/m);
    const json = JSON.parse((await runOas(dir, ['engines', '--json'])).stdout) as { id: string; custom: boolean; catalog: string }[];
    assert.deepEqual(json.filter((e) => e.custom).map((e) => [e.id, e.catalog]).sort(), [['malwarebazaar', 'custom'], ['urlhaus_host', 'custom'], ['urlhaus_url', 'custom']]);
    const sets = JSON.parse((await runOas(dir, ['engines', '--sets', '--json'])).stdout) as unknown;
    assert.deepEqual(sets, [
      { name: 'urlhaus', engines: ['urlhaus_host', 'urlhaus_url'], ids: ['urlhaus_host', 'urlhaus_url'] },
      { name: 'files', engines: ['malwarebazaar', 'virustotal'], ids: ['malwarebazaar', 'provider_24'] },
    ]);
  });
});

describe('the terminal captures of the doc', () => {
  // A ```text block starting with `$ oas ...` (after optional VAR=value): that command, in the
  // folder of both snippets at the fakes, with a fresh data folder (no cache between captures),
  // prints exactly the rest of the block; the analysis id aside.
  const captures = blocks(DOC).filter((b) => b.lang === 'text' && /^\$ (\w+=\S+ )*oas /.test(b.body));
  const normalise = (text: string) => text.trimEnd().split('\n').map((line) => line.trimEnd().replace(/analysis [0-9a-f-]{36}$/, 'analysis <id>'));

  test('the doc has terminal captures', () => assert.ok(captures.length >= 3, `captures: ${captures.length}`));

  for (const capture of captures) {
    const [first, ...expected] = capture.body.split('\n');
    const words = first!.slice(2).split(/\s+/);
    const env: Record<string, string> = { ABUSE_CH_AUTH_KEY: KEY, COLUMNS: '100' };
    while (/^\w+=/.test(words[0]!)) {
      const [name, value] = words.shift()!.split(/=(.*)/) as [string, string];
      env[name] = value;
    }
    test(`prints what it shows: ${first}`, async () => {
      assert.equal(words.shift(), 'oas');
      const run = await runOas(dir, [...words, ...(words[0] === 'analyze' ? ['--data-dir', tempDir('oas-capture-')] : [])], { env });
      noStack(run.stderr);
      assert.deepEqual(normalise(run.stdout), normalise(expected.join('\n')));
    });
  }
});

describe('the configuration errors the doc quotes', () => {
  const intel = (extra: Record<string, unknown> = {}, request: Record<string, unknown> = {}) => ({
    intel: { types: ['IPv4'], request: { url: 'https://intel.example/ip/{value}', ...request }, fields: { score: '/data/score' }, ...extra },
  });
  const cases: [string, Record<string, unknown>, string][] = [
    ['a misspelt placeholder', { custom_engines: intel({}, { url: 'https://intel.example/ip/{valu}' }) }, 'custom_engines.intel.request.url: unknown placeholder {valu}; did you mean {value}?'],
    ['an undeclared secret', { custom_engines: intel({}, { headers: { 'X-Api-Key': '{secret.KEY}' } }) }, 'custom_engines.intel.request.headers.X-Api-Key: unknown placeholder {secret.KEY} (declare KEY under custom_engines.intel.secrets)'],
    ['a key in place of its variable', { custom_engines: intel({ secrets: { KEY: 'a3f9b8c7d6e5f4a3b2c1d0e9f8a7b6c5' } }) }, 'custom_engines.intel.secrets.KEY: this looks like a key, not the name of an environment variable: put the key in a variable (such as INTEL_API_KEY) and name that variable here'],
    ['a variable name that is no name', { custom_engines: intel({ secrets: { KEY: 'sk-live-123' } }) }, 'custom_engines.intel.secrets.KEY: expected the name of an environment variable such as INTEL_API_KEY (the secret itself never lives in the file)'],
    ['a pointer without its "/"', { custom_engines: intel({ fields: { score: 'data/score' } }) }, 'custom_engines.intel.fields.score: not a JSON Pointer (RFC 6901: "" for the whole answer, or "/" then the keys, such as "/data/score")'],
    ['a wrong type', { custom_engines: intel({ types: ['IPV4'] }) }, 'custom_engines.intel.types.0: "IPV4" is no observable type; did you mean IPv4? (types: IPv4, IPv6, FQDN, URL, MD5, SHA1, SHA256, Email, CHROME_EXTENSION)'],
    ['a misspelt field', { custom_engines: intel({ sumary: '{score}' }) }, 'custom_engines.intel.sumary: unknown field; did you mean summary?'],
    ['a summary naming no field', { custom_engines: intel({ summary: '{scor}/100' }) }, 'custom_engines.intel.summary: unknown placeholder {scor}; did you mean {score}?'],
    ['an unclosed brace', { custom_engines: intel({ summary: 'score {score' }) }, 'custom_engines.intel.summary: unclosed "{" at character 7 (write "{{" for a brace)'],
    ['a number compared with a text', { custom_engines: intel({ evidence: [{ field: 'score', op: '>=', value: '80', verdict: 'malicious' }] }) }, 'custom_engines.intel.evidence.0.value: ">=" compares numbers: expected a number'],
    ['an unknown operator', { custom_engines: intel({ evidence: [{ field: 'score', op: '=', value: 80, verdict: 'malicious' }] }) }, 'custom_engines.intel.evidence.0.op: expected one of ==, !=, >, >=, <, <=, contains, exists'],
    ['a GET with a body', { custom_engines: intel({}, { body: { q: '{value}' } }) }, 'custom_engines.intel.request.body: a GET request has no body (set "method": "POST")'],
    ['a nested form body', { custom_engines: intel({}, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: { q: { value: '{value}' } } }) }, 'custom_engines.intel.request.body.q: a form body (Content-Type application/x-www-form-urlencoded) holds only strings, numbers and booleans'],
    ['a reversed IP without an IP type', { custom_engines: intel({ types: ['FQDN'], reversed_ip: true }) }, 'custom_engines.intel.reversed_ip: the reversed IP is an address: add IPv4 or IPv6 to types'],
    ['a built-in engine\'s name', { custom_engines: { virustotal: intel().intel } }, 'custom_engines.virustotal: "virustotal" is already the id or alias of a built-in engine; choose another id'],
    ['a misspelt member of a set', { engine_sets: { triage: ['rdap_whois', 'virustotl'] } }, 'invalid "engine_sets.triage": unknown engine virustotl; did you mean virustotal?'],
  ];
  for (const [what, config, message] of cases) {
    test(`${what}: ${message}`, async () => {
      const folder = tempDir('oas-custom-error-');
      const file = join(folder, 'oas.config.json');
      writeFileSync(file, JSON.stringify(config));
      const run = await runOas(folder, ['engines']);
      assert.equal(run.code, 2);
      assert.equal(run.stderr, `oas: configuration file ${file}: ${message}\n`);
      assert.ok(DOC.includes(message), 'the doc quotes it as oas writes it');
    });
  }
});

describe('"A first engine": its commands run as written', () => {
  // The doc's first json block (the team's intel API) with its URL's origin at a loopback fake
  // answering as the doc says, beside the built-in engines at the usual fakes; then each line of
  // the sh block after it, in order, its `export` giving the key the fake expects.
  const INTEL_KEY = 'intel-docs-key-0123456789abcdef';
  let intel: FakeHttpServer;
  let upstreams: Upstreams;
  let folder: string;
  const [first] = blocks(DOC).filter((b) => b.lang === 'json');
  const commands = (blocks(DOC).find((b) => b.lang === 'sh')?.body ?? '').split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean);

  before(async () => {
    intel = await startFakeHttp({ 'GET /v1/ip/*': (req) => (req.headers['x-api-key'] === INTEL_KEY ? { json: { data: { score: 85, category: 'c2' } } } : { status: 401, json: { error: 'bad key' } }) });
    upstreams = await startUpstreams();
    const shown = JSON.parse(first!.body) as Snippet;
    const definition = shown.custom_engines['intel']!;
    assert.ok(definition.request.url.startsWith('https://intel.example/'), definition.request.url);
    definition.request.url = definition.request.url.replace('https://intel.example', intel.url);
    folder = configFor(upstreams, { custom_engines: shown.custom_engines, engine_sets: shown.engine_sets }).dir;
  });
  after(async () => {
    await Promise.all([intel?.close(), upstreams?.close()]);
  });

  test('the doc shows them', () => {
    assert.deepEqual(commands.map((c) => c.split(' ').slice(0, 2).join(' ')), ['export INTEL_API_KEY=...', 'oas engines', 'oas analyze', 'oas analyze']);
  });

  test('each exits 0; the engine is listed, called with the key, and judges as its rules say', async () => {
    const env: Record<string, string> = {};
    const outputs: string[] = [];
    for (const command of commands) {
      const exported = /^export (\w+)=\.\.\.$/.exec(command);
      if (exported) {
        env[exported[1]!] = INTEL_KEY;
        continue;
      }
      assert.doesNotMatch(command, /["'|<>]/, 'a plain command');
      const run = await runOas(folder, command.split(/\s+/).slice(1), { env: { ...env, COLUMNS: '100' } });
      noStack(run.stderr);
      assert.equal(run.code, 0, `${command}\n${run.stderr}`);
      outputs.push(run.stdout);
    }
    assert.match(outputs[0]!, /intel/);
    assert.match(outputs[1]!, /^malicious\s+8\.8\.8\.8/m);
    assert.match(outputs[1]!, /85\/100, c2/);
    assert.match(outputs[2]!, /rdap_whois|reverse_dns/);
    assert.ok(intel.hits('GET /v1/ip/8.8.8.8').length >= 1, 'the intel API was asked about 8.8.8.8');
  });
});
