/**
 * CSV and TSV files (issue 35): the observables of every cell, or of the columns asked for
 * (`--column`, `ReadOptions.columns`), each placed `row 14, column ip`, rows numbered as a
 * spreadsheet shows them (the first line of the file, header or not, is row 1; a quoted line break
 * does not start a row).
 *
 * Parsed with csv-parse (the CSV parser of the node-csv project, well kept and fuzzed): RFC 4180
 * quoting (separators, doubled quotes and line breaks inside quoted fields), a byte order mark,
 * ragged rows and stray quotes inside unquoted fields (`relax_*`) are its job, and it says where a
 * quote is never closed. Splitting lines on commas, as hand-written readers do, gets all of these
 * wrong. A cell is data: `=HYPERLINK(...)` is text whose URL is an observable, nothing is run.
 *
 * `parseTable` is exported for the CSV round trip (`oas enrich`): the records with their exact
 * text, so a row can be written back as it came, with columns appended.
 */
import { Buffer } from 'node:buffer';
import { parse } from 'csv-parse/sync';
import { decodeText, sniffSeparator } from './detect.js';
import { extractObservables } from '../observables/extract.js';
import { FileReadError, type Reader, type ReaderContext } from './types.js';

export type Delimiter = ',' | ';' | '\t';

/** One record of a table: its cells, and its text exactly as in the file. */
export interface TableRecord {
  /** The row as a spreadsheet numbers it: the file's first record is 1. */
  row: number;
  cells: string[];
  /** The record's text as written (quotes, separators, a byte order mark for the first), without its line ending. */
  text: string;
  /** Its line ending as written: `\r\n`, `\n`, `\r`, or '' for a last record without one. */
  eol: string;
}

export interface ParsedTable {
  delimiter: Delimiter;
  /** The header row's cells (trimmed), or undefined when the first record is data. */
  header: string[] | undefined;
  /** A name for each column: the header's cell, or its position (`1`, `2`...) where that is empty or there is no header. */
  columns: string[];
  /** The data records (the header left out). */
  rows: TableRecord[];
  /** Every record, the header first when there is one: writing each `text + eol` gives the file back. */
  records: TableRecord[];
}

export interface ParseTableOptions {
  /** The separator; sniffed from the first lines when absent (`;`, tab, else `,`). */
  delimiter?: Delimiter;
  /** Whether the first record is a header; guessed when absent (see `looksLikeHeader`). */
  header?: boolean;
  /** Column names the caller wants: when every one is a cell of the first record, it is the header. */
  expectColumns?: readonly string[];
}

/**
 * A CSV or TSV text parsed: records with their exact text, the header and column names.
 * Throws csv-parse's error (with its `code`, e.g. `CSV_QUOTE_NOT_CLOSED`) when the text is not a
 * table; the readers below turn it into a FileReadError.
 */
export function parseTable(text: string, options: ParseTableOptions = {}): ParsedTable {
  const delimiter = options.delimiter ?? guessDelimiter(text);
  const parsed = parse(text, {
    delimiter,
    bom: true,
    info: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
  }) as unknown as Array<{ record: string[]; info: { bytes: number } }>;
  // csv-parse counts where each record ends in UTF-8 bytes (the byte order mark included).
  const encoded = Buffer.from(text, 'utf8');
  let start = 0;
  const records = parsed.map(({ record, info }, i): TableRecord => {
    const raw = encoded.subarray(start, info.bytes).toString('utf8');
    start = info.bytes;
    const eol = /\r\n$|\n$|\r$/.exec(raw)?.[0] ?? '';
    return { row: i + 1, cells: record, text: raw.slice(0, raw.length - eol.length), eol };
  });
  const first = records[0]?.cells.map((cell) => cell.trim());
  const hasHeader =
    first !== undefined &&
    (options.header ??
      ((options.expectColumns?.length ? options.expectColumns.every((wanted) => first.some((cell) => sameName(cell, wanted))) : false) ||
        looksLikeHeader(first)));
  const width = Math.max(0, ...records.map((record) => record.cells.length));
  const columns = Array.from({ length: width }, (_, i) => (hasHeader && first?.[i]) || String(i + 1));
  return { delimiter, header: hasHeader ? first : undefined, columns, rows: hasHeader ? records.slice(1) : records, records };
}

