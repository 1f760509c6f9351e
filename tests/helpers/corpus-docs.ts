/**
 * The documents of the files corpus (issue 35), built at test time: no binary fixture is committed,
 * and each file says in code what it holds. PDFs are made with pdf-lib (a dev dependency: it
 * writes real PDFs, link annotations and JavaScript included); what pdf-lib cannot make (an
 * encrypted PDF) is written by hand, byte by byte, below.
 *
 * Used by tests/files-docs.test.ts, tests/files-off-thread.test.ts, the e-mail tests (a PDF
 * attachment: `pdfWith`) and the benchmark (`pdfOfPages(200)`).
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';
import { PDFDocument, PDFName, PDFNumber, PDFOperator, PDFString, StandardFonts, type PDFOperatorNames, type PDFPage, type PDFRef } from 'pdf-lib';

export interface PdfSpec {
  /**
   * Each page's text, lines separated by `\n` (Helvetica 10 pt: Latin-1 characters only, about 100
   * characters a line; text past the page's edge is not on the page, and pdf.js leaves it out).
   */
  pages: string[];
  /** Link annotations: a rectangle on `page` (0-based) whose action opens `uri`. */
  links?: Array<{ page: number; uri: string }>;
  /**
   * Encrypted with the standard security handler and a password that is not empty: pdf.js asks
   * for a password (PasswordException). pdf-lib cannot encrypt, so such a PDF is written by hand
   * (its pages hold no readable text; `links` are left out).
   */
  encrypted?: boolean;
  /** Saved with a classic cross-reference table (`xref`) instead of object streams. */
  classicXref?: boolean;
  /** Files embedded in the PDF (its attachments panel). */
  attachments?: Array<{ name: string; bytes: Uint8Array }>;
}

/** A PDF with these pages and links. */
export async function pdfWith(spec: PdfSpec): Promise<Uint8Array> {
  if (spec.encrypted) return encryptedPdf();
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = spec.pages.map((text) => {
    const page = doc.addPage([612, 792]);
    let y = 750;
    for (const line of text.split('\n')) {
      page.drawText(line, { x: 40, y, size: 10, font });
      y -= 14;
    }
    return page;
  });
  for (const [i, link] of (spec.links ?? []).entries()) {
    const page = pages[link.page];
    if (!page) throw new Error(`pdfWith: no page ${link.page} for the link to ${link.uri}`);
    addLink(doc, page, link.uri, [40, 100 + 20 * i, 300, 115 + 20 * i]);
  }
  for (const attachment of spec.attachments ?? []) await doc.attach(attachment.bytes, attachment.name, { mimeType: 'application/octet-stream' });
  return doc.save({ useObjectStreams: !spec.classicXref });
}

/** A PDF of `count` pages, each with a few indicators (the benchmark's 200-page report). */
export function pdfOfPages(count: number): Promise<Uint8Array> {
  const pages = Array.from({ length: count }, (_, i) =>
    [
      `Threat report, page ${i + 1}`,
      `The actor used the domain c2-${i}.malware-report.com and the address 185.220.${i % 250}.${(i * 7) % 250}.`,
      `Payload hash ${String(i).padStart(4, '0')}${'ab12'.repeat(15)},`,
      `staged at hxxp://stage-${i}[.]evil-cdn.net/p.bin`,
      'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.',
      ...Array.from({ length: 30 }, (_, line) => `Line ${line}: ut labore et dolore magna aliqua, quis nostrud exercitation.`),
    ].join('\n'),
  );
  return pdfWith({ pages, links: [{ page: 0, uri: 'https://report-portal.com/full' }] });
}

/** A link annotation on `page` whose action opens `uri`. */
function addLink(doc: PDFDocument, page: PDFPage, uri: string, rect: number[]): PDFRef {
  const ref = doc.context.register(
    doc.context.obj({
      Type: 'Annot',
      Subtype: 'Link',
      Rect: rect,
      Border: [0, 0, 0],
      A: { Type: 'Action', S: 'URI', URI: PDFString.of(uri) },
    }),
  );
  const annots = page.node.Annots();
  if (annots) annots.push(ref);
  else page.node.set(PDFName.of('Annots'), doc.context.obj([ref]));
  return ref;
}

/**
 * A PDF that would run code and fetch from `baseUrl` if anything in it were obeyed: document
 * JavaScript (`app.alert`, `app.launchURL`, `submitForm`), an open action and a page-open action,
 * a Launch action, an image XObject whose data is a remote file (`/F` a URL file specification),
 * and a link annotation to `${baseUrl}/link` (a link is an observable; opening it would be a fetch).
 * Its text names `hostile-report.com`.
 */
