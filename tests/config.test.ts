import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, knownEngineSettings, loadConfig } from '../src/config/load.js';
import { closest, editDistance } from '../src/lookup/did-you-mean.js';
import { KEYS } from '../src/config/schema.js';
import { loadEngineDefinitions } from '../src/engine/catalog.js';
import { defineEngine } from '../src/engine/contract.js';
import { tempDir } from './helpers/temp.js';

const keyed = defineEngine({
  id: 'provider_99',
  service: 'examplesvc',
  label: 'Example',
  description: 'test engine with a key',
  tags: ['IP'],
  types: ['IPv4'],
  credentials: [{ setting: 'api_key', label: 'API key', env: ['EXAMPLESVC'] }],
  defaults: { timeout_ms: 1000 },
  summary: () => '',
  run: async () => null,
});

function dir(): string {
  return tempDir('oas-config-');
}

function withFile(content: unknown): { cwd: string; file: string } {
  const cwd = dir();
  const file = join(cwd, 'oas.config.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return { cwd, file };
}

describe('configuration', () => {
  test('defaults apply with no file and no environment', () => {
    const { config, file } = loadConfig({ env: { HOME: '/home/x' }, cwd: dir() });
    assert.equal(file, undefined);
    assert.equal(config.api_prefix, '/api/');
    assert.equal(config.api_cache_timeout, 86400);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.max_body_bytes, 1048576);
    assert.deepEqual(config.dns_servers, []);
    assert.equal(config.ssl_verify, true);
    assert.equal(config.data_dir, '/home/x/.cache/oas');
  });

  test('./oas.config.json is read when present', () => {
    const { cwd, file } = withFile({ api_cache_timeout: 60, dns_servers: ['127.0.0.1:5353'] });
    const loaded = loadConfig({ env: {}, cwd });
    assert.equal(loaded.file, file);
    assert.equal(loaded.config.api_cache_timeout, 60);
    assert.deepEqual(loaded.config.dns_servers, ['127.0.0.1:5353']);
  });

  test('precedence: flag, then environment, then file, then default', () => {
    const { cwd } = withFile({ api_cache_timeout: 60, port: 9000, host: '0.0.0.0' });
    const env = { OAS_API_CACHE_TIMEOUT: '3600', OAS_PORT: '9100' };
    const { config } = loadConfig({ env, cwd, flags: { port: 9200 } });
    assert.equal(config.port, 9200);
    assert.equal(config.api_cache_timeout, 3600);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.max_body_bytes, 1048576);
  });

  test("the reference's plain variable names are accepted, OAS_ names win", () => {
    const { config } = loadConfig({
      cwd: dir(),
      env: { API_CACHE_TIMEOUT: '10', API_PREFIX: 'v1', PROXY_URL: 'http://proxy.local:3128', SSL_VERIFY: 'false' },
    });
    assert.equal(config.api_cache_timeout, 10);
    assert.equal(config.api_prefix, '/v1/');
    assert.equal(config.proxy_url, 'http://proxy.local:3128');
    assert.equal(config.ssl_verify, false);
    const both = loadConfig({ cwd: dir(), env: { API_CACHE_TIMEOUT: '10', OAS_API_CACHE_TIMEOUT: '20' } });
    assert.equal(both.config.api_cache_timeout, 20);
  });

  test('list and JSON values from the environment', () => {
    const { config } = loadConfig({
      cwd: dir(),
      env: { OAS_DNS_SERVERS: '127.0.0.1:53, 10.0.0.1', OAS_ENGINES: '{"provider_99": {"timeout_ms": 500}}' },
      engines: [keyed],
    });
    assert.deepEqual(config.dns_servers, ['127.0.0.1:53', '10.0.0.1']);
    assert.equal(config.engines.provider_99?.timeout_ms, 500);
  });

  test('--config and OAS_CONFIG name the file', () => {
    const { file } = withFile({ port: 1234 });
    assert.equal(loadConfig({ env: {}, cwd: dir(), file }).config.port, 1234);
    assert.equal(loadConfig({ env: { OAS_CONFIG: file }, cwd: dir() }).config.port, 1234);
    assert.throws(() => loadConfig({ env: {}, cwd: dir(), file: '/nonexistent/oas.json' }), /configuration file not found/);
  });

  test('an invalid file is a clear error naming the bad key', () => {
    const bad = (content: unknown, pattern: RegExp) => {
      const { cwd } = withFile(content);
      assert.throws(() => loadConfig({ env: {}, cwd, engines: [keyed] }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, pattern);
        return true;
      });
    };
    bad('{ not json', /not valid JSON/);
    bad([1, 2], /must hold a JSON object/);
    bad({ api_cache_timeout: 'soon' }, /"api_cache_timeout"/);
    bad({ api_cache_timout: 5 }, /: api_cache_timout: unknown setting; did you mean api_cache_timeout\?$/);
    bad({ dns_servers: ['not-an-ip'] }, /"dns_servers\.0"/);
    bad({ port: 70000 }, /"port"/);
    bad({ engines: { nosuch: {} } }, /"engines\.nosuch": unknown engine/);
    bad({ engines: { provider_99: { timeout_ms: -1 } } }, /"engines\.provider_99\.timeout_ms"/);
  });

  test('a bad environment value names the variable', () => {
    assert.throws(() => loadConfig({ env: { OAS_PORT: 'eighty' }, cwd: dir() }), /OAS_PORT/);
    assert.throws(() => loadConfig({ env: { SSL_VERIFY: 'maybe' }, cwd: dir() }), /SSL_VERIFY/);
  });

  test('engine settings may be keyed by alias; credentials come from the environment too', () => {
    const { cwd } = withFile({ engines: { examplesvc: { api_key: 'from-file' } } });
    assert.equal(loadConfig({ env: {}, cwd, engines: [keyed] }).config.engines.provider_99?.api_key, 'from-file');
    assert.equal(loadConfig({ env: { OAS_EXAMPLESVC_API_KEY: 'from-env' }, cwd, engines: [keyed] }).config.engines.provider_99?.api_key, 'from-env');
    assert.equal(loadConfig({ env: { EXAMPLESVC: 'legacy' }, cwd: dir(), engines: [keyed] }).config.engines.provider_99?.api_key, 'legacy');
  });
});

