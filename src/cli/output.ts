/**
 * What `oas analyze` reads and writes, whether the analysis runs here (src/cli/analyze.ts) or on a
 * server (src/cli/remote.ts): its options, the text in, the output format and destination, the
 * lookup count behind the exit code, and the export written a chunk at a time.
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { text as readStream } from 'node:stream/consumers';
import { isatty } from 'node:tty';
import { engineKeys, engineStatus, observableRows, type ResultRow } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { ExportSource } from '../export/common.js';
import { EXPORT_FORMATS, exportChunks, type ExportFormat } from '../export/index.js';
import type { ObservableResult } from '../runner/result.js';
import { inertDocument, jsonInert } from '../text/inert.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import { EXIT_FAILED, UsageError } from './errors.js';

export interface AnalyzeOptions {
  engines?: string;
  /** `--file PATH` (repeatable; `-`: standard input): files whose observables are analysed (issue 35). */
  file?: string[];
  /** `--column NAME` (repeatable): with --file, the CSV/TSV columns to read. */
  column?: string[];
  /** `--set a,b`: the engines of these engine sets, sent on as `@a`, `@b`. */
  set?: string;
  ignoreCache?: boolean;
  /** `--ignore-allowlist` (issue 38): analyse even what the setting allowlist covers. */
  ignoreAllowlist?: boolean;
  /** `--tlp`, `--pap`: the analysis's marking (issue 34), as written; default: the settings'. */
  tlp?: string;
  pap?: string;
  json?: boolean;
  /** table (default), json, jsonl or an export format (src/export/). */
  format?: string;
  /** A file to write the output to ("-": standard output). */
  output?: string;
  config?: string;
  dataDir?: string;
  catalog?: string;
  /** `--redis URL` (setting redis_url): the team's cache and quotas, the analysis still run here. */
  redis?: string;
  /** Remote mode (src/cli/remote.ts): the server's URL, its API prefix, token and time limit. */
  server?: string;
  prefix?: string;
  token?: string;
  timeout?: string;
  /** `--push TARGET` (issue 37): once done, push the analysis to misp, opencti or thehive (`oas push`). */
  push?: string;
  /** `--quiet`: no progress on standard error (spinner or wait lines); errors are still told. */
  quiet?: boolean;
  /** `--no-color` (false): no ANSI colours in the table or the spinner; NO_COLOR does the same. */
  color?: boolean;
}

/**
 * The engine names of `--engines` and `--set` (each set as `@name`, which the catalog or the server
 * expands); undefined when neither is given (the default engines).
 */
export function engineNames(options: Pick<AnalyzeOptions, 'engines' | 'set'>): string[] | undefined {
  const split = (list: string) => list.split(',').map((s) => s.trim()).filter(Boolean);
  const engines = options.engines === undefined ? undefined : split(options.engines);
  if (engines !== undefined && engines.length === 0) throw new UsageError('--engines needs at least one engine name');
  const sets = options.set === undefined ? undefined : split(options.set).map((name) => name.replace(/^@/, ''));
  if (sets !== undefined && sets.length === 0) throw new UsageError('--set needs at least one engine set name (oas engines --sets lists them)');
  if (engines === undefined && sets === undefined) return undefined;
  return [...new Set([...(engines ?? []), ...(sets ?? []).map((name) => `@${name}`)])];
}

export const OUTPUT_FORMATS = ['table', 'json', 'jsonl', ...EXPORT_FORMATS.filter((f) => f !== 'json')] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What to print and where: checked before anything runs (a usage error spends no quota). */
export interface OutputChoice {
  format: OutputFormat;
  /** A file path; undefined for standard output. */
  file: string | undefined;
}

/**
 * The format (`--format`, `--json` being `--format json`) and the destination (`--output`). xlsx is
 * binary: it needs `--output FILE` (or `--output -` for a pipe) and is never written to a terminal.
 */
