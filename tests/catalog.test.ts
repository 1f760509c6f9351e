/**
 * The two catalog variants of the spec, as `oas engines` lists them: every engine id with the
 * spec's tags, the older variant's differences and absences, the defaults of each, and the
 * `catalog` setting from the flag, the environment and the file (a bad value is exit 2, one line).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { noStack, runOas } from './helpers/cli.js';
import { spawnServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';

const cwd = tempDir('oas-catalog-');
const oas = (args: string[], env: Record<string, string> = {}) => runOas(cwd, args, { env: { OAS_DATA_DIR: join(cwd, 'data'), ...env } });

interface Listed {
  id: string;
  service: string;
  tags: string[];
  catalog: string;
  default: boolean;
  credentials: { setting: string; required: boolean }[];
}

/** The spec's main catalog: engine id → tags, in the spec's order. */
const MAIN: Record<string, string[]> = {
  provider_01: ['the service', 'free_no_key'],
  provider_02: ['IP'],
  provider_03: ['IP'],
  bad_asn: ['IP', 'risk', 'free_no_key'],
  provider_04: ['hash', 'IP', 'domain', 'URL'],
  provider_05: ['IP'],
  provider_06: ['domain', 'URL', 'IP', 'hash'],
  provider_07: ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping'],
  search_engine: ['domain', 'URL', 'IP', 'hash'],
  public_dns: ['IP', 'domain', 'URL'],
  safe_browsing: ['risk', 'domain', 'IP'],
  provider_08: ['domain', 'URL', 'email', 'free_no_key'],
  provider_09: ['domain', 'URL', 'IP', 'hash', 'scraping'],
  provider_10: ['domain', 'URL', 'IP', 'hash', 'scraping'],
  provider_11: ['default', 'IP', 'risk', 'VPN', 'proxy'],
  provider_12: ['IP'],
  provider_13: ['IP', 'risk', 'VPN', 'proxy', 'free_no_key'],
  provider_14: ['hash', 'IP', 'domain', 'URL'],
  provider_15: ['IP', 'domain', 'URL', 'hash'],
  provider_16: ['domain', 'URL', 'IP', 'hash'],
  provider_17: ['risk', 'domain', 'URL', 'free_no_key'],
  rdap_whois: ['default', 'the service', 'domain', 'free_no_key'],
  reverse_dns: ['default', 'domain', 'IP', 'the service', 'free_no_key'],
  provider_18: ['domain', 'URL', 'IP', 'hash'],
  provider_19: ['IP', 'domain', 'URL', 'email'],
  provider_20: ['ports', 'IP'],
  provider_21: ['VPN', 'proxy'],
  provider_22: ['IP', 'domain', 'URL'],
  provider_23: ['domain', 'URL', 'IP', 'hash', 'free_no_key'],
  provider_24: ['hash', 'risk', 'IP', 'domain', 'URL'],
  provider_25: ['IP'],
};

/** The reference's newer engines, beyond the spec's catalog (id = the reference's name). */
const BEYOND = ['crtsh', 'ransomware_live', 'misp_feedback', 'hister', 'chrome_extension'];

/** The spec's "Differences in the older catalog variant". */
const OLDER_ABSENT = ['bad_asn', 'provider_06', 'provider_11', 'provider_18', 'provider_19', 'rdap_whois'];
const OLDER_TAGS: Record<string, string[]> = {
  rdap: ['default', 'the service', 'domain', 'free_no_key'],
  provider_03: ['risk'],
  search_engine: ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping'],
  provider_12: ['IP'],
  provider_13: ['default', 'IP', 'risk', 'VPN', 'proxy', 'free_no_key'],
  provider_21: ['VPN', 'proxy', 'free_no_key', 'scraping'],
  provider_22: ['IP', 'domain', 'URL', 'free_no_key'],
};
/** Engines that need no key in the older variant although they do in the main one. */
const OLDER_KEYLESS = ['search_engine', 'provider_21', 'provider_22'];

const sorted = (values: Iterable<string>) => [...values].sort();

async function listing(args: string[] = [], env: Record<string, string> = {}): Promise<Listed[]> {
  const run = await oas(['engines', '--json', ...args], env);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Listed[];
}

