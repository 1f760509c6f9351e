/**
 * Issue 35, files in: format detection (src/files/detect.ts) and the PDF, CSV/TSV and JSON readers
 * (src/files/pdf.ts, table.ts, json.ts), each through `readFileObservables` as the surfaces call
 * it: the observables, where each was found, in the order they first appear; and every malformed
 * or hostile file of the corpus (tests/helpers/corpus-docs.ts) gives a FileReadError naming the
 * file or a clean result. Nothing in a PDF runs or is fetched: a loopback server the hostile PDF
 * points at gets no request.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import CFB from 'cfb';
import { readFileObservables } from '../src/files/read.js';
import { decodeText, detectKind } from '../src/files/detect.js';
import { parseTable } from '../src/files/table.js';
import { FileReadError, type FileExtraction, type ReadOptions } from '../src/files/types.js';
import * as corpus from './helpers/corpus-docs.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** `TYPE:value @ place | place` per observable, in order: one line each, easy to compare. */
function listed(extraction: FileExtraction): string[] {
  return extraction.observables.map((o) => `${o.type}:${o.value} @ ${o.found_in.join(' | ')}`);
}

async function read(bytes: Uint8Array, name: string, options?: ReadOptions): Promise<FileExtraction> {
  return readFileObservables(bytes, name, options);
}

/** Either a FileReadError naming `name` on one line, or a result (the file read as it could be). */
async function errorOrResult(bytes: Uint8Array, name: string): Promise<FileReadError | FileExtraction> {
  try {
    return await read(bytes, name);
  } catch (error) {
    assert.ok(error instanceof FileReadError, `a FileReadError, not ${String(error)}`);
    assert.equal(error.fileName, name);
    assert.ok(error.message.startsWith(`${name}: `), error.message);
    assert.ok(!error.message.includes('\n'), `one line: ${error.message}`);
    assert.ok(!/\bat .*:\d+:\d+/.test(error.message), `no stack: ${error.message}`);
    return error;
  }
}

async function rejectsRead(bytes: Uint8Array, name: string, problem: RegExp, options?: ReadOptions): Promise<FileReadError> {
  let caught: unknown;
  try {
    await read(bytes, name, options);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof FileReadError, `FileReadError expected, got ${String(caught)}`);
  assert.equal(caught.fileName, name);
  assert.match(caught.problem, problem);
  assert.ok(!caught.message.includes('\n'), `one line: ${caught.message}`);
  return caught;
}

function compoundFile(streams: Record<string, string>): Uint8Array {
  const container = CFB.utils.cfb_new();
  for (const [name, content] of Object.entries(streams)) CFB.utils.cfb_add(container, name, Buffer.from(content));
  return new Uint8Array(CFB.write(container, { type: 'buffer' }) as Buffer);
}

