/**
 * `oas enrich` (issue 35, the CSV round trip) as a subprocess against loopback fakes: a CSV with a
 * BOM, `;` separators, CRLF line ends, a quoted cell holding the separator, a line break and
 * doubled quotes, an empty column, rows without observables and a row with two; each original
 * record compared byte for byte, every cell compared after parsing both files with csv-parse, the
 * new cells' values for known answers of a custom engine's fake; `--column`; usage errors; TSV to
 * standard output; .xlsx in and out (read back with exceljs); a formula-looking answer guarded in
 * the new cells; a failing engine as an error in its cells. No timing is asserted.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, type Info } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { delimitedCell, delimitedRows, readDelimited, sniffSeparator, writeDelimited } from '../src/export/enrich-table.js';
import { rowCells, type ObservableCells } from '../src/export/enrich-cells.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

/** The example of docs/files.md ("CSV round trip"), run as written in a folder whose oas.config.json points at the fakes. */
const README_EXAMPLE = 'oas enrich indicators.csv -o enriched.csv --column host -e reverse_dns,rdap_whois';
/** The file the docs' example reads (tests/readme-examples.test.ts writes the same). */
const README_INDICATORS = 'host,first_seen,comment\n8.8.8.8,2026-10-01,resolver seen in proxy logs\nwww.example.com,2026-10-02,\nprinter-3,2026-10-02,no observable here\n';

/** What the intel fake knows: score and label by observable. */
const KNOWN: Record<string, { score: number; label: string }> = {
  '8.8.8.8': { score: 10, label: 'resolver' },
  'evil.example.com': { score: 90, label: 'c2; botnet' },
  '45.33.32.156': { score: 50, label: '=HYPERLINK("http://x.example/","open")' },
};

/** A custom engine that judges (`intel`) and one whose upstream always fails (`broken`). */
function customEngines(url: string): Record<string, unknown> {
  const types = ['IPv4', 'FQDN', 'URL', 'Email'];
  return {
    intel: {
      types,
      request: { url: `${url}/intel/{value}` },
      fields: { score: '/score', label: '/label' },
      summary: '{label} ({score})',
      evidence: [
        { field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: '{label}, score {score}' },
        { field: 'score', op: '>=', value: 40, verdict: 'suspicious', reason: 'score {score}' },
        { field: 'score', op: 'exists', verdict: 'clean', reason: 'known, score {score}' },
      ],
    },
    broken: { types, request: { url: `${url}/broken/{value}` }, fields: { x: '/x' } },
  };
}

const ENGINES = 'intel,broken';

/** The CSV of the tests: BOM, `;`, CRLF, quoting, an empty column, rows with none, one and two observables. */
const RECORDS = [
  '\uFEFFid;indicator;empty;note',
  '1;8.8.8.8;;"resolver; seen ""twice""\r\nsecond line"',
  '2;no indicator here;;plain',
  '3;evil[.]example[.]com;;"also 8.8.8.8"',
  '4;45.33.32.156;;',
  '5;;;',
];
const CSV = RECORDS.map((record) => `${record}\r\n`).join('');
const NEW_COLUMNS = ['oas_verdict', 'oas_reasons', 'oas_intel', 'oas_broken'];

let upstreams: Upstreams;
let intel: FakeHttpServer;
let config: ReturnType<typeof configFor>;
const cwd = tempDir('oas-enrich-');

const oas = (args: string[]): Promise<Run> => runOas(cwd, args);
const enrich = (input: string, output: string, ...args: string[]) => oas(['enrich', join(cwd, input), '-o', output === '-' ? '-' : join(cwd, output), '-e', ENGINES, '--config', config.file, ...args]);

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({
    'GET /intel/*': (req) => {
      const known = KNOWN[req.path.slice('/intel/'.length)];
      return known ? { json: known } : { status: 404, json: { error: 'unknown' } };
    },
    'GET /broken/*': { status: 500, json: { error: 'upstream down' } },
  });
  config = configFor(upstreams, { custom_engines: customEngines(intel.url), engines: { broken: { retries: 0 } } });
  writeFileSync(join(cwd, 'in.csv'), CSV);
});
after(async () => {
  await intel?.close();
  await upstreams?.close();
});

/** csv-parse's records of a file, each with its bytes in the file (line end included). */
function records(bytes: Buffer, delimiter: string): { fields: string[]; raw: Buffer }[] {
  const parsed = parse(bytes, { bom: true, delimiter, info: true, relax_column_count: true, skip_empty_lines: false, record_delimiter: ['\r\n', '\n', '\r'] }) as unknown as { record: string[]; info: Info }[];
  let start = 0;
  return parsed.map(({ record, info }) => {
    const raw = bytes.subarray(start, info.bytes);
    start = info.bytes;
    return { fields: record, raw };
  });
}