const engines = await loadEngineDefinitions();

describe('configuration mistakes', () => {
  /** The ConfigError message of loading `content` as ./oas.config.json, with the real engines. */
  const messageOf = (content: unknown, env: NodeJS.ProcessEnv = {}): string | undefined => {
    const { cwd } = withFile(content);
    try {
      loadConfig({ env, cwd, engines });
      return undefined;
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.message;
    }
  };
  /** Valibot's own wording ("Invalid type: Expected Array but received ..."). */
  const RAW = /Invalid \w+: |Expected |[Rr]eceived /;

  test('edit distance counts a swap of neighbours as one edit; closest() keeps only near names', () => {
    assert.equal(editDistance('apikey', 'api_key'), 1);
    assert.equal(editDistance('api_kye', 'api_key'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(closest('apikey', ['base_url', 'api_key', 'timeout_ms']), 'api_key');
    assert.equal(closest('TIMEOUT_MS', ['base_url', 'timeout_ms']), 'timeout_ms');
    assert.equal(closest('zzzzzzzz', ['base_url', 'api_key', 'timeout_ms']), undefined);
    assert.equal(closest('ab', ['xy']), 'xy', 'two edits are always close');
    assert.equal(closest('abc', ['xyz']), undefined);
  });

  test('unknown keys, top-level and under engines.<id> (by id or alias), suggest the closest known one', () => {
    assert.match(messageOf({ unknow_key: 1 })!, /: unknow_key: unknown setting \(known settings: allow_unauthenticated, /);
    assert.match(messageOf({ ssl_verfy: false })!, /: ssl_verfy: unknown setting; did you mean ssl_verify\?$/);
    assert.match(messageOf({ engines: { provider_24: { apikey: 'k' } } })!, /oas\.config\.json: engines\.provider_24\.apikey: unknown setting; did you mean api_key\?$/);
    assert.match(messageOf({ engines: { ioc_one_html: { max_result: 3 } } })!, /: engines\.ioc_one_html\.max_result: unknown setting; did you mean max_results\?$/);
    assert.match(messageOf({ engines: { provider_01: { zones: 'x' } } })!, /: engines\.provider_01\.zones: unknown setting; did you mean zone\?$/);
    assert.match(messageOf({ engines: { provider_24: { timeout_ms: 1, rate_limt: 2 } } })!, /rate_limt: unknown setting; did you mean rate_limit\?$/);
    assert.match(messageOf({}, { OAS_ENGINES: '{"provider_04": {"client_secrte": "s"}}' })!, /^environment variable OAS_ENGINES: engines\.provider_04\.client_secrte: unknown setting; did you mean client_secret\?$/);
    assert.match(messageOf({ engines: { provider_2: {} } })!, /invalid "engines\.provider_2": unknown engine; did you mean provider_02\?$/);
    assert.equal(messageOf({ engines: { provider_24: { api_key: 'k', timeout_ms: 1000 } } }), undefined);
    // The environment holds many unrelated variables: an unknown OAS_* is no error.
    assert.equal(messageOf({}, { OAS_UNKNOW_KEY: '1', OAS_PORTS: '1' }), undefined);
  });

  test('every setting the docs list for an engine is one the engine knows', () => {
    // The engines' table (docs/engines.md) and the credentials' (docs/configuration.md).
    const readme = ['docs/engines.md', 'docs/configuration.md'].map((path) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')).join('\n');
    const byId = new Map(engines.map((e) => [e.id, e]));
    let checked = 0;
    for (const line of readme.split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      const id = /^`([a-z0-9_]+)`/.exec(cells[1] ?? '')?.[1];
      const engine = id ? byId.get(id) : undefined;
      if (!engine) continue;
      // Engine table: credentials and settings columns; credentials table: the settings column.
      const columns = cells.length >= 8 ? [cells[5]!, cells[6]!] : [cells[2]!];
      for (const column of columns) {
        // Parentheses hold the upstream's own names (query `token`, header `Token`) and env names.
        for (const [, name] of column.replace(/\([^)]*\)/g, '').matchAll(/`([a-z][a-z0-9_]*)`/g)) {
          if (name === 'dns_servers' || /^[A-Z]/.test(name!)) continue; // top-level / environment names
          assert.ok(knownEngineSettings(engine).has(name!), `docs: engines.${engine.id}.${name} is documented but unknown`);
          checked++;
        }
      }
    }
    assert.ok(checked > 40, `documented settings checked: ${checked}`);
  });

  test('wrong values for every top-level key: a message of our own naming the key, never a secret', () => {
    const values: unknown[] = ['', 'x', 1.5, -1, 0, 1e300, true, null, [], {}, [1], ['x', 2], { a: 1 }];
    let refused = 0;
    for (const key of Object.keys(KEYS)) {
      for (const value of values) {
        const message = messageOf({ [key]: value });
        if (message === undefined) continue;
        refused++;
        assert.match(message, new RegExp(`: invalid "${key}(\\.[^"]+)?": `), message);
        assert.doesNotMatch(message, RAW, message);
        assert.equal(message.split('\n').length, 1);
      }
    }
    assert.ok(refused > 150, `refused: ${refused}`);
    assert.doesNotMatch(messageOf({ api_token: ['secret-token-value'] })!, /secret-token-value/);
    assert.doesNotMatch(messageOf({ proxy_url: 'ftp://user:secret-password@proxy' })!, /secret-password/);
  });

  test('wrong values for every setting of every engine: a message of our own, never the value of a key', () => {
    const values: unknown[] = [12, -3, 'x', true, null, [], {}];
    let refused = 0;
    for (const engine of engines) {
      for (const setting of knownEngineSettings(engine)) {
        for (const value of values) {
          const message = messageOf({ engines: { [engine.id]: { [setting]: value } } });
          if (message === undefined) continue;
          refused++;
          assert.match(message, new RegExp(`: invalid "engines\\.${engine.id}\\.${setting}": `), message);
          assert.doesNotMatch(message, RAW, message);
        }
      }
    }
    assert.ok(refused > 300, `refused: ${refused}`);
    const secret = messageOf({ engines: { provider_24: { api_key: ['vt-secret-key'] } } })!;
    assert.match(secret, /invalid "engines\.provider_24\.api_key": expected a string, got a list/);
    assert.doesNotMatch(secret, /vt-secret-key/);
  });

  test('proxy_url: an http(s) URL or "" (direct)', () => {
    for (const good of ['', 'http://127.0.0.1:3128', 'https://proxy.example', ' http://proxy.example:8080 ']) assert.equal(messageOf({ proxy_url: good }), undefined, good);
    for (const bad of ['proxy.example:3128', 'socks5://proxy:1080', 'http://', 'file:///etc/passwd', 'x']) {
      assert.match(messageOf({ proxy_url: bad })!, /invalid "proxy_url": expected an http:\/\/ or https:\/\/ URL/, bad);
    }
    assert.match(messageOf({}, { PROXY_URL: 'nope' })!, /^environment variable PROXY_URL: invalid "proxy_url"/);
  });

  test('dns_servers: a list of IP addresses with optional ports', () => {
    assert.match(messageOf({ dns_servers: '9.9.9.9' })!, /invalid "dns_servers": expected a list of IP addresses \(ip or ip:port\), got a string$/);
    assert.match(messageOf({ dns_servers: { a: 1 } })!, /got an object$/);
    for (const bad of ['256.1.1.1', '1.1.1', '1.1.1.1:0', '1.1.1.1:65536', '[1.1.1.1]:53', 'fe80::1:53:x', 'localhost']) {
      assert.match(messageOf({ dns_servers: [bad] })!, /invalid "dns_servers\.0": expected an IP address \(ip or ip:port\)/, bad);
    }
    for (const good of ['9.9.9.9', '9.9.9.9:5353', '::1', '2620:fe::fe', '[2620:fe::fe]:53']) assert.equal(messageOf({ dns_servers: [good] }), undefined, good);
  });
});