describe('detectKind', () => {
  test('the bytes first: a PDF, an e-mail, JSON, a table whatever the name says', () => {
    assert.equal(detectKind(utf8('%PDF-1.7\n%...'), 'report.txt'), 'pdf');
    assert.equal(detectKind(utf8('Received: from mx.example.net\n\tby mx2\nFrom: a@b.com\nSubject: hi\n\nbody'), 'mail.txt'), 'eml');
    assert.equal(detectKind(utf8('From sender Mon Jan  1 00:00:00 2024\nReturn-Path: <a@b.com>\nMessage-ID: <x@y.com>\n\nbody'), 'mbox'), 'eml');
    assert.equal(detectKind(corpus.SIEM_ALERT, 'alert.txt'), 'json');
    assert.equal(detectKind(corpus.JSON_LINES, 'export'), 'json');
    assert.equal(detectKind(corpus.CSV_QUOTED, 'paste'), 'csv');
    assert.equal(detectKind(corpus.CSV_SEMICOLON, 'paste'), 'csv');
    assert.equal(detectKind(corpus.TSV, 'paste'), 'tsv');
  });

  test('the name second, for text formats', () => {
    assert.equal(detectKind(utf8('anything'), 'x.eml'), 'eml');
    assert.equal(detectKind(utf8('{not json'), 'x.JSON'), 'json');
    assert.equal(detectKind(utf8('one column'), 'list.csv'), 'csv');
    assert.equal(detectKind(utf8('one column'), 'C:\\exports\\list.tab'), 'tsv');
    assert.equal(detectKind(utf8('one column'), 'dir.v2/list'), 'text');
  });

  test('text that only looks like something else stays text', () => {
    assert.equal(detectKind(utf8('[2024-05-01] started\n[2024-05-01] done'), 'app.log'), 'text');
    assert.equal(detectKind(utf8('Content-Type: text/html\nDate: today\n\n<html>'), 'dump'), 'text');
    assert.equal(detectKind(utf8('Hello, team.\nSee evil.com and 1.2.3.4 today\nBye'), 'note'), 'text');
    assert.equal(detectKind(utf8('\uFEFFcafé, naïve: 185.220.101.4'), 'note'), 'text');
  });

  test('compound files: a .msg by name or by its MAPI streams, any other (a .doc) binary', () => {
    const msg = compoundFile({ __substg1_placeholder: 'x', '__substg1.0_0037001F': 'Subject', '__properties_version1.0': '' });
    assert.equal(detectKind(msg, 'mail.bin'), 'msg');
    const doc = compoundFile({ WordDocument: 'text', '1Table': 'table' });
    assert.equal(detectKind(doc, 'report.doc'), 'binary');
    assert.equal(detectKind(doc, 'renamed.msg'), 'msg');
  });

  test('binary: NUL bytes whatever the name, or bytes that are not UTF-8', () => {
    assert.equal(detectKind(new Uint8Array([0x4d, 0x5a, 0x90, 0x00, 0x03]), 'invoice.csv'), 'binary');
    assert.equal(detectKind(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff]), 'x'), 'binary');
    assert.equal(detectKind(new Uint8Array([0x63, 0x61, 0x66, 0xe9]), 'latin1'), 'binary');
    // UTF-16 with a byte order mark (Excel's "Unicode text") has NULs and is text.
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('ip\tnote\n1.2.3.4\tx\n', 'utf16le')]);
    assert.equal(detectKind(utf16, 'export.txt'), 'tsv');
  });

  test('decodeText: UTF-8 without its BOM, UTF-16 by its BOM, Windows-1252 when not UTF-8', () => {
    assert.equal(decodeText(utf8('\uFEFFip')), 'ip');
    assert.equal(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from([0, 0x69, 0, 0x70])])), 'ip');
    assert.equal(decodeText(new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x80])), 'café€');
  });
});