/** Exactly one line on standard error, no stack trace, exit 2; returns the line. */
function usageError(run: Run): string {
  assert.equal(run.code, 2, `exit 2: ${run.stdout}${run.stderr}`);
  noStack(run.stderr);
  const lines = run.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, run.stderr);
  return lines[0]!;
}

describe('oas enrich, CSV', () => {
  let run: Run;
  let out: Buffer;
  before(async () => {
    run = await enrich('in.csv', 'out.csv');
    out = readFileSync(join(cwd, 'out.csv'));
  });

  test('a failing engine is an error in its cells, not a failed command; stderr names the analysis', () => {
    assert.equal(run.code, 0, run.stderr);
    noStack(run.stderr);
    assert.match(run.stderr, /^3 observable\(s\) in 3 row\(s\), 2 engine\(s\), 3 failed lookup\(s\): wrote .*out\.csv; analysis [0-9a-f-]{36}\n$/);
  });

  test('each original record is there byte for byte, its line end kept, the new cells after it with the same separator', () => {
    const input = records(Buffer.from(CSV), ';');
    const output = records(out, ';');
    assert.equal(output.length, input.length);
    assert.deepEqual([...out.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the BOM stays');
    input.forEach((record, index) => {
      const original = record.raw.subarray(0, record.raw.length - 2);
      const written = output[index]!.raw;
      assert.ok(written.subarray(0, original.length).equals(original), `record ${index + 1} is kept byte for byte:\n${written}`);
      assert.equal(written.subarray(original.length, original.length + 1).toString(), ';');
      assert.equal(written.subarray(-2).toString(), '\r\n', 'its CRLF');
    });
  });

  test('every cell: the original ones as they were, then oas_verdict, oas_reasons and one oas_<engine> per engine', () => {
    const input = records(Buffer.from(CSV), ';').map((r) => r.fields);
    const output = records(out, ';').map((r) => r.fields);
    assert.deepEqual(output[0], [...input[0]!, ...NEW_COLUMNS]);
    for (let i = 1; i < input.length; i++) assert.deepEqual(output[i]!.slice(0, input[i]!.length), input[i], `row ${i + 1}'s own cells`);
    const added = output.map((fields) => fields.slice(4));
    const error = /^error: /;
    // One observable: its verdict, reasons and summaries as they are.
    assert.deepEqual(added[1]!.slice(0, 3), ['clean', 'intel: known, score 10', 'resolver (10)']);
    assert.match(added[1]![3]!, error);
    // No observable: the new cells empty, the columns aligned.
    assert.deepEqual(added[2], ['', '', '', '']);
    assert.deepEqual(added[5], ['', '', '', '']);
    // Two observables: the worst verdict, `observable: text` for each, joined with " | ".
    assert.deepEqual(added[3]!.slice(0, 3), [
      'malicious',
      'evil.example.com: intel: c2; botnet, score 90 | 8.8.8.8: intel: known, score 10',
      'evil.example.com: c2; botnet (90) | 8.8.8.8: resolver (10)',
    ]);
    assert.match(added[3]![3]!, /^evil\.example\.com: error: .* \| 8\.8\.8\.8: error: /);
    // An upstream's text that a spreadsheet would run as a formula: an apostrophe before it.
    assert.deepEqual(added[4]!.slice(0, 3), ['suspicious', 'intel: score 50', '\'=HYPERLINK("http://x.example/","open") (50)']);
  });

  test('a new cell is quoted only when it must be', () => {
    const text = out.toString('utf8');
    assert.ok(text.includes(';clean;intel: known, score 10;resolver (10);'), 'no quotes where none is needed');
    assert.ok(text.includes(';"evil.example.com: c2; botnet (90) | 8.8.8.8: resolver (10)";'), 'the separator in a cell: quoted');
    assert.ok(text.includes(';"\'=HYPERLINK(""http://x.example/"",""open"") (50)";'), 'quotes doubled');
  });

  test('one analysis for the file: each distinct observable asked once per engine', () => {
    const asked = intel.hits('GET /intel/').map((req) => req.path);
    assert.deepEqual(asked.filter((path) => path === '/intel/8.8.8.8').length, 1, asked.join('\n'));
  });
});

describe('oas enrich, choices and errors', () => {
  test('--column: only that column is read', async () => {
    const run = await enrich('in.csv', 'column.csv', '--column', 'indicator', '-q', '--ignore-cache');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '', '-q: nothing on standard error');
    const output = records(readFileSync(join(cwd, 'column.csv')), ';').map((r) => r.fields.slice(4, 7));
    assert.deepEqual(output[3], ['malicious', 'intel: c2; botnet, score 90', 'c2; botnet (90)'], 'the note column\'s 8.8.8.8 is not read');
  });

  test('an unknown --column: exit 2, naming the file\'s columns, nothing written', async () => {
    const line = usageError(await enrich('in.csv', 'unknown.csv', '--column', 'ip'));
    assert.match(line, /^oas: .*in\.csv has no column "ip"; its columns \(the names of its first row\): "id", "indicator", "empty", "note"$/);
    assert.equal(existsSync(join(cwd, 'unknown.csv')), false);
  });

  test('an output of another format, the input itself, a file of another kind, a missing file: exit 2', async () => {
    assert.match(usageError(await enrich('in.csv', 'out.xlsx')), /--output .*out\.xlsx: the enriched copy has the format of .*in\.csv: give a name ending in \.csv/);
    assert.match(usageError(await enrich('in.csv', 'in.csv')), /is the input file/);
    writeFileSync(join(cwd, 'notes.txt'), '8.8.8.8\n');
    assert.match(usageError(await enrich('notes.txt', 'out.txt')), /notes\.txt: oas enrich reads a \.csv, \.tsv or \.xlsx file/);
    assert.match(usageError(await enrich('missing.csv', 'out2.csv')), /missing\.csv: cannot read it \(ENOENT\); check the path$/);
    writeFileSync(join(cwd, 'broken.csv'), 'a,b\n"unclosed,1\n');
    assert.match(usageError(await enrich('broken.csv', 'out3.csv')), /broken\.csv: cannot read it as CSV \(Quote Not Closed.*\); check its quotes$/);
    writeFileSync(join(cwd, 'none.csv'), 'a,b\nx,y\n');
    assert.match(usageError(await enrich('none.csv', 'out4.csv')), /none\.csv: no observable in its cells below the first row/);
  });

  test('more distinct observables than max_observables: exit 2 naming it', async () => {
    const small = configFor(upstreams, { max_observables: 2, custom_engines: customEngines(intel.url) });
    const run = await oas(['enrich', join(cwd, 'in.csv'), '-o', join(cwd, 'max.csv'), '-e', ENGINES, '--config', small.file]);
    assert.match(usageError(run), /in\.csv holds 3 distinct observables, more than max_observables \(2\): split the file, or raise max_observables$/);
  });

  test('a file enriched already: exit 2 rather than a second oas_verdict column', async () => {
    assert.match(usageError(await enrich('out.csv', 'again.csv')), /out\.csv already has the column "oas_verdict", "oas_reasons", "oas_intel", "oas_broken" \(enriched before\?\)/);
  });

  test('every lookup failed: exit 1, the file written with the errors', async () => {
    const run = await oas(['enrich', join(cwd, 'in.csv'), '-o', join(cwd, 'failed.csv'), '-e', 'broken', '-q', '--config', config.file]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, '', '-q, and no error: the exit code says it');
    const output = records(readFileSync(join(cwd, 'failed.csv')), ';').map((r) => r.fields.slice(4));
    assert.deepEqual(output[0], ['oas_verdict', 'oas_reasons', 'oas_broken']);
    assert.equal(output[1]![0], 'unknown');
    assert.match(output[1]![2]!, /^error: /);
  });
});

describe('oas enrich, TSV', () => {
  test('tab-separated, LF line ends, a last line without one, to standard output', async () => {
    const tsv = 'ip\tcomment\n8.8.8.8\t"quoted\ttab"\nnothing\there\n45.33.32.156\tlast';
    writeFileSync(join(cwd, 'in.tsv'), tsv);
    const run = await enrich('in.tsv', '-', '-q');
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.equal(lines.length, 4, 'no line end added to the last line');
    assert.equal(lines[0], 'ip\tcomment\toas_verdict\toas_reasons\toas_intel\toas_broken');
    assert.match(lines[1]!, /^8\.8\.8\.8\t"quoted\ttab"\tclean\tintel: known, score 10\tresolver \(10\)\terror: /);
    assert.equal(lines[2], 'nothing\there\t\t\t\t');
    // The quotes of the answer make its cell quoted (RFC 4180), its formula guarded.
    assert.match(lines[3]!, /^45\.33\.32\.156\tlast\tsuspicious\tintel: score 50\t"'=HYPERLINK\(""http:\/\/x\.example\/"",""open""\) \(50\)"\terror: /);
  });
});

describe('oas enrich, xlsx', () => {
  const date = new Date(Date.UTC(2026, 9, 1));
  before(async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Indicators');
    sheet.addRow(['id', 'indicator', 'note']);
    sheet.getRow(1).font = { bold: true };
    sheet.addRow([1, '8.8.8.8', date]);
    sheet.addRow([2, 'nothing here', null]);
    sheet.addRow([3, { text: 'the link', hyperlink: 'http://evil.example.com/x' }, 'evil[.]example[.]com']);
    sheet.addRow([4, '45.33.32.156', 'last']);
    workbook.addWorksheet('Other').addRow(['kept', 42]);
    writeFileSync(join(cwd, 'in.xlsx'), Buffer.from(await workbook.xlsx.writeBuffer()));
  });

  test('the same workbook, the new columns appended to its first sheet, its cells and other sheets kept', async () => {
    const run = await enrich('in.xlsx', 'out.xlsx', '-q');
    assert.equal(run.code, 0, run.stderr);
    const before = new ExcelJS.Workbook();
    await before.xlsx.load(readFileSync(join(cwd, 'in.xlsx')) as unknown as ArrayBuffer);
    const after = new ExcelJS.Workbook();
    await after.xlsx.load(readFileSync(join(cwd, 'out.xlsx')) as unknown as ArrayBuffer);
    assert.deepEqual(after.worksheets.map((s) => s.name), ['Indicators', 'Other']);
    const was = before.getWorksheet('Indicators')!;
    const is = after.getWorksheet('Indicators')!;
    for (let row = 1; row <= 5; row++) {
      for (let column = 1; column <= 3; column++) {
        assert.deepEqual(is.getRow(row).getCell(column).value, was.getRow(row).getCell(column).value, `cell ${row},${column}`);
      }
    }
    const other = after.getWorksheet('Other')!.getRow(1);
    assert.deepEqual([other.getCell(1).value, other.getCell(2).value], ['kept', 42]);
    const added = (row: number) => [4, 5, 6, 7].map((column) => is.getRow(row).getCell(column).value);
    assert.deepEqual(added(1), NEW_COLUMNS);
    assert.equal(is.getRow(1).getCell(4).font?.bold, true, 'in the header\'s font');
    assert.deepEqual(added(2).slice(0, 3), ['clean', 'intel: known, score 10', 'resolver (10)']);
    assert.match(String(added(2)[3]), /^error: /);
    assert.deepEqual(added(3), [null, null, null, null], 'no observable: no new cell');
    // The link's target is read, and the note's domain.
    assert.deepEqual(added(4).slice(0, 3), [
      'malicious',
      'evil.example.com: intel: c2; botnet, score 90',
      'http://evil.example.com/x: no data | evil.example.com: c2; botnet (90)',
    ]);
    assert.deepEqual(added(5).slice(0, 3), ['suspicious', 'intel: score 50', '\'=HYPERLINK("http://x.example/","open") (50)']);
  });

  test('--column on a workbook, and an unknown one', async () => {
    const run = await enrich('in.xlsx', 'column.xlsx', '--column', 'note', '-q');
    assert.equal(run.code, 0, run.stderr);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(readFileSync(join(cwd, 'column.xlsx')) as unknown as ArrayBuffer);
    const sheet = book.worksheets[0]!;
    assert.equal(sheet.getRow(2).getCell(4).value, null, 'the indicator column is not read');
    assert.equal(sheet.getRow(4).getCell(4).value, 'malicious');
    assert.match(usageError(await enrich('in.xlsx', 'x.xlsx', '--column', 'ip')), /has no column "ip"; its columns \(the names of its first row\): "id", "indicator", "note"$/);
  });

  test('a file that is no workbook: exit 2 naming it', async () => {
    writeFileSync(join(cwd, 'fake.xlsx'), 'id,indicator\n1,8.8.8.8\n');
    assert.match(usageError(await enrich('fake.xlsx', 'y.xlsx')), /fake\.xlsx: cannot read it as an \.xlsx workbook \(.*\); is it an unencrypted Excel file\?$/);
  });
});