export async function hostilePdf(baseUrl: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([612, 792]);
  page.drawText('Open this report at hostile-report.com', { x: 40, y: 750, size: 12, font });
  const context = doc.context;
  doc.addJavaScript('main', `app.alert('pwned'); app.launchURL('${baseUrl}/js', true); this.submitForm('${baseUrl}/submit');`);
  doc.catalog.set(PDFName.of('OpenAction'), context.obj({ S: 'JavaScript', JS: PDFString.of(`app.launchURL('${baseUrl}/open-action', true);`) }));
  page.node.set(
    PDFName.of('AA'),
    context.obj({
      O: { S: 'URI', URI: PDFString.of(`${baseUrl}/page-open`) },
      C: { S: 'Launch', F: PDFString.of('calc.exe') },
    }),
  );
  // An image whose data lives at a URL (an external stream): a reader that fetched it would ask the server.
  const image = context.register(
    context.stream(new Uint8Array(0), {
      Type: 'XObject',
      Subtype: 'Image',
      Width: 1,
      Height: 1,
      ColorSpace: 'DeviceRGB',
      BitsPerComponent: 8,
      F: { FS: 'URL', F: PDFString.of(`${baseUrl}/image.png`) },
    }),
  );
  page.node.setXObject(PDFName.of('Im1'), image);
  page.pushOperators(...pdfOperators('q 10 0 0 10 40 600 cm /Im1 Do Q'));
  addLink(doc, page, `${baseUrl}/link`, [40, 700, 300, 715]);
  return doc.save();
}

/** Content-stream operators for pdf-lib's `pushOperators`, from their text (numbers and names only). */
function pdfOperators(text: string): PDFOperator[] {
  const operators: PDFOperator[] = [];
  let operands: Array<PDFNumber | PDFName> = [];
  for (const token of text.split(/\s+/).filter(Boolean)) {
    if (/^-?[\d.]+$/.test(token)) operands.push(PDFNumber.of(Number(token)));
    else if (token.startsWith('/')) operands.push(PDFName.of(token.slice(1)));
    else {
      operators.push(PDFOperator.of(token as PDFOperatorNames, operands));
      operands = [];
    }
  }
  return operators;
}

/**
 * A one-page PDF encrypted with the standard security handler (revision 2, RC4 40-bit) whose user
 * password is not empty: its `/O` and `/U` strings are made up, so the empty password does not
 * open it and pdf.js throws a PasswordException. Written by hand: pdf-lib cannot encrypt.
 */
export function encryptedPdf(): Uint8Array {
  const hex32 = (byte: string) => byte.repeat(32);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>',
    '<< /Length 16 >>\nstream\n\x8f\x13\xa2\x07\x91\xee\x02\x5c\xd0\x44\x19\x7b\xc3\x60\x2a\x9d\nendstream',
    `<< /Filter /Standard /V 1 /R 2 /O <${hex32('a5')}> /U <${hex32('3c')}> /P -44 >>`,
  ];
  return handWrittenPdf(objects, '/Encrypt 5 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]');
}

/** A PDF from its objects' bodies (numbered from 1, the first the catalog), with a correct xref table. */
function handWrittenPdf(objects: string[], trailerExtra = ''): Uint8Array {
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (const [i, object] of objects.entries()) {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  }
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra} >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(body, 'latin1'));
}

/** The first part of a PDF (its end, where the cross-reference table is, cut off). */
export async function truncatedPdf(): Promise<Uint8Array> {
  const whole = await pdfWith({ pages: ['Truncated report naming truncated-report.com', 'Page two'] });
  return whole.slice(0, Math.floor(whole.byteLength * 0.4));
}

/** A PDF whose cross-reference table is garbage (same length, so the other offsets still hold). */
export async function garbageXrefPdf(): Promise<Uint8Array> {
  const bytes = Buffer.from(await pdfWith({ pages: ['Report naming garbage-xref.com'], classicXref: true }));
  const start = bytes.lastIndexOf('xref\n');
  const end = bytes.indexOf('trailer', start);
  for (let i = start; i < end; i++) if (bytes[i] !== 0x0a) bytes[i] = 0x21 + ((i * 31) % 90);
  return new Uint8Array(bytes);
}

/**
 * A PDF whose one page's content stream inflates to `megabytes` MB (zeros after a line of text
 * naming bomb-start.com): a file of a few hundred KB that a reader keeping the inflated stream
 * needs that much memory for. Deflated here in chunks, never held whole.
 */
export async function flateBombPdf(megabytes: number): Promise<Uint8Array> {
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = once(deflate, 'end');
  deflate.write(Buffer.from('BT /F1 12 Tf 40 700 Td (bomb-start.com) Tj ET\n'));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < megabytes; i++) if (!deflate.write(zeros)) await once(deflate, 'drain');
  deflate.end();
  await ended;
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream(Buffer.concat(chunks), { Filter: 'FlateDecode' })));
  return doc.save();
}

/** Bytes that start as a PDF and are nothing else. */
export function notReallyPdf(): Uint8Array {
  return new TextEncoder().encode('%PDF-1.7\nthis is not a PDF at all\n');
}

// ---- Tables -------------------------------------------------------------------------------------