describe('PDF', () => {
  test('the text of each page and the URIs of its links, placed, in first-appearance order', async () => {
    const bytes = await corpus.pdfWith({
      pages: ['Report: beacon to c2-beacon.net from 185.220.101.4\nSee hxxps://payload-host[.]com/x.bin', 'Page two names c2-beacon.net again, and 45.155.205.233'],
      links: [
        { page: 0, uri: 'https://view-invoice.com/login' },
        { page: 1, uri: 'https://second-page-link.org/a?b=1' },
      ],
    });
    const result = await read(bytes, 'report.pdf');
    assert.equal(result.file.kind, 'pdf');
    assert.deepEqual(listed(result), [
      'FQDN:c2-beacon.net @ report.pdf page 1 | report.pdf page 2',
      'IPv4:185.220.101.4 @ report.pdf page 1',
      'URL:https://payload-host.com/x.bin @ report.pdf page 1',
      'URL:https://view-invoice.com/login @ report.pdf page 1, link',
      'IPv4:45.155.205.233 @ report.pdf page 2',
      'URL:https://second-page-link.org/a?b=1 @ report.pdf page 2, link',
    ]);
    assert.deepEqual(result.notes, []);
  });

  test('a file embedded in the PDF is read as an attachment, hashed locally', async () => {
    const bytes = await corpus.pdfWith({ pages: ['See the attached list'], attachments: [{ name: 'iocs.csv', bytes: corpus.CSV_BOM }] });
    const result = await read(bytes, 'report.pdf');
    const lines = listed(result);
    assert.ok(lines.includes('IPv4:45.155.205.233 @ report.pdf attachment iocs.csv, row 2, column ip'), lines.join('\n'));
    assert.ok(lines.some((line) => /^SHA256:[0-9a-f]{64} @ report\.pdf attachment iocs\.csv \(SHA-256\)$/.test(line)), lines.join('\n'));
  });

  test('a PDF without text says so in its notes', async () => {
    const result = await read(await corpus.pdfWith({ pages: [''] }), 'scan.pdf');
    assert.deepEqual(result.observables, []);
    assert.match(result.notes.join('\n'), /scan\.pdf: no text on any page/);
  });

  test('encrypted: a FileReadError asking for the password to be removed', async () => {
    await rejectsRead(corpus.encryptedPdf(), 'secret.pdf', /^encrypted \(the PDF needs a password\): remove the password and try again$/);
    await rejectsRead(await corpus.pdfWith({ pages: [], encrypted: true }), 'secret2.pdf', /^encrypted/);
  });

  test('malformed: a FileReadError naming what pdf.js said, or what could be read', async () => {
    await rejectsRead(corpus.notReallyPdf(), 'fake.pdf', /^not a readable PDF \(pdf\.js: .+\)$/);
    await errorOrResult(await corpus.truncatedPdf(), 'truncated.pdf');
    // pdf.js rebuilds a broken cross-reference table: the text is read.
    const garbage = await errorOrResult(await corpus.garbageXrefPdf(), 'garbage.pdf');
    if (!(garbage instanceof FileReadError)) assert.deepEqual(listed(garbage), ['FQDN:garbage-xref.com @ garbage.pdf page 1']);
  });

  test('hostile: its JavaScript never runs and nothing it names is fetched', async () => {
    const requests: string[] = [];
    const server = createServer((request: IncomingMessage, response) => {
      requests.push(request.url ?? '');
      response.end('no');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Traps for what the PDF's scripts call, were they run here.
    const calls: string[] = [];
    const globals = globalThis as Record<string, unknown>;
    const saved = { app: globals['app'], alert: globals['alert'], fetch: globalThis.fetch };
    globals['app'] = { alert: () => calls.push('app.alert'), launchURL: () => calls.push('app.launchURL') };
    globals['alert'] = () => calls.push('alert');
    globalThis.fetch = ((input: unknown) => {
      calls.push(`fetch ${String(input)}`);
      return Promise.reject(new Error('no fetch in this test'));
    }) as typeof fetch;
    try {
      const result = await read(await corpus.hostilePdf(base), 'hostile.pdf');
      const lines = listed(result);
      assert.ok(lines.includes('FQDN:hostile-report.com @ hostile.pdf page 1'), lines.join('\n'));
      // The link is an observable (read as data), not a request.
      assert.ok(lines.includes(`URL:${base}/link @ hostile.pdf page 1, link`), lines.join('\n'));
      // The scripts' URLs are neither run nor read as links.
      for (const path of ['/js', '/submit', '/open-action', '/page-open', '/image.png']) {
        assert.ok(!lines.some((line) => line.includes(`${base}${path} `)), `${path} in ${lines.join('\n')}`);
      }
    } finally {
      globals['app'] = saved.app;
      globals['alert'] = saved.alert;
      globalThis.fetch = saved.fetch;
      server.close();
    }
    assert.deepEqual(calls, []);
    assert.deepEqual(requests, []);
  });
});

describe('CSV and TSV', () => {
  test('RFC 4180 quoting: commas, doubled quotes and line breaks inside fields; rows as a spreadsheet counts them', async () => {
    const result = await read(corpus.CSV_QUOTED, 'iocs.csv');
    assert.equal(result.file.kind, 'csv');
    assert.deepEqual(listed(result), [
      'IPv4:185.220.101.4 @ row 2, column indicator',
      'FQDN:evil-invoice.com @ row 2, column note',
      'URL:https://login-micros0ft.com/auth?x=1 @ row 3, column indicator',
      'FQDN:second-line.net @ row 3, column note',
      'IPv4:198.51.100.23 @ row 4, column indicator',
    ]);
  });

  test('a UTF-8 byte order mark is not part of the first column name', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_BOM, 'bom.csv', { columns: ['ip'] })), ['IPv4:45.155.205.233 @ row 2, column ip']);
  });

  test('semicolons are sniffed; a comma inside a field stays in it', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_SEMICOLON, 'fr.csv')), [
      'IPv4:91.92.248.17 @ row 2, column Adresse IP',
      'FQDN:semi-colon.fr @ row 2, column Domaine',
      'IPv4:91.92.248.18 @ row 3, column Adresse IP',
      'FQDN:second-semi.fr @ row 3, column Domaine',
    ]);
  });

  test('an empty column is named by its position and reads as nothing', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_EMPTY_COLUMN, 'e.csv')), [
      'FQDN:empty-col.com @ row 2, column host',
      'MD5:d41d8cd98f00b204e9800998ecf8427e @ row 2, column hash',
      'FQDN:other-host.net @ row 3, column host',
    ]);
    assert.deepEqual(listed(await read(corpus.CSV_EMPTY_COLUMN, 'e.csv', { columns: ['2'] })), []);
  });

  test('no header: the first row is data and columns are named 1, 2...', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_NO_HEADER, 'plain.csv')), [
      'IPv4:8.8.4.4 @ row 1, column 1',
      'FQDN:dns-one.com @ row 1, column 2',
      'IPv4:1.0.0.1 @ row 2, column 1',
      'FQDN:dns-two.com @ row 2, column 2',
    ]);
  });

  test('columns: only those named (case and spaces aside), or by position; an unknown one names those there are', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_QUOTED, 'iocs.csv', { columns: [' NOTE '] })), [
      'FQDN:evil-invoice.com @ row 2, column note',
      'FQDN:second-line.net @ row 3, column note',
    ]);
    assert.deepEqual(listed(await read(corpus.CSV_NO_HEADER, 'plain.csv', { columns: ['2'] })), ['FQDN:dns-one.com @ row 1, column 2', 'FQDN:dns-two.com @ row 2, column 2']);
    await rejectsRead(corpus.CSV_QUOTED, 'iocs.csv', /^has no column named "ip" \(its columns: "indicator", "note", "seen"\)$/, { columns: ['ip'] });
  });

  test('a TSV', async () => {
    const result = await read(corpus.TSV, 'export.tsv');
    assert.equal(result.file.kind, 'tsv');
    assert.deepEqual(listed(result), ['IPv4:193.42.33.7 @ row 2, column value', 'FQDN:tab-separated.io @ row 3, column value']);
  });

  test('formula-looking cells are only data: the URL inside one is an observable, nothing runs', async () => {
    assert.deepEqual(listed(await read(corpus.CSV_FORMULA, 'f.csv')), ['URL:http://formula-phish.com/x @ row 2, column link']);
  });

  test('a quote never closed: a FileReadError saying so', async () => {
    await rejectsRead(corpus.CSV_UNBALANCED, 'broken.csv', /^not a readable CSV \(Quote Not Closed.*\)$/);
  });

  test('Windows-1252 (Excel on Windows) and UTF-16 (Excel "Unicode text") are decoded', async () => {
    const latin = Buffer.from('nom;adresse\ncaf\xe9;185.220.101.9\n', 'latin1');
    assert.deepEqual(listed(await read(latin, 'excel.csv')), ['IPv4:185.220.101.9 @ row 2, column adresse']);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('ip\tnote\n185.220.101.10\tx\n', 'utf16le')]);
    assert.deepEqual(listed(await read(utf16, 'unicode.txt')), ['IPv4:185.220.101.10 @ row 2, column ip']);
  });

  test('parseTable: records with their exact text give the file back; header and columns', () => {
    const text = decodeText(corpus.CSV_QUOTED);
    const table = parseTable(text);
    assert.equal(table.delimiter, ',');
    assert.deepEqual(table.header, ['indicator', 'note', 'seen']);
    assert.equal(table.rows.length, 3);
    assert.deepEqual(table.rows[1]!.cells, ['hxxps://login-micros0ft.com/auth?x=1', 'the "phish" kit\r\nthen second-line.net', '2024-05-02']);
    assert.equal(table.rows[1]!.row, 3);
    assert.equal(table.rows[1]!.text, '"hxxps://login-micros0ft.com/auth?x=1","the ""phish"" kit\r\nthen second-line.net",2024-05-02');
    assert.equal(table.rows[1]!.eol, '\r\n');
    assert.equal(table.records.map((record) => record.text + record.eol).join(''), text);
    const semi = parseTable(decodeText(corpus.CSV_SEMICOLON));
    assert.equal(semi.delimiter, ';');
    assert.equal(semi.records.map((record) => record.text + record.eol).join(''), decodeText(corpus.CSV_SEMICOLON));
    assert.equal(parseTable('a,b\n1,2', { header: false }).header, undefined);
  });
});

