import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { defineEngine } from '../src/engine/contract.js';

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
  return mkdtempSync(join(tmpdir(), 'oas-config-'));
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
    bad({ api_cache_timout: 5 }, /unknown key "api_cache_timout"/);
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
