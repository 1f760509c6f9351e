/**
 * What kind of file a file is (issue 35), and how its text is encoded: the dispatcher
 * (src/files/read.ts) picks a reader by `detectKind`, and the text readers decode with `decodeText`.
 *
 * The bytes decide first, the name second: a PDF named `report.txt` is a PDF, and an e-mail saved
 * as `mail.txt` is an e-mail. The order, first match wins:
 *   1. `%PDF-` in the first KiB (where readers look for it) → pdf;
 *   2. the compound-file signature → msg when named `.msg` or holding MAPI property streams,
 *      else binary (a `.doc`, `.xls` or `.msi` is a compound file too);
 *   3. NUL bytes at the start (without a UTF-16 byte order mark) → binary, whatever the name;
 *   4. a header block as an RFC 5322 message starts, or named `.eml` → eml;
 *   5. `{` or `[` first and the whole text parses as JSON (or each of its first lines does: JSON
 *      Lines), or named `.json`, `.jsonl`, `.ndjson` → json;
 *   6. named `.csv` → csv, `.tsv` or `.tab` → tsv; named otherwise, the same count (at least one) of
 *      one separator on each of the first lines (outside quotes) → tsv for tabs, csv for `,` or `;`;
 *   7. valid UTF-8 (a byte order mark allowed) → text; else binary.
 * Only the first HEAD_BYTES are looked at, except to tell JSON (which must parse) and a `.msg`
 * from another compound file (its directory may be anywhere): both searched natively.
 */
import { Buffer } from 'node:buffer';
import type { FileKind } from './types.js';

/** How much of a file the sniffing reads (a long `Received` chain fits). */
const HEAD_BYTES = 16 * 1024;
/** Lines looked at to tell a table from text. */
const TABLE_LINES = 50;

const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
/** The stream names only an Outlook item's compound file holds (UTF-16LE, as directory entries are). */
const MAPI_STREAMS = [Buffer.from('__substg1.0_', 'utf16le'), Buffer.from('__properties_version1.0', 'utf16le')];

/** Header fields of a mail message; an HTTP dump or a `Key: value` note has few of them. */
const MAIL_HEADERS = new Set([
  'received', 'return-path', 'mime-version', 'message-id', 'from', 'to', 'cc', 'subject', 'date',
  'reply-to', 'sender', 'delivered-to', 'dkim-signature', 'authentication-results', 'x-mailer',
  'content-type', 'content-transfer-encoding', 'thread-index', 'x-originating-ip', 'arc-seal',
  'received-spf', 'x-ms-exchange-organization-authas', 'in-reply-to', 'references', 'user-agent',
]);
/** Of which a message has at least one; `Date` and `Content-Type` alone are an HTTP dump's too. */
const MAIL_ONLY_HEADERS = new Set([
  'received', 'return-path', 'mime-version', 'message-id', 'from', 'to', 'subject', 'reply-to',
  'delivered-to', 'dkim-signature', 'authentication-results', 'x-mailer', 'received-spf',
]);

type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** The file's kind (see the header for the order). `name` may carry a path; only its extension counts. */
export function detectKind(bytes: Uint8Array, name: string): FileKind {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const extension = extensionOf(name);
  const head = buffer.subarray(0, HEAD_BYTES);

  if (head.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (head.subarray(0, CFB_SIGNATURE.length).equals(CFB_SIGNATURE)) {
    return extension === 'msg' || MAPI_STREAMS.some((stream) => buffer.includes(stream)) ? 'msg' : 'binary';
  }

  const encoding = bomEncoding(head);
  if (encoding === 'utf-8' && head.includes(0)) return 'binary';
  const cut = head.byteLength < buffer.byteLength;
  const headText = decodeHead(head, encoding, cut);

  // Mail headers may carry raw 8-bit text in a legacy charset: read as Latin-1 for this test.
  const mailText = headText ?? windows1252(head);
  if (extension === 'eml' || looksLikeMail(mailText, cut)) return 'eml';
  if (extension === 'json' || extension === 'jsonl' || extension === 'ndjson') return 'json';
  if (headText !== undefined && looksLikeJson(headText) && parsesAsJson(buffer, headText, encoding)) return 'json';
  if (extension === 'csv') return 'csv';
  if (extension === 'tsv' || extension === 'tab') return 'tsv';
  if (headText === undefined) return 'binary';
  const separator = sniffSeparator(headText, cut);
  if (separator === '\t') return 'tsv';
  if (separator !== undefined) return 'csv';
  return 'text';
}

/**
 * The text of a file read as text: UTF-8 (its byte order mark dropped), UTF-16 when a byte order
 * mark says so (Excel's "Unicode text"), and Windows-1252 when the bytes are not UTF-8 (Excel's
 * "CSV" on Windows saves in the machine's code page; Latin-1 text reads the same).
 */
export function decodeText(bytes: Uint8Array): string {
  const encoding = bomEncoding(bytes);
  if (encoding !== 'utf-8') return new TextDecoder(encoding).decode(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return windows1252(bytes);
  }
}

/**
 * Windows-1252: Latin-1 but for 0x80-0x9F (the WHATWG Encoding Standard's table). Not Node's
 * TextDecoder('windows-1252'): since 20.18.3 it decodes as Latin-1, € and curly quotes turning
 * into control characters (nodejs/node#60888).
 */
function windows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\x80-\x9f]/g, (char) => WINDOWS_1252_C1[char.charCodeAt(0) - 0x80]!);
}