describe('catalog variants', () => {
  test('main: every engine of the spec with its tags, the legacy rdap as an older extra, three defaults', async () => {
    const engines = await listing();
    const byId = new Map(engines.map((e) => [e.id, e]));
    assert.deepEqual(sorted(engines.filter((e) => e.catalog === 'main').map((e) => e.id)), sorted(Object.keys(MAIN)));
    for (const [id, tags] of Object.entries(MAIN)) assert.deepEqual(sorted(byId.get(id)!.tags), sorted(tags), id);
    assert.equal(byId.get('rdap')!.catalog, 'older');
    assert.equal(byId.get('rdap')!.default, false);
    assert.deepEqual(sorted(engines.filter((e) => e.default).map((e) => e.id)), ['provider_11', 'rdap_whois', 'reverse_dns']);
    assert.deepEqual(sorted(engines.filter((e) => e.catalog === 'beyond').map((e) => e.id)), sorted(BEYOND));
  });

  test('older (--catalog older): the differences, the absences, its defaults and key-less engines', async () => {
    const engines = await listing(['--catalog', 'older']);
    // The engines beyond the spec are offered by both variants, listed apart and never default.
    const beyond = engines.filter((e) => e.catalog === 'beyond');
    assert.deepEqual(sorted(beyond.map((e) => e.id)), sorted(BEYOND));
    assert.ok(beyond.every((e) => !e.default));
    const byId = new Map(engines.filter((e) => e.catalog !== 'beyond').map((e) => [e.id, e]));
    const expected = sorted([...Object.keys(MAIN).filter((id) => !OLDER_ABSENT.includes(id)), 'rdap']);
    assert.deepEqual(sorted(byId.keys()), expected);
    assert.ok([...byId.values()].every((e) => e.catalog === 'older'));
    for (const id of expected) {
      assert.deepEqual(sorted(byId.get(id)!.tags), sorted(OLDER_TAGS[id] ?? MAIN[id]!), id);
    }
    assert.deepEqual(sorted(engines.filter((e) => e.default).map((e) => e.id)), ['provider_13', 'rdap', 'reverse_dns']);
    for (const id of OLDER_KEYLESS) {
      assert.deepEqual(byId.get(id)!.credentials.filter((c) => c.required), [], `${id} needs no key in the older catalog`);
    }
    const main = new Map((await listing()).map((e) => [e.id, e]));
    for (const id of OLDER_KEYLESS) assert.ok(main.get(id)!.credentials.some((c) => c.required), `${id} needs a key in the main catalog`);
  });

  test('the setting from the environment (OAS_CATALOG) and the configuration file', async () => {
    assert.ok((await listing([], { OAS_CATALOG: 'older' })).some((e) => e.id === 'rdap' && e.default));
    const file = join(cwd, 'older.json');
    writeFileSync(file, JSON.stringify({ catalog: 'older' }));
    assert.ok(!(await listing(['--config', file])).some((e) => e.id === 'rdap_whois'));
    assert.ok((await listing(['--config', file, '--catalog', 'main'])).some((e) => e.id === 'rdap_whois'), 'the flag wins');
  });

  test('any other value: exit 2, one line naming the catalog setting', async () => {
    const file = join(cwd, 'bad.json');
    writeFileSync(file, JSON.stringify({ catalog: 'newest' }));
    for (const [args, env] of [
      [['engines', '--catalog', 'legacy'], {}],
      [['analyze', '--catalog', 'MAIN', 'example.com'], {}],
      [['serve', '--catalog', 'x', '--port', '0'], {}],
      [['engines'], { OAS_CATALOG: 'v1' }],
      [['engines', '--config', file], {}],
    ] as [string[], Record<string, string>][]) {
      const run = await oas(args, env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^oas: .*"catalog".*expected "main" or "older"\n$/, run.stderr);
      noStack(run.stderr);
    }
  });

  test('an engine absent from the older catalog is an unknown engine (exit 2)', async () => {
    for (const id of OLDER_ABSENT) {
      const run = await oas(['analyze', '--catalog', 'older', '--engines', id, 'example.com']);
      assert.equal(run.code, 2, `${id}: ${run.stderr}`);
      assert.match(run.stderr, new RegExp(`unknown engine: ${id}\\b`));
    }
  });
});

describe('oas serve --catalog older', () => {
  test('the API and the pages run the older catalog: rdap accepted, bad_asn a 400 naming it', async () => {
    const file = join(cwd, 'serve.json');
    writeFileSync(file, JSON.stringify({ data_dir: join(cwd, 'serve-data') }));
    const server = await spawnServe(file, { cwd, args: ['--catalog', 'older'] });
    try {
      const view = (await (await fetch(`${server.url}/ui/engines`)).json()) as { catalog: string; engines: Listed[] };
      assert.equal(view.catalog, 'older');
      assert.deepEqual(sorted(view.engines.filter((e) => e.default).map((e) => e.id)), ['provider_13', 'rdap', 'reverse_dns']);
      const refused = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'example.com', engines: ['rdap', 'bad_asn'] }),
      });
      assert.equal(refused.status, 400);
      assert.match(((await refused.json()) as { error: string }).error, /unknown engine: bad_asn\b/);
    } finally {
      await server.stop();
    }
  });
});