const utf8 = (text: string) => new TextEncoder().encode(text);

/**
 * RFC 4180 quoting: a comma, a doubled quote and a line break inside quoted fields; CRLF rows.
 * Rows (as a spreadsheet numbers them, the header being row 1):
 *   2: 185.220.101.4 and a quoted note naming evil-invoice.com;
 *   3: a quoted URL and a note over two lines naming second-line.net;
 *   4: 203.0.113.9's row.
 */
export const CSV_QUOTED = utf8(
  'indicator,note,seen\r\n' +
    '185.220.101.4,"Tor exit, seen with evil-invoice.com",2024-05-01\r\n' +
    '"hxxps://login-micros0ft.com/auth?x=1","the ""phish"" kit\r\nthen second-line.net",2024-05-02\r\n' +
    '198.51.100.23,plain,2024-05-03\r\n',
);

/** A UTF-8 byte order mark before the header: the first column is still `ip`, not `\uFEFFip`. */
export const CSV_BOM = utf8('\uFEFFip,domain\n45.155.205.233,bom-test.org\n');

/** Semicolons (Excel in much of Europe), a comma inside a field, a Latin-1 accent in UTF-8. */
export const CSV_SEMICOLON = utf8('Adresse IP;Domaine;Commentaire\n91.92.248.17;semi-colon.fr;vu à 10h, deux fois\n91.92.248.18;second-semi.fr;\n');

/** An empty column (no header name, no values) between two. */
export const CSV_EMPTY_COLUMN = utf8('host,,hash\nempty-col.com,,d41d8cd98f00b204e9800998ecf8427e\nother-host.net,,\n');

/** No header: the first row is data (columns named 1, 2...). */
export const CSV_NO_HEADER = utf8('8.8.4.4,dns-one.com\n1.0.0.1,dns-two.com\n');

/** A TSV with a header. */
export const TSV = utf8('type\tvalue\tcomment\nip\t193.42.33.7\tC2, beaconing\ndomain\ttab-separated.io\t\n');

/** A quote opened and never closed. */
export const CSV_UNBALANCED = utf8('ip,note\n185.1.2.3,"never closed\n185.1.2.4,fine\n');

/**
 * Cells that a spreadsheet would run as formulas (`=`, `+`, `-`, `@`): here they are only text;
 * the URL inside the first is an observable, nothing is called.
 */
export const CSV_FORMULA = utf8(
  'name,link\n' + 'bad,"=HYPERLINK(""http://formula-phish.com/x"",""click"")"\n' + 'cmd,=cmd|\' /C calc\'!A0\n' + 'at,@SUM(1+1)*cmd|\' /C calc\'!A0\n',
);

// ---- JSON ---------------------------------------------------------------------------------------

/** A SIEM alert: nested objects, arrays of strings and of objects, numbers, a key that is a domain. */
export const SIEM_ALERT = utf8(
  JSON.stringify(
    {
      alert: {
        id: 'a-1029',
        rule: 'Beacon to known C2',
        severity: 8,
        source: { ip: '10.1.2.3', host: 'wks-042.corp.local' },
        destination: { ip: '185.220.101.45', port: 443, domain: 'c2-beacon.net' },
      },
      hits: [
        { url: 'http://first-hit.com/a' },
        { url: 'http://second-hit.com/b' },
        { url: 'http://third-hit.com/c' },
        { url: 'hxxp://fourth-hit[.]com/d', note: 'defanged by the SIEM' },
      ],
      tags: ['phishing', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      lookups: { 'dropper-domain.org': { seen: 3 } },
    },
    null,
    2,
  ),
);

/** JSON nested `depth` levels deep (10 000 by default), a domain at the bottom. */
export function deepJson(depth = 10_000): Uint8Array {
  return utf8('{"a":['.repeat(depth) + '"bottom-of-the-well.com"' + ']}'.repeat(depth));
}

/** One JSON string of `megabytes` MB (50 by default), a domain at each end. */
export function hugeStringJson(megabytes = 50): Uint8Array {
  const filler = 'x'.repeat(1024 * 1024);
  return utf8(`{"blob":"start-of-blob.com ${filler.repeat(megabytes)} end-of-blob.com"}`);
}

/**
 * `count` empty objects in an array (`[{},{},...]`, 3 bytes each): small as text, each a heap
 * object once parsed: 8 million (24 MB) need more than 512 MB of heap.
 */
export function manyObjectsJson(count: number): Uint8Array {
  return utf8(`[${'{},'.repeat(count)}{}]`);
}

/** Not JSON: cut in the middle. */
export const JSON_TRUNCATED = utf8('{"alert": {"ip": "185.220.101.4", "url": "http://cut-off.com/');

/** JSON Lines (one alert per line), as Elastic or Splunk export. */
export const JSON_LINES = utf8('{"src":"185.220.101.7","host":"line-one.com"}\n{"src":"185.220.101.8","host":"line-two.com"}\n');