const WINDOWS_1252_C1 = [
  '\u20ac', '\x81', '\u201a', '\u0192', '\u201e', '\u2026', '\u2020', '\u2021', '\u02c6', '\u2030', '\u0160', '\u2039', '\u0152', '\x8d', '\u017d', '\x8f',
  '\x90', '\u2018', '\u2019', '\u201c', '\u201d', '\u2022', '\u2013', '\u2014', '\u02dc', '\u2122', '\u0161', '\u203a', '\u0153', '\x9d', '\u017e', '\u0178',
];

/** The extension of `name`, lower case, without its dot ('' without one). */
export function extensionOf(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function bomEncoding(bytes: Uint8Array): Encoding {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

/**
 * The head as text, or undefined when it is not valid in its encoding. When the head is `cut` from
 * a longer file, a character cut by its end is fine; at the end of the file it is not.
 */
function decodeHead(head: Uint8Array, encoding: Encoding, cut: boolean): string | undefined {
  try {
    // `stream` leaves a character cut by the end of the head undecoded instead of failing on it.
    return new TextDecoder(encoding, { fatal: true }).decode(head, { stream: cut });
  } catch {
    return undefined;
  }
}

/**
 * A header block as a message starts with: every line before the first blank one a header field
 * (`Name: value`) or its continuation, at least two of a mail's fields, one of them a mail's only.
 * An mbox `From ` line may come first. A block longer than the head counts by what the head holds.
 */
function looksLikeMail(text: string, cut: boolean): boolean {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  // The last line may be cut by the end of the head: it is left out then.
  if (cut && lines.length > 1) lines.pop();
  let start = 0;
  if (lines[0]?.startsWith('From ')) start = 1;
  const names = new Set<string>();
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') break;
    if (/^[ \t]/.test(line)) {
      if (i === start) return false;
      continue;
    }
    const match = /^([!-9;-~]+)[ \t]*:/.exec(line);
    if (!match) return false;
    const field = match[1]!.toLowerCase();
    if (MAIL_HEADERS.has(field)) names.add(field);
  }
  return names.size >= 2 && [...names].some((field) => MAIL_ONLY_HEADERS.has(field));
}

function looksLikeJson(text: string): boolean {
  return /^\uFEFF?\s*[[{]/.test(text);
}

/** The whole text parses, or (JSON Lines) each complete line of the head does. */
function parsesAsJson(buffer: Buffer, headText: string, encoding: Encoding): boolean {
  try {
    JSON.parse(buffer.byteLength <= HEAD_BYTES ? headText.replace(/^\uFEFF/, '') : decodeText(buffer).replace(/^\uFEFF/, ''));
    return true;
  } catch {
    // not one document: JSON Lines, perhaps
  }
  const lines = headText.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (buffer.byteLength > HEAD_BYTES) lines.pop();
  const records = lines.filter((line) => line.trim() !== '');
  if (records.length < 2) return false;
  return records.every((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === 'object' && value !== null;
    } catch {
      return false;
    }
  });
}

/**
 * The separator of a table: the one (tab, `,` or `;`) found the same number of times, at least
 * once, on each of the first lines (at least two), quoted text left out (a quoted field may hold
 * separators and line breaks). `cut` says the head ends mid-file (its last line is partial).
 */
export function sniffSeparator(text: string, cut = false): '\t' | ',' | ';' | undefined {
  const counts: Array<Record<'\t' | ',' | ';', number>> = [];
  let current = { '\t': 0, ',': 0, ';': 0 };
  let quoted = false;
  let lineStart = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let i = lineStart; i < text.length && counts.length < TABLE_LINES; i++) {
    const char = text[i]!;
    if (char === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (char === '\t' || char === ',' || char === ';') current[char]++;
    else if (char === '\n' || char === '\r') {
      // Blank lines (a trailing one, most often) say nothing of the separator.
      if (i > lineStart) counts.push(current);
      current = { '\t': 0, ',': 0, ';': 0 };
      if (char === '\r' && text[i + 1] === '\n') i++;
      lineStart = i + 1;
    }
  }
  // A last line without a line break counts when the text ends there (the head did not cut it).
  if (!cut && !quoted && lineStart < text.length && counts.length < TABLE_LINES) counts.push(current);
  if (counts.length < 2) return undefined;
  for (const separator of ['\t', ',', ';'] as const) {
    const first = counts[0]![separator];
    if (first > 0 && counts.every((count) => count[separator] === first)) return separator;
  }
  return undefined;
}
