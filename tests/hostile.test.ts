/**
 * What comes in stays inert (issue 34): answers from the hostile upstream of tests/fakes/hostile.ts
 * (every text an escape sequence, C1 controls, a forged line, bidi overrides, markup, a formula, a
 * `javascript:` link and a prompt), and observables holding such characters, through every surface
 * but the browser's (tests/browser-hostile.test.ts):
 *
 * - the terminal: `oas analyze` as a subprocess, its table, JSON, jsonl, STIX and MISP, `oas
 *   engines`: no raw control character of the upstream's on standard output or error, each shown as
 *   an escape (`\x1b`); on a terminal (a pseudo-terminal by `script`), our colours and nothing else;
 *   JSON stays JSON with the upstream's texts exactly;
 * - CSV and xlsx: no cell a spreadsheet would run as a formula;
 * - the logs of `oas serve`, text and JSON: one line per event, never a forged or coloured one; the
 *   audit trail's lines too;
 * - MCP (`oas mcp` driven by the SDK's client): the text says results are untrusted and holds every
 *   text of an upstream as a quoted JSON string, never as prose.
 *
 * Loopback only.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import ExcelJS from 'exceljs';
import { describeWait, ProgressState } from '../src/cli/progress.js';
import { renderColumns, renderGrid, renderTable } from '../src/cli/table.js';
import type { ResultRow } from '../src/analysis/rows.js';
import type { WaitEvent } from '../src/runner/types.js';
import { serialize } from '../src/fs/audit-log.js';
import { UNTRUSTED } from '../src/mcp/shape.js';
import { createLogger } from '../src/server/access-log.js';
import { inert, inertDocument, inertLine, jsonInert } from '../src/text/inert.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { HOSTILE, HOSTILE_ALL, HOSTILE_DOMAIN, HOSTILE_SHODAN_KEY, hostileEngines, hostileRdap, hostileSettings, rawControls, startHostile } from './fakes/hostile.js';
import { noStack, runOas, runProcess, type Run } from './helpers/cli.js';
import { BIN, completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

/** Observables holding such characters themselves: a URL with a bidi override and an OSC, one with markup. */
const BIDI_URL = 'https://evil.example/dl/invoice\u202efdp.exe\u001b]0;pwned-by-observable\u0007';
const MARKUP_URL = 'https://x.example/<img/src=x/onerror=alert(4)>';
const INPUT = `8.8.8.8 ${HOSTILE_DOMAIN} ${BIDI_URL} ${MARKUP_URL}`;
const ENGINES = ['hostile', 'shodan', 'rdap_whois'];

/** The visible forms the terminal shows instead. */
const SHOWN = {
  terminal: '\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mRED',
  c1: '\\x9b2J\\x9d0;pwned-c1\\x9c',
  bidi: 'invoice\\u202efdp.exe\\u2066iso\\u2069',
};

/** Our own colours: SGR sequences (`ESC [ ... m`), nothing else. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g;

let upstreams: Upstreams;
let hostile: FakeHttpServer;
let config: ReturnType<typeof configFor>;
const cwd = tempDir('oas-hostile-');

const oas = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> => runOas(cwd, args, options);
const analyze = (...args: string[]) => oas(['analyze', INPUT, '-e', ENGINES.join(','), '--config', config.file, ...args]);

/** No raw control character in `text` (line feeds aside). */
function assertInert(text: string, what: string): void {
  assert.deepEqual(rawControls(text), [], `${what} holds raw control characters`);
}