export function outputChoice(options: Pick<AnalyzeOptions, 'format' | 'json' | 'output'>, stdoutIsTTY = Boolean(process.stdout.isTTY)): OutputChoice {
  const asked = options.format?.trim().toLowerCase();
  if (asked !== undefined && !(OUTPUT_FORMATS as readonly string[]).includes(asked)) {
    throw new UsageError(`--format must be one of: ${OUTPUT_FORMATS.join(', ')} (not "${options.format}")`);
  }
  if (options.json && asked !== undefined && asked !== 'json') throw new UsageError(`--json is --format json: give --format ${asked} or --json, not both`);
  const format = (asked ?? (options.json ? 'json' : 'table')) as OutputFormat;
  if (options.output !== undefined && options.output.trim() === '') throw new UsageError('--output needs a file name (or "-" for standard output)');
  const file = options.output === undefined || options.output === '-' ? undefined : options.output;
  if (format === 'xlsx') {
    if (options.output === undefined) throw new UsageError('--format xlsx writes a binary workbook: give --output FILE (or --output - to send it to a pipe)');
    if (file === undefined && stdoutIsTTY) throw new UsageError('--format xlsx: refusing to write a binary workbook to a terminal; give --output FILE or redirect standard output to a file');
  }
  return { format, file };
}

/** Where the output goes: standard output, or a file opened (and created) before the analysis runs. */
export interface Sink {
  /** Resolves once the chunk is handed over (never rejects: a failure ends the command). */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Everything written; resolves once the file is complete. */
  close(): Promise<void>;
  /** Whether the output is a terminal (colours, refusing binary). */
  isTTY: boolean;
}

/**
 * The sink of `file` (undefined: standard output) for `format`, what it is given written inert
 * (src/text/inert.ts): JSON (json, jsonl, stix, misp) with the characters JSON.stringify leaves raw
 * (C1 controls, U+2028, U+2029, bidi controls) as `\u` escapes, the same JSON; CSV shown on a
 * terminal with its control characters as visible escapes (a file or a pipe gets it as it is). The
 * table is made inert as it is laid out (src/cli/table.ts: its colours are ours); xlsx is binary.
 */
export function openSink(file: string | undefined, format: OutputFormat, stdout: { write(chunk: string | Uint8Array): Promise<void> }): Sink {
  const sink = openFileOrStdout(file, format === 'xlsx', stdout);
  const guard = format === 'json' || format === 'jsonl' || format === 'stix' || format === 'misp' ? jsonInert
    : format === 'csv' && sink.isTTY ? inertDocument : undefined;
  if (guard === undefined) return sink;
  return { ...sink, write: (chunk) => sink.write(typeof chunk === 'string' ? guard(chunk) : chunk) };
}

/**
 * A file that cannot be opened is a usage error (exit 2); an error while writing it ends the
 * command with exit 1, like one on standard output.
 */
