/**
 * The CSV/TSV side of `oas enrich` (issue 35). The file is read with csv-parse (RFC 4180 quoting,
 * a UTF-8 or UTF-16LE byte order mark, `\r\n`, `\n` or `\r` line ends, even mixed): `.tsv` is
 * tab-separated, a `.csv`'s separator is the one of `,` `;` and tab its first row holds most of.
 * Each record is kept as the bytes it was in the file, and written back byte for byte (its
 * quoting, its separator, its line end) with the new cells appended before its line end, with the
 * file's separator, each new cell quoted only when it must be (RFC 4180) and guarded against
 * spreadsheet formulas as the CSV export's cells are (`neutraliseFormula`).
 *
 * A row shorter than the widest one gets empty cells first, so that the new cells of every row
 * stand under their names. A row without observable gets the new cells empty (its columns stay
 * aligned for a strict CSV reader); a blank line stays as it was (it is no row).
 */
import { CsvError, parse, type Info } from 'csv-parse/sync';
import { InputError } from '../analysis/request.js';
import { neutraliseFormula } from './common.js';
import type { SheetRows } from './enrich-cells.js';

export type Separator = ',' | ';' | '\t';

export interface DelimitedRecord {
  /** Its bytes in the file, line end excluded (the first record's with the byte order mark). */
  text: Buffer;
  /** Its line end as in the file (`\r\n`, `\n`, `\r`; empty for a last line without one). */
  end: Buffer;
  fields: string[];
}

export interface DelimitedFile {
  separator: Separator;
  /** How the file is encoded (UTF-16LE when it starts with that byte order mark): the new cells are too. */
  encoding: 'utf8' | 'utf16le';
  records: DelimitedRecord[];
  /** Whatever follows the last record (nothing, in a file read to its end). */
  rest: Buffer;
}

/** How much of the file's start the separator is guessed from. */
const SNIFF_BYTES = 64 * 1024;

/** Reads a .csv or .tsv file; a file csv-parse cannot read is an InputError naming it and why. */
export function readDelimited(bytes: Buffer, name: string, kind: 'csv' | 'tsv'): DelimitedFile {
  const encoding = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf16le' : 'utf8';
  const separator = kind === 'tsv' ? '\t' : sniffSeparator(new TextDecoder(encoding === 'utf16le' ? 'utf-16le' : 'utf-8').decode(bytes.subarray(0, SNIFF_BYTES)));
  let parsed: { record: string[]; info: Info }[];
  try {
    parsed = parse(bytes, {
      bom: true,
      delimiter: separator,
      record_delimiter: ['\r\n', '\n', '\r'],
      info: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
    }) as unknown as { record: string[]; info: Info }[];
  } catch (error) {
    if (error instanceof CsvError) throw new InputError(`${name}: cannot read it as ${kind.toUpperCase()} (${error.message}); check its quotes`);
    throw error;
  }
  const records: DelimitedRecord[] = [];
  let start = 0;
  for (const { record, info } of parsed) {
    // info.bytes: where the record ends in the file, its line end included.
    const slice = bytes.subarray(start, info.bytes);
    start = info.bytes;
    const endLength = lineEndLength(slice, encoding);
    records.push({ text: slice.subarray(0, slice.length - endLength), end: slice.subarray(slice.length - endLength), fields: record });
  }
  return { separator, encoding, records, rest: bytes.subarray(start) };
}

/** The sheet's text: the first record is the header, blank lines are no row. */
export function delimitedRows(file: DelimitedFile): SheetRows {
  const [first, ...others] = file.records;
  return {
    header: first?.fields ?? [],
    rows: others.flatMap((record, index) => (isBlank(record) ? [] : [{ number: index + 2, cells: record.fields }])),
  };
}

/**
 * The enriched file, a chunk per record: the header's record with `names` appended, each row's
 * with its cells of `cells` (by row number; a row not there gets them empty), blank lines as they were.
 */
export function* writeDelimited(file: DelimitedFile, names: readonly string[], cells: ReadonlyMap<number, readonly string[]>): Generator<Buffer> {
  const width = file.records.reduce((widest, record) => (isBlank(record) ? widest : Math.max(widest, record.fields.length)), 0);
  const empty = names.map(() => '');
  for (const [index, record] of file.records.entries()) {
    if (index > 0 && isBlank(record)) {
      yield Buffer.concat([record.text, record.end]);
      continue;
    }
    const added = index === 0 ? names : cells.get(index + 1) ?? empty;
    const padding = file.separator.repeat(Math.max(0, width - record.fields.length));
    const appended = `${padding}${added.map((value) => `${file.separator}${delimitedCell(value, file.separator)}`).join('')}`;
    yield Buffer.concat([record.text, Buffer.from(appended, file.encoding), record.end]);
  }
  if (file.rest.length > 0) yield file.rest;
}

/**
 * A new cell as written: guarded against formulas (`neutraliseFormula`, as the CSV export), then
 * quoted when it holds the separator, a quote or a line break (RFC 4180), its quotes doubled.
 */
export function delimitedCell(value: string, separator: Separator): string {
  const safe = neutraliseFormula(value);
  return safe.includes(separator) || /["\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The separator of `,` `;` and tab that the first record holds most of, outside quotes (`,` for none). */
export function sniffSeparator(text: string): Separator {
  const counts: Record<Separator, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c]++;
  }
  return (Object.keys(counts) as Separator[]).reduce((best, c) => (counts[c] > counts[best] ? c : best), ',');
}

/** A line with nothing on it: csv-parse's record of one empty field, and no byte before its line end. */
function isBlank(record: DelimitedRecord): boolean {
  return record.fields.length === 1 && record.fields[0] === '' && record.text.length === 0;
}

/** The length in bytes of the line end closing `slice` (`\r\n`, `\n`, `\r`), 0 when none. */
function lineEndLength(slice: Buffer, encoding: 'utf8' | 'utf16le'): number {
  const unit = encoding === 'utf16le' ? 2 : 1;
  const at = (fromEnd: number) => {
    const i = slice.length - fromEnd * unit;
    if (i < 0) return -1;
    return unit === 1 ? slice[i]! : slice[i]! | (slice[i + 1]! << 8);
  };
  if (at(2) === 0x0d && at(1) === 0x0a) return 2 * unit;
  return at(1) === 0x0a || at(1) === 0x0d ? unit : 0;
}