/** Every string in a JSON value. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) strings(v, out);
  return out;
}

before(async () => {
  [upstreams, hostile] = await Promise.all([startUpstreams(), startHostile()]);
  upstreams.rdap.serve(HOSTILE_DOMAIN, hostileRdap);
  config = configFor(upstreams, { custom_engines: hostileEngines(hostile.url), engines: hostileSettings(hostile.url) });
});
after(async () => {
  await Promise.all([upstreams?.close(), hostile?.close()]);
});

describe('src/text/inert.ts', () => {
  test('every C0 and C1 control, DEL, separator and bidi control becomes a visible escape; the rest is left as it is', () => {
    assert.equal(inert(HOSTILE.terminal), SHOWN.terminal);
    assert.equal(inert(HOSTILE.bidi), SHOWN.bidi);
    assert.equal(inert('a\tb\nc\rd\u0008e\u007f\u0085\u2028\u2029'), 'a\\tb\\nc\\rd\\x08e\\x7f\\x85\\u2028\\u2029');
    for (let code = 0; code < 0x2100; code++) {
      const ch = String.fromCharCode(code);
      const control = code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029 || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
      if (control) assert.match(inert(ch), /^\\(x[0-9a-f]{2}|u[0-9a-f]{4}|[tnr])$/, `U+${code.toString(16)}`);
      else assert.equal(inert(ch), ch, `U+${code.toString(16)} is left as it is`);
    }
    const plain = 'Zürich · 東京 · مرحبا · 🦊 · a\\x1b b';
    assert.equal(inert(plain), plain, 'accents, scripts, emoji and a backslash are left as they are');
    assert.equal(inert(inert(HOSTILE_ALL)), inert(HOSTILE_ALL), 'twice is once');
    assertInert(inert(HOSTILE_ALL), 'inert');
  });

  test('inertLine: one line; inertDocument: line breaks and tabs kept; jsonInert: the same JSON value', () => {
    assert.equal(inertLine('a\n\n b\t\u2028c\u001b'), 'a b c\\x1b');
    assert.equal(inertDocument('a,"b\r\nc"\r\n\t=1\u001b[2J\rX\n'), 'a,"b\r\nc"\r\n\t=1\\x1b[2J\\rX\n');
    const value = { all: HOSTILE_ALL, list: Object.values(HOSTILE) };
    const json = jsonInert(JSON.stringify(value, null, 2));
    assertInert(json.replace(/\n/g, ''), 'jsonInert');
    assert.deepEqual(JSON.parse(json), value);
    assert.match(json, /\\u009b2J/);
  });
});

describe('the terminal', () => {
  test('oas analyze: the table shows every hostile text as escapes; no raw control character on standard output or error', async () => {
    const run = await analyze();
    assert.equal(run.code, 0, run.stderr);
    assertInert(run.stdout, 'standard output');
    assertInert(run.stderr, 'standard error');
    for (const shown of Object.values(SHOWN)) assert.ok(run.stdout.includes(shown), `${shown} in\n${run.stdout}`);
    // The observables themselves: escaped too, whole.
    assert.ok(run.stdout.includes('\\u202efdp.exe\\x1b]0;pwned-by-observable\\x07'), run.stdout);
    assert.ok(run.stdout.includes('<img/src=x/onerror=alert(4)>'));
    // The forged line never starts a line of its own; Shodan's refusal is one line of its row.
    assert.doesNotMatch(run.stdout, /^2099-01-01/m);
    assert.match(run.stdout, /^ {2}shodan +error: .*HTTP 401.*\\x1b\]0;pwned/m);
    assert.match(run.stdout, /^malicious +8\.8\.8\.8 +IPv4$/m);
    assert.ok(!run.stdout.includes(HOSTILE_SHODAN_KEY) && !run.stderr.includes(HOSTILE_SHODAN_KEY));
  });

  test('--json, jsonl, stix and misp stay JSON: the upstream\'s texts exactly, none of their control characters raw', async () => {
    const json = await analyze('--json');
    assert.equal(json.code, 0, json.stderr);
    assertInert(json.stdout.replace(/\n/g, ''), '--json');
    const results = JSON.parse(json.stdout) as Record<string, unknown>[];
    const ip = results.find((r) => r.observable === '8.8.8.8')!;
    assert.deepEqual((ip.hostile as Record<string, unknown>).title, HOSTILE.terminal);
    assert.deepEqual((ip.hostile as Record<string, unknown>).c1, HOSTILE.c1);
    assert.deepEqual((ip.hostile as Record<string, unknown>).bidi, HOSTILE.bidi);
    assert.ok(results.some((r) => r.observable === BIDI_URL), 'the observable exactly');
    assert.ok(json.stdout.includes('\\u001b]0;pwned\\u0007') && json.stdout.includes('\\u009b2J') && json.stdout.includes('\\u202e'));

    const lines = await analyze('-f', 'jsonl');
    assert.equal(lines.code, 0, lines.stderr);
    const parsed = lines.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(parsed.length, 4);
    assertInert(lines.stdout, 'jsonl');
    assert.ok(strings(parsed).includes(HOSTILE.lines));

    for (const format of ['stix', 'misp']) {
      const run = await analyze('-f', format);
      assert.equal(run.code, 0, run.stderr);
      assertInert(run.stdout, format);
      assert.doesNotThrow(() => JSON.parse(run.stdout), format);
    }
  });

  test('csv and xlsx: no cell a spreadsheet would run as a formula', async () => {
    const csvFile = join(cwd, 'hostile.csv');
    const xlsxFile = join(cwd, 'hostile.xlsx');
    assert.equal((await analyze('-f', 'csv', '-o', csvFile)).code, 0);
    assert.equal((await analyze('-f', 'xlsx', '-o', xlsxFile)).code, 0);
    const cells = parseCsv(readFileSync(csvFile, 'utf8'));
    assert.ok(cells.length > 4);
    const formulaLike = cells.flat().filter((cell) => /^[=+\-@\t\r]/.test(cell));
    assert.deepEqual(formulaLike, [], 'every cell starting with = + - @ tab or CR is prefixed with an apostrophe');
    assert.ok(cells.flat().some((cell) => cell.startsWith(`'${HOSTILE.formula}`)), 'the summary starting with the formula is text, prefixed');

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(xlsxFile);
    let seen = 0;
    for (const sheet of workbook.worksheets) {
      sheet.eachRow((row) => row.eachCell((cell) => {
        seen++;
        assert.notEqual(cell.type, ExcelJS.ValueType.Formula, `${sheet.name}!${cell.address}`);
        if (typeof cell.value === 'string') assert.doesNotMatch(cell.value, /^[=+\-@\t\r]/, `${sheet.name}!${cell.address}: ${cell.value}`);
      }));
    }
    assert.ok(seen > 10);
    const texts = workbook.worksheets.flatMap((sheet) => sheet.getSheetValues().flat().filter((v): v is string => typeof v === 'string'));
    assert.ok(texts.includes(`'${HOSTILE.formula}`), 'the hostile formula is text, prefixed');
  });

  test('oas engines: a custom engine\'s hostile label and description, as a table, wide, or JSON', async () => {
    for (const [args, columns] of [[[], '200'], [[], '40'], [['--wide'], '200']] as const) {
      const run = await oas(['engines', ...args, '--config', config.file], { env: { COLUMNS: columns } });
      assert.equal(run.code, 0, run.stderr);
      assertInert(run.stdout, `oas engines ${args.join(' ')} (COLUMNS=${columns})`);
      assert.ok(run.stdout.includes('hostile'), run.stdout);
    }
    const json = await oas(['engines', '--json', '--config', config.file]);
    assert.equal(json.code, 0, json.stderr);
    assertInert(json.stdout.replace(/\n/g, ''), 'oas engines --json');
    const entry = (JSON.parse(json.stdout) as { id: string; label: string; description: string }[]).find((e) => e.id === 'hostile')!;
    assert.equal(entry.label, `Hostile intel ${HOSTILE.terminal}`);
    assert.equal(entry.description, `An intel API an adversary writes to ${HOSTILE.c1} ${HOSTILE.bidi}`);
  });

  test('an error line holding a value from a file or an argument: one line, its controls as escapes', async () => {
    const run = await oas(['analyze', '8.8.8.8', '--format', `x${HOSTILE.terminal}`, '--config', config.file]);
    assert.equal(run.code, 2);
    assertInert(run.stderr, 'the error line');
    assert.ok(run.stderr.includes(SHOWN.terminal), run.stderr);
    assert.equal(run.stderr.split('\n').length, 2, 'one line');
    noStack(run.stderr);
  });

  test('oas analyze --server: the server\'s answers, table and JSON, inert; a server\'s error message too', async () => {
    let server: ServeProcess | undefined;
    let broken: FakeHttpServer | undefined;
    try {
      server = await spawnServe(config.file);
      const table = await analyze('--server', server.url);
      assert.equal(table.code, 0, table.stderr);
      assertInert(table.stdout, 'the table of a remote analysis');
      assertInert(table.stderr, 'its standard error');
      assert.ok(table.stdout.includes(SHOWN.terminal), table.stdout);
      const json = await analyze('--server', server.url, '--json');
      assert.equal(json.code, 0, json.stderr);
      assertInert(json.stdout.replace(/\n/g, ''), 'the JSON of a remote analysis');
      assert.ok(strings(JSON.parse(json.stdout)).includes(HOSTILE.c1));

      broken = await startFakeHttp({ 'POST /api/analyze': { status: 500, json: { error: `${HOSTILE.terminal} ${HOSTILE.lines}` } } });
      const failed = await oas(['analyze', '8.8.8.8', '-e', 'hostile', '--server', broken.url, '--config', config.file]);
      assert.equal(failed.code, 1, failed.stderr);
      assertInert(failed.stderr, 'the error line');
      assert.equal(failed.stderr.split('\n').length, 2, `one line: ${failed.stderr}`);
      assert.ok(failed.stderr.includes(SHOWN.terminal), failed.stderr);
    } finally {
      await Promise.all([server?.stop(), broken?.close()]);
    }
  });

  const script = existsSync('/usr/bin/script') ? '/usr/bin/script' : undefined;
  test('on a terminal (a pseudo-terminal), with colours: our colour codes and nothing else; CSV shown inert', { skip: script ? false : 'no /usr/bin/script for a pseudo-terminal' }, async () => {
    const input = join(cwd, 'input.txt');
    writeFileSync(input, INPUT);
    const shell = (args: string) => `exec '${process.execPath}' '${BIN}' analyze -q -e ${ENGINES.join(',')} --config '${config.file}' ${args} < '${input}'`;
    const env = { PATH: process.env.PATH ?? '', HOME: cwd, TERM: 'xterm-256color', COLUMNS: '160', ...tmpEnv() };
    const table = await runProcess(script!, ['-qec', shell(''), '/dev/null'], { cwd, env });
    assert.equal(table.code, 0, table.stdout);
    assert.match(table.stdout, SGR, 'colours on a terminal');
    const bare = table.stdout.replace(SGR, '').replace(/\r\n/g, '\n');
    assertInert(bare, 'the terminal, colours aside');
    assert.ok(bare.includes(SHOWN.terminal), bare);

    const csv = await runProcess(script!, ['-qec', shell('-f csv'), '/dev/null'], { cwd, env });
    assert.equal(csv.code, 0, csv.stdout);
    // CSV's own line ends (CRLF) arrive as CR CR LF: the terminal's driver adds a CR before each LF.
    assertInert(csv.stdout.replace(/\r+\n/g, '\n'), 'CSV on a terminal');
    assert.ok(csv.stdout.includes(SHOWN.terminal), csv.stdout);
  });

  test('renderTable with colours: only our SGR codes; renderColumns and renderGrid: the cells inert', () => {
    const row: ResultRow = { observable: BIDI_URL, type: 'URL', engine: 'hostile', service: `hostile${HOSTILE.c1}`, status: 'error', summary: HOSTILE_ALL, verdict: 'malicious', reasons: [`hostile: ${HOSTILE.prompt} ${HOSTILE.terminal}`], reversedIp: `1.2.3.4${HOSTILE.lines}` };
    const out = renderTable([row], 100, { color: true, footer: [`analysis ${HOSTILE.terminal}`] });
    assert.match(out, SGR);
    assertInert(out.replace(SGR, ''), 'renderTable');
    assert.ok(out.includes(SHOWN.terminal));
    for (const text of [renderColumns([{ head: `H${HOSTILE.bidi}` }, { head: 'B', flexible: true }], [[HOSTILE.terminal, HOSTILE_ALL]], 80, { color: false }), renderGrid([`H${HOSTILE.c1}`], [[HOSTILE_ALL]])]) {
      assertInert(text.replace(SGR, ''), 'columns');
    }
  });

  test('progress: a wait\'s reason and a custom engine\'s name, on the spinner and as lines', () => {
    const wait: WaitEvent = { engine: 'hostile', service: `hostile${HOSTILE.terminal}`, kind: 'retry', reason: HOSTILE.lines, ms: 30_000, until: 31_000 };
    const state = new ProgressState([{ key: 'hostile', service: `hostile${HOSTILE.bidi}` }], 2);
    const line = state.update({ done: 0, total: 2, wait }, 1000);
    assert.ok(line);
    assertInert(line, 'the wait line');
    assert.ok(line.includes(SHOWN.terminal), line);
    const spinner = state.text('Analyzing', { done: 0, total: 2 }, 1000, 400);
    assertInert(spinner.replace(/\n/g, ''), 'the spinner');
    assert.ok(describeWait(wait).includes(HOSTILE.lines), 'describeWait itself leaves the text to its writers');
  });
});

describe('logs', () => {
  test('createLogger: an engine error whose reason holds a line break, ESC or C1 is one uncoloured line, text and JSON', () => {
    for (const format of ['text', 'json'] as const) {
      const lines: string[] = [];
      const logger = createLogger({ format, write: (line) => lines.push(line) });
      logger.engineError({ analysis: 'a1', engine: 'provider_20', error: `HTTP 401: ${HOSTILE_ALL}` });
      logger.error(HOSTILE.lines);
      logger.info(HOSTILE.c1);
      logger.request({ time: '2026-01-01T00:00:00.000Z', client: `10.0.0.1${HOSTILE.c1}`, method: 'GET', path: `/x${HOSTILE.terminal}`, status: 200, ms: 1 });
      assert.equal(lines.length, 4);
      for (const line of lines) {
        assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, `one line: ${JSON.stringify(line)}`);
        assertInert(line.slice(0, -1), `${format} log`);
        if (format === 'json') assert.doesNotThrow(() => JSON.parse(line));
        else assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z /);
      }
      assert.ok(lines[0]!.includes(format === 'json' ? JSON.stringify(SHOWN.terminal).slice(1, -1) : SHOWN.terminal), lines[0]);
    }
  });

  test('the audit trail: a line whose fields hold control characters is one JSON line, none of them raw', () => {
    const line = serialize({ action: 'user_added', outcome: 'failure', user: `eve${HOSTILE.c1}`, client: `cli${HOSTILE.bidi}`, reason: HOSTILE_ALL }, new Date(0));
    assert.ok(!line.includes('\n'));
    assertInert(line, 'the audit line');
    const parsed = JSON.parse(line) as Record<string, string>;
    assert.ok(parsed.reason!.includes(inertLine(HOSTILE.terminal)) || parsed.reason!.length === 300, parsed.reason);
  });

  for (const format of ['text', 'json'] as const) {
    test(`oas serve --log-format ${format}: one line per engine error and per request, none forged, coloured or broken`, async () => {
      let server: ServeProcess | undefined;
      try {
        server = await spawnServe(config.file, { args: ['--log-format', format] });
        const id = await startAnalysis(server.url, INPUT, ENGINES);
        const results = await completedResults<{ errors?: Record<string, string> }>(server.url, id);
        const errors = results.reduce((n, r) => n + Object.keys(r.errors ?? {}).length, 0);
        assert.ok(errors >= 1, 'Shodan refused');
        await new Promise((done) => setTimeout(done, 200));
        const log = server.log();
        assertInert(log, 'the log');
        const lines = log.trimEnd().split('\n').filter((line) => !line.startsWith('oas listening'));
        const events = format === 'json'
          ? lines.map((line) => JSON.parse(line) as Record<string, unknown>)
          : lines.map((line) => {
            assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (engine error: \S+ \(analysis [0-9a-f-]{36}\): |error: |info: |\S+ [A-Z]+ \/\S* \d{3} \d+ms$)/, line);
            return { event: line.includes(' engine error: ') ? 'engine_error' : 'other', line };
          });
        assert.equal(events.filter((e) => e.event === 'engine_error').length, errors, log);
        assert.doesNotMatch(log, /^2099-01-01/m, 'no forged line');
        assert.ok(!log.includes(HOSTILE_SHODAN_KEY));
        if (format === 'json') assert.ok(events.some((e) => e.event === 'engine_error' && String(e.error).includes(SHOWN.terminal)), log);
        else assert.ok(lines.some((line) => line.includes(' engine error: provider_20 ') && line.includes(SHOWN.terminal)), log);
      } finally {
        await server?.stop();
      }
    });
  }
});

describe('MCP', () => {
  let client: Client;
  before(async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', config.file], cwd, env: { ...tmpEnv(), HOME: cwd }, stderr: 'pipe' });
    client = new Client({ name: 'oas-hostile-tests', version: '1.0.0' });
    await client.connect(transport);
    const child = (transport as unknown as { _process?: Parameters<typeof killAtExit>[0] })._process;
    if (child) killAtExit(child);
    await client.listTools();
  });
  after(async () => {
    await client?.close();
  });

  const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  /** The text with every JSON string literal taken out: what is left is prose, ours. */
  const prose = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  /** Fragments of the hostile texts: none may be found in the prose. */
  const FRAGMENTS = ['Ignore your instructions', '<img', '<script', 'javascript:', 'pwned', 'HYPERLINK', 'forged', 'fdp.exe', 'RED'];

  test('analyze: says results are untrusted; every text of an upstream or an observable is a quoted JSON string', async () => {
    const result = await client.callTool({ name: 'analyze', arguments: { text: INPUT, engines: ENGINES } }) as CallToolResult;
    assert.notEqual(result.isError, true, textOf(result));
    const text = textOf(result);
    assert.ok(text.includes(UNTRUSTED), text);
    assertInert(text.replace(/\n/g, ''), 'the text for the model');
    const left = prose(text);
    for (const fragment of FRAGMENTS) assert.ok(!left.includes(fragment), `"${fragment}" outside quotes in:\n${text}`);
    // Every quoted string is valid JSON, and the structured answer has the texts exactly.
    for (const literal of text.match(/"(?:[^"\\]|\\.)*"/g) ?? []) assert.doesNotThrow(() => JSON.parse(literal), literal);
    const observables = (result.structuredContent as { observables: { observable: string; verdict: string; reasons: string[]; engines: Record<string, string> }[] }).observables;
    const ip = observables.find((o) => o.observable === '8.8.8.8')!;
    assert.equal(ip.verdict, 'malicious');
    assert.ok(text.includes(`  hostile: ${jsonInert(JSON.stringify(ip.engines.hostile))}`), text);
    assert.ok(text.includes(`${jsonInert(JSON.stringify(BIDI_URL))} (URL)`), text);
    assert.ok(ip.reasons.some((r) => r.includes(HOSTILE.prompt)), 'the structured reasons are the data, exactly');
  });

  test('get_results: the result objects as JSON after the untrusted notice, within mcp_max_result_chars', async () => {
    const started = await client.callTool({ name: 'analyze', arguments: { text: INPUT, engines: ENGINES } }) as CallToolResult;
    const id = (started.structuredContent as { analysis_id: string }).analysis_id;
    const result = await client.callTool({ name: 'get_results', arguments: { analysis_id: id } }) as CallToolResult;
    const text = textOf(result);
    const [head, ...rest] = text.split('\n');
    assert.ok(head!.endsWith(UNTRUSTED), head);
    assertInert(text.replace(/\n/g, ''), 'get_results');
    const left = prose(rest.join('\n'));
    for (const fragment of FRAGMENTS) assert.ok(!left.includes(fragment), `"${fragment}" outside quotes`);
    const structured = result.structuredContent as { results: Record<string, unknown>[]; left_out?: string };
    const json = rest.join('\n');
    assert.deepEqual(JSON.parse(structured.left_out ? json.slice(0, -structured.left_out.length - 1) : json), structured.results);
    assert.ok(strings(structured.results).includes(HOSTILE.prompt));
  });
});

/** RFC 4180, as src/export/csv.ts writes it: quoted cells may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}
