/**
 * Files in (issue 35), through the surfaces: `oas extract` and `oas analyze --file` as
 * subprocesses, `POST /api/extract` and multipart `POST /api/analyze` over real HTTP, against the
 * loopback fakes (ipquery records which addresses it was sent). Each observable keeps where it was
 * found (`found_in`), results follow the order of first appearance in the file, only the
 * observables the caller kept are analysed, and a file that is too large or cannot be read is one
 * line naming it (exit 2, HTTP 413 / 422) while the server keeps answering.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { noStack, runOas } from './helpers/cli.js';
import { completedResults, spawnServe, type ServeProcess } from './helpers/serve.js';
import { startFakeCyberbro } from './fakes/cyberbro-server.js';
import { pdfWith } from './helpers/corpus-docs.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const CSV = [
  'host,ip,note',
  'mail.example.org,45.33.1.1,"first, quoted"',
  'cdn.example.net,10.0.0.7,private',
  'nothing here,,',
  'mail.example.org,91.92.93.94,"again: 45.33.1.1"',
].join('\r\n');

type Result = Record<string, unknown> & { observable: string; found_in?: string[] };

let upstreams: Upstreams;
let config: { dir: string; file: string; dataDir: string };
let server: ServeProcess;
let csvPath: string;
let audit: string;

const ipquerySeen = () => upstreams.intel.requests.filter((r) => r.path.startsWith('/ipquery/')).map((r) => decodeURIComponent(r.path.slice('/ipquery/'.length)));

function form(fields: Record<string, string>, file?: { name: string; body: string | Uint8Array; type?: string }): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (file) data.append('file', new Blob([file.body], { type: file.type ?? 'application/octet-stream' }), file.name);
  return data;
}

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams, { max_upload_bytes: 64 * 1024, audit_log: 'audit.log' });
  audit = join(config.dir, 'audit.log');
  csvPath = join(config.dir, 'iocs.csv');
  writeFileSync(csvPath, CSV);
  server = await spawnServe(config.file, { cwd: config.dir });
});

after(async () => {
  await server?.stop();
  await upstreams?.close();
});

describe('oas extract', () => {
  test('a CSV: each observable once, in order, with every row and column it was found in; nothing is looked up', async () => {
    upstreams.intel.reset();
    const run = await runOas(config.dir, ['extract', csvPath, '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const preview = JSON.parse(run.stdout) as { file: { name: string; kind: string; bytes: number }; observables: { value: string; type: string; found_in: string[]; internal?: string }[] };
    assert.deepEqual(preview.file, { name: 'iocs.csv', kind: 'csv', bytes: Buffer.byteLength(CSV) });
    assert.deepEqual(preview.observables.map((o) => o.value), ['mail.example.org', '45.33.1.1', 'cdn.example.net', '10.0.0.7', '91.92.93.94']);
    const byValue = new Map(preview.observables.map((o) => [o.value, o]));
    assert.deepEqual(byValue.get('mail.example.org')!.found_in, ['row 2, column host', 'row 5, column host']);
    assert.deepEqual(byValue.get('45.33.1.1')!.found_in, ['row 2, column ip', 'row 5, column note']);
    assert.match(byValue.get('10.0.0.7')!.internal ?? '', /private/, 'the team\'s own address is marked internal');
    assert.equal(byValue.get('45.33.1.1')!.internal, undefined);
    assert.equal(upstreams.intel.requests.length, 0, 'no engine was asked');
  });

  test('--column, the table, and a text argument', async () => {
    const only = await runOas(config.dir, ['extract', csvPath, '--column', 'ip', '--json', '--config', config.file]);
    assert.equal(only.code, 0, only.stderr);
    assert.deepEqual((JSON.parse(only.stdout) as { observables: { value: string }[] }).observables.map((o) => o.value), ['45.33.1.1', '10.0.0.7', '91.92.93.94']);
    const table = await runOas(config.dir, ['extract', csvPath, '--config', config.file], { env: { COLUMNS: '120' } });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^iocs\.csv: csv, \d+ bytes, 5 observable\(s\)/);
    assert.match(table.stdout, /row 2, column host/);
    const text = await runOas(config.dir, ['extract', '--json', '--config', config.file, 'see', 'hxxp://evil[.]example/x', 'and', '45.33.9.9']);
    assert.equal(text.code, 0, text.stderr);
    const fromText = JSON.parse(text.stdout) as { file: { kind: string }; observables: { value: string; found_in: string[] }[] };
    assert.deepEqual(fromText.observables.map((o) => o.value), ['http://evil.example/x', '45.33.9.9']);
    assert.deepEqual(fromText.observables[0]!.found_in, ['text line 1']);
  });

  test('a PDF read from disk (a Node Buffer, which pdf.js refuses as it is): its pages\' text and link targets', async () => {
    const pdf = join(config.dir, 'report.pdf');
    writeFileSync(pdf, await pdfWith({ pages: ['C2 at 45.33.3.3', 'see the portal'], links: [{ page: 1, uri: 'https://portal.evil.com/login' }] }));
    const run = await runOas(config.dir, ['extract', pdf, '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const preview = JSON.parse(run.stdout) as { file: { kind: string }; observables: { value: string; found_in: string[] }[] };
    assert.equal(preview.file.kind, 'pdf');
    assert.deepEqual(preview.observables.map((o) => [o.value, o.found_in]), [['45.33.3.3', ['report.pdf page 1']], ['https://portal.evil.com/login', ['report.pdf page 2, link']]]);
  });

  test('bad input: unknown column, a missing file, a file over max_upload_bytes: one line, exit 2', async () => {
    const column = await runOas(config.dir, ['extract', csvPath, '--column', 'nope', '--config', config.file]);
    assert.equal(column.code, 2);
    assert.match(column.stderr, /iocs\.csv.*nope/);
    noStack(column.stderr);
    const big = join(config.dir, 'big.txt');
    writeFileSync(big, 'x'.repeat(70 * 1024));
    const tooBig = await runOas(config.dir, ['analyze', '--file', big, '--config', config.file]);
    assert.equal(tooBig.code, 2);
    assert.match(tooBig.stderr, /big\.txt.*more than max_upload_bytes \(65536\)/);
    noStack(tooBig.stderr);
    const missing = await runOas(config.dir, ['analyze', '--file', join(config.dir, 'absent.eml'), '--config', config.file]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.eml: cannot be read \(ENOENT\)/);
  });
});

describe('oas analyze --file', () => {
  test('the file\'s observables, in order, each result with its found_in; the team\'s own address reaches no third party', async () => {
    upstreams.intel.reset();
    const run = await runOas(config.dir, ['analyze', '--file', csvPath, '--engines', 'provider_13', '--json', '--ignore-cache', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout) as Result[];
    assert.deepEqual(results.map((r) => r.observable), ['mail.example.org', '45.33.1.1', 'cdn.example.net', '10.0.0.7', '91.92.93.94']);
    assert.deepEqual(results[1]!.found_in, ['row 2, column ip', 'row 5, column note']);
    assert.ok(!ipquerySeen().includes('10.0.0.7'), 'the private address was not sent');
  });

  test('standard input as a file (--file -), with text arguments too; the table shows where each was found', async () => {
    const run = await runOas(config.dir, ['analyze', '--file', '-', '--engines', 'provider_13', '--config', config.file, '45.33.7.7'], { input: CSV, env: { COLUMNS: '100' } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /45\.33\.7\.7/);
    assert.match(run.stdout, /found in: row 2, column ip; row 5, column note/);
  });
});

describe('oas analyze --server --file', () => {
  test('an oas server reads the file: the results come back with found_in; a Cyberbro server is sent nothing', async () => {
    const run = await runOas(config.dir, ['analyze', '--server', server.url, '--file', csvPath, '--column', 'ip', '--engines', 'provider_13', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout) as Result[];
    assert.deepEqual(results.map((r) => [r.observable, r.found_in]), [['45.33.1.1', ['row 2, column ip']], ['10.0.0.7', ['row 3, column ip']], ['91.92.93.94', ['row 5, column ip']]]);
    const cyberbro = await startFakeCyberbro();
    try {
      const refused = await runOas(config.dir, ['analyze', '--server', cyberbro.url, '--file', csvPath, '--engines', 'provider_13']);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /not sent: the server at .* is not an oas server .* takes no file/);
      assert.equal(cyberbro.analyses.size, 0, 'nothing reached it');
    } finally {
      await cyberbro.close();
    }
  });
});

describe('the API', () => {
  test('POST /api/extract: a JSON text and a multipart file answer the same preview', async () => {
    const fromText = await fetch(`${server.url}/api/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'ping 45.33.2.2 then evil[.]com' }) });
    assert.equal(fromText.status, 200);
    const text = (await fromText.json()) as { observables: { value: string; found_in: string[] }[] };
    assert.deepEqual(text.observables.map((o) => [o.value, o.found_in]), [['45.33.2.2', ['text line 1']], ['evil.com', ['text line 1']]]);
    const fromFile = await fetch(`${server.url}/api/extract`, { method: 'POST', body: form({}, { name: 'iocs.csv', body: CSV, type: 'text/csv' }) });
    assert.equal(fromFile.status, 200);
    const preview = (await fromFile.json()) as { file: { name: string; kind: string }; observables: { value: string }[] };
    assert.deepEqual(preview.file.kind, 'csv');
    assert.equal(preview.observables.length, 5);
  });

  test('multipart POST /api/analyze: only the observables kept, with found_in; the audit records the file\'s extension and size, not its name', async () => {
    upstreams.intel.reset();
    const res = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      body: form({ engines: 'provider_13', ignore_cache: 'true', tlp: 'GREEN', observables: '45.33.1.1\n91.92.93.94' }, { name: 'secret-customer-list.csv', body: CSV, type: 'text/csv' }),
    });
    const answer = (await res.json()) as { analysis_id: string; error?: string };
    assert.equal(res.status, 200, answer.error);
    const results = await completedResults<Result>(server.url, answer.analysis_id);
    assert.deepEqual(results.map((r) => [r.observable, r.found_in]), [['45.33.1.1', ['row 2, column ip', 'row 5, column note']], ['91.92.93.94', ['row 5, column ip']]]);
    assert.deepEqual(ipquerySeen().sort(), ['45.33.1.1', '91.92.93.94']);
    const line = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.analysis_id === answer.analysis_id && e.action === 'analysis_started');
    assert.ok(line, 'analysis_started written');
    assert.equal(line.source, 'file');
    assert.deepEqual(line.file_extensions, ['csv']);
    assert.equal(line.file_bytes, Buffer.byteLength(CSV));
    assert.doesNotMatch(readFileSync(audit, 'utf8'), /secret-customer-list/, 'never the file\'s name');
  });

  test('413 past max_upload_bytes, 422 for a file that cannot be read, 400 without a file part; the server keeps answering', async () => {
    const big = await fetch(`${server.url}/api/extract`, { method: 'POST', body: form({}, { name: 'big.txt', body: 'x'.repeat(200 * 1024) }) });
    assert.equal(big.status, 413);
    assert.match(((await big.json()) as { error: string }).error, /max_upload_bytes/);
    const broken = await fetch(`${server.url}/api/analyze`, { method: 'POST', body: form({ engines: 'provider_13', column: 'nope' }, { name: 'iocs.csv', body: CSV }) });
    assert.equal(broken.status, 422);
    assert.match(((await broken.json()) as { error: string }).error, /^iocs\.csv: .*nope/);
    const none = await fetch(`${server.url}/api/analyze`, { method: 'POST', body: form({ engines: 'provider_13' }) });
    assert.equal(none.status, 400);
    assert.match(((await none.json()) as { error: string }).error, /"file"/);
    const poll = await fetch(`${server.url}/api/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"1.2.3.4"}' });
    assert.equal(poll.status, 200);
  });
});