describe('the example of docs/files.md', () => {
  test('runs as written', async () => {
    assert.ok(readFileSync(new URL('../../docs/files.md', import.meta.url), 'utf8').includes(`\n${README_EXAMPLE}\n`), 'docs/files.md shows it');
    const folder = configFor(upstreams).dir; // its oas.config.json points every engine at the fakes
    writeFileSync(join(folder, 'indicators.csv'), README_INDICATORS);
    const run = await runOas(folder, README_EXAMPLE.split(' ').slice(1));
    assert.equal(run.code, 0, run.stderr);
    const output = records(readFileSync(join(folder, 'enriched.csv')), ',').map((r) => r.fields);
    assert.deepEqual(output[0], ['host', 'first_seen', 'comment', 'oas_verdict', 'oas_reasons', 'oas_reverse_dns', 'oas_rdap_whois']);
    assert.deepEqual(output[1]!.slice(0, 5), ['8.8.8.8', '2026-10-01', 'resolver seen in proxy logs', 'unknown', '']);
    assert.equal(output[1]![5], 'dns.google');
    assert.equal(output[2]![5], '93.184.215.14');
    assert.deepEqual(output[3], ['printer-3', '2026-10-02', 'no observable here', '', '', '', '']);
  });
});

describe('the pieces', () => {
  test('the separator of a .csv: the one its first row holds most of, outside quotes', () => {
    assert.equal(sniffSeparator('a;b;c\n1,2,3,4,5'), ';');
    assert.equal(sniffSeparator('"a,b,c";d;e'), ';');
    assert.equal(sniffSeparator('a\tb\tc'), '\t');
    assert.equal(sniffSeparator('just one column'), ',');
  });

  test('a new cell: the formula guard of the CSV export, then RFC 4180 quoting for its separator', () => {
    assert.equal(delimitedCell('plain, text', ';'), 'plain, text');
    assert.equal(delimitedCell('a;b', ';'), '"a;b"');
    assert.equal(delimitedCell('say "hi"', ','), '"say ""hi"""');
    assert.equal(delimitedCell('=1+2', ','), '\'=1+2');
    assert.equal(delimitedCell('-1', '\t'), '\'-1');
    assert.equal(delimitedCell('line\nbreak', '\t'), '"line\nbreak"');
  });

  test('records rewritten: mixed line ends, a short row padded, a long one, blank lines kept, a last line without its end', () => {
    const input = Buffer.from('a,b,c\r\n1,2\n\n"x\ny",2,3,4\r\r\nlast,,');
    const file = readDelimited(input, 'mixed.csv', 'csv');
    const rows = delimitedRows(file);
    assert.deepEqual(rows.header, ['a', 'b', 'c']);
    assert.deepEqual(rows.rows.map((r) => [r.number, r.cells]), [[2, ['1', '2']], [4, ['x\ny', '2', '3', '4']], [6, ['last', '', '']]]);
    const cells = new Map([[2, ['v', 'r']], [4, ['w', 'say "so"']]]);
    const written = Buffer.concat([...writeDelimited(file, ['n1', 'n2'], cells)]).toString();
    // The widest row has 4 cells: the header and the short rows get empty ones first.
    assert.equal(written, 'a,b,c,,n1,n2\r\n1,2,,,v,r\n\n"x\ny",2,3,4,w,"say ""so"""\r\r\nlast,,,,,');
  });

  test('a UTF-16LE file (its byte order mark): the new cells in UTF-16LE too', () => {
    const text = 'ip\tnote\r\n8.8.8.8\tdns\r\n';
    const input = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const file = readDelimited(input, 'unicode.tsv', 'tsv');
    assert.deepEqual(delimitedRows(file).rows, [{ number: 2, cells: ['8.8.8.8', 'dns'] }]);
    const written = Buffer.concat([...writeDelimited(file, ['oas_verdict'], new Map([[2, ['clean']]]))]);
    assert.deepEqual([...written.subarray(0, 2)], [0xff, 0xfe]);
    assert.equal(written.subarray(2).toString('utf16le'), 'ip\tnote\toas_verdict\r\n8.8.8.8\tdns\tclean\r\n');
  });

  test('a row\'s cells: the worst verdict, unknown the least', () => {
    const cells = (observable: string, verdict: ObservableCells['verdict'], reasons: string[] = []): ObservableCells => ({ observable, verdict, reasons, summaries: new Map() });
    assert.deepEqual(rowCells([cells('a.example', 'unknown'), cells('b.example', 'clean', ['x: fine'])], ['x']), ['clean', 'b.example: x: fine', '']);
    assert.deepEqual(rowCells([cells('a.example', 'suspicious'), cells('b.example', 'malicious')], []), ['malicious', '']);
  });
});