describe('JSON', () => {
  test('a SIEM alert: every string, placed by a short path, in document order; a key that is a domain', async () => {
    const result = await read(corpus.SIEM_ALERT, 'alert.json');
    assert.equal(result.file.kind, 'json');
    assert.deepEqual(listed(result), [
      'IPv4:10.1.2.3 @ field alert.source.ip',
      'IPv4:185.220.101.45 @ field alert.destination.ip',
      'FQDN:c2-beacon.net @ field alert.destination.domain',
      'URL:http://first-hit.com/a @ field hits[0].url',
      'URL:http://second-hit.com/b @ field hits[1].url',
      'URL:http://third-hit.com/c @ field hits[2].url',
      'URL:http://fourth-hit.com/d @ field hits[3].url',
      'SHA256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 @ field tags[1]',
      'FQDN:dropper-domain.org @ field lookups["dropper-domain.org"]',
    ]);
  });

  test('dotted field names are not domains (host.name, user.id); their values are read', async () => {
    const flat = utf8(JSON.stringify({ 'host.name': 'wks-01', 'user.id': 'u1', 'source.ip': '185.220.101.50', 'evil-site.com': 'listed' }));
    assert.deepEqual(listed(await read(flat, 'ecs.json')), ['IPv4:185.220.101.50 @ field ["source.ip"]', 'FQDN:evil-site.com @ field ["evil-site.com"]']);
  });

  test('JSON Lines: each line a document', async () => {
    assert.deepEqual(listed(await read(corpus.JSON_LINES, 'export.ndjson')), [
      'IPv4:185.220.101.7 @ line 1, field src',
      'FQDN:line-one.com @ line 1, field host',
      'IPv4:185.220.101.8 @ line 2, field src',
      'FQDN:line-two.com @ line 2, field host',
    ]);
  });

  test('not JSON: a FileReadError naming the file', async () => {
    await rejectsRead(corpus.JSON_TRUNCATED, 'cut.json', /^not valid JSON \(.+\)$/);
    await rejectsRead(utf8('{"a":1}\n{"b":\n'), 'lines.jsonl', /^not valid JSON Lines \(line 2: .+\)$/);
  });

  test('10 000 levels deep: read without recursion, the path cut in the middle', async () => {
    const result = await read(corpus.deepJson(), 'deep.json');
    assert.equal(result.observables.length, 1);
    const [observable] = result.observables;
    assert.equal(observable!.value, 'bottom-of-the-well.com');
    const [place] = observable!.found_in;
    assert.match(place!, /^field a\[0\]\.a\[0\].*….*\.a\[0\]$/);
    assert.ok(place!.length < 200, place);
  });

  test('one string of 50 MB: read, its observables found', async () => {
    const result = await read(corpus.hugeStringJson(), 'blob.json');
    assert.deepEqual(listed(result), ['FQDN:start-of-blob.com @ field blob', 'FQDN:end-of-blob.com @ field blob']);
  });
});
