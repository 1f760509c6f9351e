/**
 * An invalid `custom_engines` definition (issue 23) stops `oas engines`, `oas analyze` and `oas
 * serve` before any work, with exit 2 and one stderr line naming the exact path of the problem
 * and what is wrong (`custom_engines.intel.request.url: unknown placeholder {valu}`), no stack
 * trace. One table holds every message a definition can get: each case is checked through the
 * configuration loader in this process and through `oas engines`; a few through all three
 * commands, from the file and from OAS_CUSTOM_ENGINES.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadSettings } from '../src/app.js';
import { ConfigError } from '../src/config/load.js';
import { noStack, type Run } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';

const cwd = tempDir('oas-custom-config-');

/** `oas args` in `cwd` with only PATH, HOME, TMPDIR and `env`; killed after 20 s (a server that should not have started). */
function oas(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = killAtExit(spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Exit 2, nothing on stdout, exactly one stderr line, which it returns; no stack trace. */
function oneLineError(run: Run, what: string): string {
  assert.equal(run.code, 2, `${what}: exit 2\n${run.stdout}${run.stderr}`);
  assert.equal(run.stdout, '', `${what}: nothing on stdout`);
  noStack(run.stderr);
  const lines = run.stderr.split('\n');
  assert.equal(lines.length, 2, `${what}: one line:\n${run.stderr}`);
  assert.equal(lines[1], '');
  return lines[0]!;
}

/** A valid definition for an API keyed in a header: every case changes one thing of it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a definition, edited in place by each case
function valid(): Record<string, any> {
  return {
    label: 'Internal intel',
    types: ['IPv4'],
    request: { url: 'https://intel.example/ip/{value}', headers: { 'X-Api-Key': '{secret.KEY}' } },
    secrets: { KEY: 'INTEL_API_KEY' },
    fields: { score: '/data/score', tags: '/data/tags' },
    summary: 'score {score}',
    evidence: [
      { field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' },
      { field: 'tags', op: 'contains', value: 'c2', verdict: 'suspicious', reason: 'tagged {tags}' },
    ],
  };
}

type Definition = ReturnType<typeof valid>;

interface Case {
  what: string;
  /** The `custom_engines` setting: the valid definition under `intel`, changed. */
  custom: Record<string, unknown>;
  /** The message, after `configuration file <file>: `: it starts with this. */
  message: string;
}

/** `custom_engines: { intel: <valid, changed by edit> }`. */
function change(edit: (d: Definition) => void): Record<string, unknown> {
  const d = valid();
  edit(d);
  return { intel: d };
}

const A_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

const CASES: Case[] = [
  // The engine's id
  { what: 'upper-case id', custom: { Intel: valid() }, message: 'custom_engines.Intel: an engine id is lower-case letters, digits and "_", starting with a letter' },
  { what: 'id starting with a digit', custom: { '1intel': valid() }, message: 'custom_engines.1intel: an engine id is lower-case letters, digits and "_", starting with a letter' },
  { what: 'id with a dash', custom: { 'my-intel': valid() }, message: 'custom_engines.my-intel: an engine id is lower-case letters, digits and "_", starting with a letter' },
  { what: 'a built-in engine\'s alias', custom: { virustotal: valid() }, message: 'custom_engines.virustotal: "virustotal" is already the id or alias of a built-in engine; choose another id' },
  { what: 'a built-in engine\'s id', custom: { provider_24: valid() }, message: 'custom_engines.provider_24: "provider_24" is already the id or alias of a built-in engine; choose another id' },
  { what: 'a key of every result (type)', custom: { type: valid() }, message: 'custom_engines.type: "type" is a key of every result (observable, type, found_in, reversed_success, reversed_ip, errors, withheld, verdict, reasons, tlp, pap); choose another id' },
  { what: 'a key of every result (verdict)', custom: { verdict: valid() }, message: 'custom_engines.verdict: "verdict" is a key of every result' },
  { what: 'the second engine, the first being valid', custom: { intel: valid(), intel_b: { ...valid(), types: ['IPV4'] } }, message: 'custom_engines.intel_b.types.0: "IPV4" is no observable type; did you mean IPv4?' },

  // The definition itself
  { what: 'a URL instead of a definition', custom: { intel: 'https://intel.example/ip/{value}' }, message: 'custom_engines.intel: expected an object such as { "types": ["IPv4"], "request": { "url": "https://intel.example/ip/{value}" }, "fields": { "score": "/score" } }' },
  { what: 'null', custom: { intel: null }, message: 'custom_engines.intel: expected an object such as' },
  { what: 'a misspelt field', custom: change((d) => { d.lable = d.label; delete d.label; }), message: 'custom_engines.intel.lable: unknown field; did you mean label?' },
  { what: 'an unknown field', custom: change((d) => { d.priority = 1; }), message: 'custom_engines.intel.priority: unknown field (fields: label, description, types, reversed_ip, request, secrets, not_found, fields, summary, evidence, timeout_ms, concurrency, quota, ssl_verify, disclosure, touches_target, max_tlp, max_pap)' },
  { what: 'a disclosure that is none of the three', custom: change((d) => { d.disclosure = 'public'; }), message: 'custom_engines.intel.disclosure: expected one of none, internal, third_party (where the engine sends an observable)' },
  { what: 'a max_tlp that is no TLP level', custom: change((d) => { d.max_tlp = 'PINK'; }), message: 'custom_engines.intel.max_tlp: "PINK" is no TLP level: use one of CLEAR, GREEN, AMBER, AMBER+STRICT, RED (with or without "TLP:", in any case)' },
  { what: 'an empty label', custom: change((d) => { d.label = ' '; }), message: 'custom_engines.intel.label: expected a non-empty string' },
  { what: 'a description that is no text', custom: change((d) => { d.description = 5; }), message: 'custom_engines.intel.description: expected a non-empty string' },

  // secrets
  { what: 'secrets as a list', custom: change((d) => { d.secrets = ['INTEL_API_KEY']; }), message: 'custom_engines.intel.secrets: expected an object of secret names and the environment variables that hold them, such as { "KEY": "INTEL_API_KEY" }' },
  { what: 'a secret name with a dash', custom: change((d) => { d.secrets['api-key'] = 'INTEL_API_KEY'; }), message: 'custom_engines.intel.secrets.api-key: a secret name is letters, digits and "_"' },
  { what: 'a variable name with spaces', custom: change((d) => { d.secrets.KEY = 'intel api key'; }), message: 'custom_engines.intel.secrets.KEY: expected the name of an environment variable such as INTEL_API_KEY (the secret itself never lives in the file)' },
  { what: 'a number for a variable', custom: change((d) => { d.secrets.KEY = 42; }), message: 'custom_engines.intel.secrets.KEY: expected the name of an environment variable such as INTEL_API_KEY' },
  { what: 'the key itself for a variable', custom: change((d) => { d.secrets.KEY = A_KEY; }), message: 'custom_engines.intel.secrets.KEY: this looks like a key, not the name of an environment variable: put the key in a variable (such as INTEL_API_KEY) and name that variable here' },

  // types, reversed_ip
  { what: 'no types', custom: change((d) => { delete d.types; }), message: 'custom_engines.intel.types: missing (expected a non-empty list of observable types (IPv4, IPv6, FQDN, URL, MD5, SHA1, SHA256, Email, CHROME_EXTENSION))' },
  { what: 'types as a text', custom: change((d) => { d.types = 'IPv4'; }), message: 'custom_engines.intel.types: expected a non-empty list of observable types' },
  { what: 'an empty list of types', custom: change((d) => { d.types = []; }), message: 'custom_engines.intel.types: must name at least one observable type' },
  { what: 'a misspelt type', custom: change((d) => { d.types = ['IPv4', 'ipv6']; }), message: 'custom_engines.intel.types.1: "ipv6" is no observable type; did you mean IPv6?' },
  { what: 'a number for a type', custom: change((d) => { d.types = [4]; }), message: 'custom_engines.intel.types.0: 4 is no observable type (types: IPv4,' },
  { what: 'reversed_ip not a boolean', custom: change((d) => { d.reversed_ip = 'yes'; }), message: 'custom_engines.intel.reversed_ip: expected true or false' },
  { what: 'reversed_ip without an address type', custom: change((d) => { d.types = ['FQDN']; d.reversed_ip = true; }), message: 'custom_engines.intel.reversed_ip: the reversed IP is an address: add IPv4 or IPv6 to types' },

  // request
  { what: 'no request', custom: change((d) => { delete d.request; }), message: 'custom_engines.intel.request: missing (expected an object such as { "url": "https://intel.example/ip/{value}" })' },
  { what: 'a URL for the request', custom: change((d) => { d.request = 'https://intel.example/ip/{value}'; }), message: 'custom_engines.intel.request: expected an object such as' },
  { what: 'a misspelt request field', custom: change((d) => { d.request.header = d.request.headers; delete d.request.headers; }), message: 'custom_engines.intel.request.header: unknown field; did you mean headers?' },
  { what: 'method PUT', custom: change((d) => { d.request.method = 'PUT'; }), message: 'custom_engines.intel.request.method: expected "GET" or "POST"' },
  { what: 'no URL', custom: change((d) => { delete d.request.url; }), message: 'custom_engines.intel.request.url: missing (the address to call, such as "https://intel.example/ip/{value}")' },
  { what: 'a URL that is no text', custom: change((d) => { d.request.url = 42; }), message: 'custom_engines.intel.request.url: expected a string (a template)' },
  { what: 'a misspelt placeholder (the issue\'s example)', custom: change((d) => { d.request.url = 'https://intel.example/ip/{valu}'; }), message: 'custom_engines.intel.request.url: unknown placeholder {valu}; did you mean {value}?' },
  { what: 'an unknown placeholder', custom: change((d) => { d.request.url = 'https://intel.example/ip/{observable}'; }), message: 'custom_engines.intel.request.url: unknown placeholder {observable} (known: {value}, {raw}, {type}, {secret.NAME})' },
  { what: 'an undeclared secret', custom: change((d) => { d.request.url = 'https://intel.example/ip/{value}?token={secret.TOKEN}'; }), message: 'custom_engines.intel.request.url: unknown placeholder {secret.TOKEN} (declare TOKEN under custom_engines.intel.secrets)' },
  { what: 'an unclosed brace', custom: change((d) => { d.request.url = 'https://intel.example/ip/{value'; }), message: 'custom_engines.intel.request.url: unclosed "{" at character 26 (write "{{" for a brace)' },
  { what: 'an unopened brace', custom: change((d) => { d.request.url = 'https://intel.example/ip/}'; }), message: 'custom_engines.intel.request.url: unopened "}" at character 26 (write "}}" for a brace)' },
  { what: 'an ftp URL', custom: change((d) => { d.request.url = 'ftp://intel.example/{value}'; }), message: 'custom_engines.intel.request.url: expected an http:// or https:// URL' },
  { what: 'a URL that is only the value', custom: change((d) => { d.request.url = '{value}'; }), message: 'custom_engines.intel.request.url: expected an http:// or https:// URL' },
  { what: 'headers as a list', custom: change((d) => { d.request.headers = ['X-Api-Key: {secret.KEY}']; }), message: 'custom_engines.intel.request.headers: expected an object of header names and templates' },
  { what: 'a header name with spaces', custom: change((d) => { d.request.headers = { 'X Api Key': '{secret.KEY}' }; }), message: 'custom_engines.intel.request.headers.X Api Key: not a valid header name' },
  { what: 'a header value that is no text', custom: change((d) => { d.request.headers['X-Limit'] = 5; }), message: 'custom_engines.intel.request.headers.X-Limit: expected a string (a template)' },
  { what: 'a misspelt secret in a header', custom: change((d) => { d.request.headers['X-Api-Key'] = '{secret.KYE}'; }), message: 'custom_engines.intel.request.headers.X-Api-Key: unknown placeholder {secret.KYE} (declare KYE under custom_engines.intel.secrets)' },
  { what: 'query as a text', custom: change((d) => { d.request.query = 'ip={value}'; }), message: 'custom_engines.intel.request.query: expected an object of parameter names and templates' },
  { what: 'a query value that is a list', custom: change((d) => { d.request.query = { ip: ['{value}'] }; }), message: 'custom_engines.intel.request.query.ip: expected a string (a template)' },
  { what: 'a misspelt placeholder in the query', custom: change((d) => { d.request.query = { ip: '{vaule}' }; }), message: 'custom_engines.intel.request.query.ip: unknown placeholder {vaule}; did you mean {value}?' },
  { what: 'a body on a GET', custom: change((d) => { d.request.body = { ip: '{value}' }; }), message: 'custom_engines.intel.request.body: a GET request has no body (set "method": "POST")' },
  { what: 'a body that is a text', custom: change((d) => { d.request.method = 'POST'; d.request.body = '{value}'; }), message: 'custom_engines.intel.request.body: expected an object whose string values are templates' },
  { what: 'a body that is a list', custom: change((d) => { d.request.method = 'POST'; d.request.body = ['{value}']; }), message: 'custom_engines.intel.request.body: expected an object whose string values are templates' },
  { what: 'a misspelt placeholder deep in the body', custom: change((d) => { d.request.method = 'POST'; d.request.body = { query: { kinds: ['{tpye}'] } }; }), message: 'custom_engines.intel.request.body.query.kinds.0: unknown placeholder {tpye}; did you mean {type}?' },
  { what: 'a nested value in a form body', custom: change((d) => { d.request.method = 'POST'; d.request.headers['Content-Type'] = 'application/x-www-form-urlencoded'; d.request.body = { ip: '{value}', options: { limit: 1 } }; }), message: 'custom_engines.intel.request.body.options: a form body (Content-Type application/x-www-form-urlencoded) holds only strings, numbers and booleans' },

  // not_found
  { what: 'not_found as a number', custom: change((d) => { d.not_found = 404; }), message: 'custom_engines.intel.not_found: expected a list of HTTP statuses such as [404]' },
  { what: 'a status as a text', custom: change((d) => { d.not_found = [404, '410']; }), message: 'custom_engines.intel.not_found.1: expected an HTTP status (a whole number from 100 to 599)' },
  { what: 'a status out of range', custom: change((d) => { d.not_found = [600]; }), message: 'custom_engines.intel.not_found.0: expected an HTTP status (a whole number from 100 to 599)' },

  // fields
  { what: 'no fields', custom: change((d) => { delete d.fields; }), message: 'custom_engines.intel.fields: name at least one result field, such as { "score": "/data/score" }' },
  { what: 'empty fields', custom: change((d) => { d.fields = {}; }), message: 'custom_engines.intel.fields: name at least one result field' },
  { what: 'fields as a list', custom: change((d) => { d.fields = ['/data/score']; }), message: 'custom_engines.intel.fields: expected an object of result fields and JSON Pointers, such as { "score": "/data/score" }' },
  { what: 'a field name with a space', custom: change((d) => { d.fields['risk score'] = '/data/score'; }), message: 'custom_engines.intel.fields.risk score: a field name is letters, digits, "_", "-" and "."' },
  { what: 'a pointer without its leading "/" (the issue\'s example)', custom: change((d) => { d.fields.score = 'data/score'; }), message: 'custom_engines.intel.fields.score: not a JSON Pointer (RFC 6901: "" for the whole answer, or "/" then the keys, such as "/data/score")' },
  { what: 'a "~" not followed by 0 or 1', custom: change((d) => { d.fields.score = '/data/~2score'; }), message: 'custom_engines.intel.fields.score: not a JSON Pointer' },
  { what: 'a pointer that is no text', custom: change((d) => { d.fields.score = 3; }), message: 'custom_engines.intel.fields.score: not a JSON Pointer' },
  { what: 'a fragment pointer badly percent-encoded', custom: change((d) => { d.fields.score = '#/data/%E0%A4%A'; }), message: 'custom_engines.intel.fields.score: not a JSON Pointer' },

  // summary
  { what: 'a summary that is no text', custom: change((d) => { d.summary = 5; }), message: 'custom_engines.intel.summary: expected a string (a template over the result fields)' },
  { what: 'a misspelt field in the summary', custom: change((d) => { d.summary = 'score {scor}'; }), message: 'custom_engines.intel.summary: unknown placeholder {scor}; did you mean {score}?' },
  { what: 'a request placeholder in the summary', custom: change((d) => { d.summary = '{value}: {score}'; }), message: 'custom_engines.intel.summary: unknown placeholder {value} (fields: {score}, {tags})' },

  // evidence
  { what: 'evidence as an object', custom: change((d) => { d.evidence = d.evidence[0]; }), message: 'custom_engines.intel.evidence: expected a list of rules such as { "field": "score", "op": ">=", "value": 80, "verdict": "malicious", "reason": "score {score}" }' },
  { what: 'a rule as a text', custom: change((d) => { d.evidence = ['score >= 80']; }), message: 'custom_engines.intel.evidence.0: expected a rule such as' },
  { what: 'a misspelt rule field', custom: change((d) => { d.evidence[1].verdit = d.evidence[1].verdict; delete d.evidence[1].verdict; }), message: 'custom_engines.intel.evidence.1.verdit: unknown field; did you mean verdict?' },
  { what: 'a rule on an unknown field', custom: change((d) => { d.evidence[0].field = 'scor'; }), message: 'custom_engines.intel.evidence.0.field: unknown field scor (fields: score, tags)' },
  { what: 'a rule without a field', custom: change((d) => { delete d.evidence[0].field; }), message: 'custom_engines.intel.evidence.0.field: expected a field name (fields: score, tags)' },
  { what: 'op "="', custom: change((d) => { d.evidence[0].op = '='; }), message: 'custom_engines.intel.evidence.0.op: expected one of ==, !=, >, >=, <, <=, contains, exists' },
  { what: 'op "gt"', custom: change((d) => { d.evidence[0].op = 'gt'; }), message: 'custom_engines.intel.evidence.0.op: expected one of ==, !=, >, >=, <, <=, contains, exists' },
  { what: 'no op', custom: change((d) => { delete d.evidence[0].op; }), message: 'custom_engines.intel.evidence.0.op: expected one of' },
  { what: 'exists with a text', custom: change((d) => { d.evidence[0] = { field: 'score', op: 'exists', value: 'yes', verdict: 'clean' }; }), message: 'custom_engines.intel.evidence.0.value: with "exists", true (the field is there, the default) or false (it is not)' },
  { what: 'a comparison without a value', custom: change((d) => { delete d.evidence[1].value; }), message: 'custom_engines.intel.evidence.1.value: missing (what the field is compared with)' },
  { what: 'a number comparison with a text', custom: change((d) => { d.evidence[0].value = '80'; }), message: 'custom_engines.intel.evidence.0.value: ">=" compares numbers: expected a number' },
  { what: 'a list to compare with', custom: change((d) => { d.evidence[1].value = ['c2', 'botnet']; }), message: 'custom_engines.intel.evidence.1.value: expected a string, a number, true, false or null' },
  { what: 'verdict "bad"', custom: change((d) => { d.evidence[0].verdict = 'bad'; }), message: 'custom_engines.intel.evidence.0.verdict: expected one of malicious, suspicious, clean' },
  { what: 'verdict "unknown"', custom: change((d) => { d.evidence[0].verdict = 'unknown'; }), message: 'custom_engines.intel.evidence.0.verdict: expected one of malicious, suspicious, clean' },
  { what: 'a misspelt field in a reason', custom: change((d) => { d.evidence[1].reason = 'tagged {tag}'; }), message: 'custom_engines.intel.evidence.1.reason: unknown placeholder {tag}; did you mean {tags}?' },
  { what: 'a reason that is no text', custom: change((d) => { d.evidence[0].reason = 80; }), message: 'custom_engines.intel.evidence.0.reason: expected a string (a template over the result fields)' },

  // timeout_ms, concurrency, quota, ssl_verify
  { what: 'timeout_ms 0', custom: change((d) => { d.timeout_ms = 0; }), message: 'custom_engines.intel.timeout_ms: expected a whole number of at least 1' },
  { what: 'timeout_ms as a text', custom: change((d) => { d.timeout_ms = '300'; }), message: 'custom_engines.intel.timeout_ms: expected a whole number of at least 1' },
  { what: 'concurrency 2.5', custom: change((d) => { d.concurrency = 2.5; }), message: 'custom_engines.intel.concurrency: expected a whole number of at least 1' },
  { what: 'quota as a number', custom: change((d) => { d.quota = 4; }), message: 'custom_engines.intel.quota: expected an object such as { "calls": 4, "per_seconds": 60 }' },
  { what: 'a misspelt quota field', custom: change((d) => { d.quota = { calls: 4, per_second: 60 }; }), message: 'custom_engines.intel.quota.per_second: unknown field; did you mean per_seconds?' },
  { what: 'quota without calls', custom: change((d) => { d.quota = { per_seconds: 60 }; }), message: 'custom_engines.intel.quota.calls: missing (expected a whole number of at least 1)' },
  { what: 'quota.calls 0', custom: change((d) => { d.quota = { calls: 0, per_seconds: 60 }; }), message: 'custom_engines.intel.quota.calls: expected a whole number of at least 1' },
  { what: 'quota.calls 1.5', custom: change((d) => { d.quota = { calls: 1.5, per_seconds: 60 }; }), message: 'custom_engines.intel.quota.calls: expected a whole number of at least 1' },
  { what: 'quota without per_seconds', custom: change((d) => { d.quota = { calls: 4 }; }), message: 'custom_engines.intel.quota.per_seconds: missing (expected a number above 0)' },
  { what: 'quota.per_seconds 0', custom: change((d) => { d.quota = { calls: 4, per_seconds: 0 }; }), message: 'custom_engines.intel.quota.per_seconds: expected a number above 0' },
  { what: 'ssl_verify as a text', custom: change((d) => { d.ssl_verify = 'false'; }), message: 'custom_engines.intel.ssl_verify: expected true or false' },

  // The setting as a whole
  { what: 'custom_engines as a text', custom: 'intel' as unknown as Record<string, unknown>, message: 'invalid "custom_engines": expected an object of engine definitions keyed by engine id, such as { "intel": { "types": ["IPv4"], "request": { "url": "https://intel.example/ip/{value}" } } }, got a string' },
];

let written = 0;
/** A configuration file with this `custom_engines` (and a data directory that must not be created). */
function writeConfig(custom: unknown, extra: Record<string, unknown> = {}): { file: string; dataDir: string } {
  const dir = tempDir('oas-custom-config-case-');
  const file = join(dir, `config-${++written}.json`);
  const dataDir = join(dir, 'data');
  writeFileSync(file, JSON.stringify({ data_dir: dataDir, custom_engines: custom, ...extra }));
  return { file, dataDir };
}

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

describe('every invalid definition, one line naming its exact path', () => {
  test('the valid definition the cases change is accepted', async () => {
    const { file } = writeConfig({ intel: valid(), intel_b: valid() });
    const { catalog } = await loadSettings({ file, env: {} });
    assert.equal(catalog.find('intel')?.custom, true);
    const run = await oas(['engines', '--config', file]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^intel ~ /m);
  });

  test('through the configuration loader: a ConfigError naming the file, the path and what is wrong', async () => {
    assert.ok(CASES.length > 80, `${CASES.length} cases`);
    for (const { what, custom, message } of CASES) {
      const { file } = writeConfig(custom);
      await assert.rejects(loadSettings({ file, env: {} }), (error: Error) => {
        assert.ok(error instanceof ConfigError, `${what}: a ConfigError, not ${error.name}: ${error.message}`);
        assert.ok(error.message.startsWith(`configuration file ${file}: ${message}`), `${what}:\n  got      ${error.message}\n  expected configuration file ${file}: ${message}...`);
        assert.ok(!error.message.includes('\n'), `${what}: one line`);
        return true;
      }, what);
    }
  });

  test('through oas engines: exit 2, one line "oas: <file>: <path>: <what is wrong>", no stack trace', async () => {
    await inBatches(CASES, 8, async ({ what, custom, message }) => {
      const { file } = writeConfig(custom);
      const line = oneLineError(await oas(['engines', '--config', file]), what);
      assert.ok(line.startsWith(`oas: configuration file ${file}: ${message}`), `${what}:\n  got      ${line}\n  expected oas: configuration file ${file}: ${message}...`);
    });
  });

  test('a key written in place of a variable\'s name is never repeated', async () => {
    const { file } = writeConfig(change((d) => { d.secrets.KEY = A_KEY; }));
    const line = oneLineError(await oas(['engines', '--config', file]), 'key');
    assert.ok(!line.includes(A_KEY), line);
    assert.ok(!line.includes(A_KEY.slice(0, 12)), line);
  });
});

describe('every command stops before any work: oas engines, analyze and serve', () => {
  const CHOSEN = [
    { what: 'unknown placeholder', custom: change((d) => { d.request.url = 'https://intel.example/ip/{valu}'; }), message: 'custom_engines.intel.request.url: unknown placeholder {valu}; did you mean {value}?' },
    { what: 'not a JSON Pointer', custom: change((d) => { d.fields.score = 'data/score'; }), message: 'custom_engines.intel.fields.score: not a JSON Pointer (RFC 6901' },
    { what: 'evidence op', custom: change((d) => { d.evidence[0].op = '=>'; }), message: 'custom_engines.intel.evidence.0.op: expected one of ==, !=, >, >=, <, <=, contains, exists' },
    { what: 'quota', custom: change((d) => { d.quota = { calls: 4 }; }), message: 'custom_engines.intel.quota.per_seconds: missing (expected a number above 0)' },
  ];
  const COMMANDS: string[][] = [['engines'], ['analyze', '8.8.8.8', '--engines', 'reverse_dns'], ['analyze', '8.8.8.8', '--engines', 'intel'], ['serve', '--port', '0']];

  test('from the file: exit 2, one line, nothing on stdout, no data directory made', async () => {
    await Promise.all(CHOSEN.flatMap(({ what, custom, message }) => COMMANDS.map(async (command) => {
      const { file, dataDir } = writeConfig(custom);
      const line = oneLineError(await oas([...command, '--config', file]), `${command.join(' ')}: ${what}`);
      assert.equal(line, line.trim());
      assert.ok(line.startsWith(`oas: configuration file ${file}: ${message}`), `${command[0]} ${what}: ${line}`);
      assert.ok(!existsSync(dataDir), `${command[0]} ${what}: nothing done before the error`);
    })));
  });

  test('from OAS_CUSTOM_ENGINES: the variable is named instead of the file', async () => {
    await Promise.all(COMMANDS.map(async (command) => {
      const dataDir = join(tempDir('oas-custom-config-env-'), 'data');
      const line = oneLineError(await oas(command, { OAS_CUSTOM_ENGINES: JSON.stringify(CHOSEN[1]!.custom), OAS_DATA_DIR: dataDir }), `${command[0]} OAS_CUSTOM_ENGINES`);
      assert.ok(line.startsWith(`oas: environment variable OAS_CUSTOM_ENGINES: ${CHOSEN[1]!.message}`), line);
      assert.ok(!existsSync(dataDir), `${command[0]}: nothing done before the error`);
    }));
    const notJson = oneLineError(await oas(['engines'], { OAS_CUSTOM_ENGINES: '{"intel": ' }), 'not JSON');
    assert.match(notJson, /^oas: environment variable OAS_CUSTOM_ENGINES: /);
  });

  test('a secret written under engines.<id> is refused: a custom engine reads it only from its variable', async () => {
    const { file } = writeConfig({ intel: valid() }, { engines: { intel: { 'secret.KEY': 'the-key-itself' } } });
    const line = oneLineError(await oas(['engines', '--config', file]), 'engines.intel.secret.KEY');
    assert.ok(line.startsWith(`oas: configuration file ${file}: engines.intel.secret.KEY: unknown setting`), line);
    assert.ok(!line.includes('the-key-itself'), line);
    // The settings every engine takes are taken.
    const ok = writeConfig({ intel: valid() }, { engines: { intel: { retries: 0, timeout_ms: 2000, concurrency: 2 } } });
    const run = await oas(['engines', '--config', ok.file]);
    assert.equal(run.code, 0, run.stderr);
  });
});