/**
 * A first record is a header when it names columns: some cell is not empty, none holds an
 * observable, and not all are numbers (`ip,comment` is one; `8.8.8.8,dns.google` and `1,2` are not).
 */
export function looksLikeHeader(cells: readonly string[]): boolean {
  const filled = cells.filter((cell) => cell !== '');
  if (filled.length === 0) return false;
  if (filled.every((cell) => /^[-+]?[\d.,\s]+$/.test(cell))) return false;
  return filled.every((cell) => extractObservables(cell).length === 0);
}

/**
 * The indexes of the columns named in `wanted` (a header's name, compared trimmed and case
 * insensitively, or a position `1`, `2`...), every column when `wanted` is empty. A name the table
 * does not have is a FileReadError naming the columns it has.
 */
export function selectColumns(table: ParsedTable, wanted: readonly string[] | undefined, fileName: string): number[] {
  if (!wanted?.length) return table.columns.map((_, i) => i);
  const chosen = new Set<number>();
  for (const name of wanted) {
    let matched = table.columns.flatMap((column, i) => (sameName(column, name) ? [i] : []));
    if (matched.length === 0 && /^\d+$/.test(name.trim()) && Number(name) >= 1 && Number(name) <= table.columns.length) matched = [Number(name) - 1];
    if (matched.length === 0) {
      const has = table.columns.length ? table.columns.map((column) => JSON.stringify(column)).join(', ') : 'none';
      throw new FileReadError(fileName, `has no column named ${JSON.stringify(name)} (its columns: ${has})`);
    }
    for (const i of matched) chosen.add(i);
  }
  return [...chosen].sort((a, b) => a - b);
}

function sameName(column: string, name: string): boolean {
  return column.trim().toLowerCase() === name.trim().toLowerCase();
}

/** The separator of a CSV: the one used the same way on its first lines, else the first line's most frequent (`,` by default). */
export function guessDelimiter(text: string): Delimiter {
  const head = text.slice(0, 16 * 1024);
  const sniffed = sniffSeparator(head, head.length < text.length);
  if (sniffed) return sniffed;
  const firstLine = head.split(/\r?\n|\r/, 1)[0]!.replace(/"[^"]*"/g, '');
  const count = (separator: string) => firstLine.split(separator).length - 1;
  const [best] = (['\t', ';', ','] as const).filter((separator) => count(separator) > 0).sort((a, b) => count(b) - count(a));
  return best ?? ',';
}

/** Reads a table's cells (every one, or the chosen columns') into `context`. */
function readTable(bytes: Uint8Array, name: string, context: ReaderContext, delimiter: Delimiter | undefined, kind: string): void {
  const text = decodeText(bytes);
  let table: ParsedTable;
  try {
    table = parseTable(text, { ...(delimiter ? { delimiter } : {}), ...(context.options.columns ? { expectColumns: context.options.columns } : {}) });
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/\s+/g, ' ').trim() : String(error);
    throw new FileReadError(name, `not a readable ${kind} (${message})`);
  }
  const indexes = selectColumns(table, context.options.columns, name);
  for (const record of table.rows) {
    for (const i of indexes) {
      const cell = record.cells[i];
      if (cell && cell.trim()) context.foundIn(cell, `row ${record.row}, column ${table.columns[i]}`);
    }
  }
}

/** A CSV: `,` or `;` (or tab) sniffed from its first lines. */
export const readCsv: Reader = async (bytes, name, context) => readTable(bytes, name, context, undefined, 'CSV');

/** A TSV (tab-separated values, Excel's "Text (Tab delimited)"). */
export const readTsv: Reader = async (bytes, name, context) => readTable(bytes, name, context, '\t', 'TSV');