function openFileOrStdout(file: string | undefined, binary: boolean, stdout: { write(chunk: string | Uint8Array): Promise<void> }): Sink {
  if (file === undefined) {
    // Writes resolve in order: once the last one has, everything has been handed over.
    let last: Promise<void> = Promise.resolve();
    return {
      write: (chunk) => (last = stdout.write(chunk)),
      close: () => last,
      isTTY: Boolean(process.stdout.isTTY),
    };
  }
  let fd: number;
  try {
    fd = openSync(file, 'w', 0o644);
  } catch (error) {
    throw new UsageError(`--output ${file}: cannot write it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const isTTY = isatty(fd);
  const stream: WriteStream = createWriteStream('', { fd });
  if (binary && isTTY) {
    stream.destroy();
    throw new UsageError(`--output ${file} is a terminal: refusing to write a binary workbook to it`);
  }
  const fail = (error: NodeJS.ErrnoException) => {
    process.stderr.write(`oas: cannot write ${file}: ${error.code ?? error.message}\n`);
    process.exit(EXIT_FAILED);
  };
  stream.on('error', fail);
  // One wait for 'drain' shared by every write made meanwhile (jsonl writes without waiting).
  let drained: Promise<void> | undefined;
  return {
    isTTY,
    write: (chunk) => {
      if (stream.write(chunk)) return drained ?? Promise.resolve();
      return (drained ??= new Promise((resolve) => stream.once('drain', () => {
        drained = undefined;
        resolve();
      })));
    },
    close: () => new Promise((resolve) => stream.end(() => resolve())),
  };
}

/**
 * Counts the lookups of each result, and the failed ones (exit 1 when every one failed); with
 * `rows`, keeps the table's rows of each result too.
 */
export class LookupCount {
  lookups = 0;
  failed = 0;
  constructor(
    private readonly catalog: Catalog,
    private readonly rows?: ResultRow[],
    /** A result's rows (default: observableRows; a remote server's results get generic summaries). */
    private readonly rowsOf: (result: ObservableResult, judged: ObservableVerdict) => ResultRow[] = (result, judged) => observableRows(result, this.catalog, judged),
  ) {}

  /** One result; `judged`, its verdict (the one stored with it), only for the rows (never worked out here). */
  add(result: ObservableResult, judged?: ObservableVerdict): void {
    if (!this.rows) {
      // Counting only: statuses, without the rows' summaries and verdict.
      const all = engineKeys(result).map((key) => engineStatus(result, key, this.catalog)).filter((s) => s !== 'not_applicable');
      // A withheld engine was not asked (issue 34): neither a lookup nor a failure.
      const statuses = all.filter((s) => s !== 'withheld');
      this.lookups += all.length === 0 ? 1 : statuses.length; // none applies: one empty row, as in the table
      this.failed += statuses.filter((s) => s === 'error').length;
      return;
    }
    if (!judged) throw new Error('LookupCount: the rows of a result need its verdict');
    for (const row of this.rowsOf(result, judged)) {
      this.rows.push(row);
      if (row.status === 'withheld') continue;
      this.lookups++;
      if (row.status === 'error') this.failed++;
    }
  }

  get everyEngineFailed(): boolean {
    return this.lookups > 0 && this.failed === this.lookups;
  }
}

/** Writes an export (or the JSON array) to the sink, a chunk at a time; JSON gets a final line break. */
export async function writeExport(format: ExportFormat, source: ExportSource, catalog: Catalog, sink: Sink): Promise<void> {
  for await (const chunk of exportChunks(format, source, catalog)) await sink.write(chunk);
  if (format === 'json') await sink.write('\n');
}

/**
 * `oas analyze ... | head -1`: when the reader of standard output (or error) goes away, what is
 * left to print has nowhere to go; the analysis is recorded all the same and the command ends
 * with its usual exit code, without a word (no EPIPE stack trace). Any other output error is one
 * line and exit 1.
 */
export function quietOnClosedOutput(): { write(text: string | Uint8Array): Promise<void> } {
  let closed = false;
  const onError = (stream: NodeJS.WriteStream) => (error: NodeJS.ErrnoException) => {
    if (closed || error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') {
      closed = true;
      return;
    }
    closed = true;
    if (stream !== process.stderr) process.stderr.write(`oas: cannot write the results: ${error.code ?? error.message}\n`);
    process.exit(EXIT_FAILED);
  };
  process.stdout.on('error', onError(process.stdout));
  process.stderr.on('error', onError(process.stderr));
  return {
    // Resolves once the text is handed to the system (or cannot be): never rejects.
    write: (text) => new Promise((resolve) => {
      if (closed || process.stdout.destroyed) {
        resolve();
        return;
      }
      process.stdout.write(text, () => resolve());
    }),
  };
}

/** The text from the arguments, or standard input when there are none or the argument is "-". */
/** All of `stream` as bytes, or undefined once more than `max` bytes came (the rest is not read). */
export async function readStreamBytes(stream: NodeJS.ReadableStream, max: number): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += buffer.byteLength;
    if (total > max) {
      (stream as NodeJS.ReadStream).destroy?.();
      return undefined;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export async function readInput(words: string[]): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ');
  if (process.stdin.isTTY && words.length === 0) {
    throw new UsageError('no text to analyze: pass observables as arguments, or pipe text on standard input');
  }
  return readStream(process.stdin);
}
