/** `oas analyze`: text in; a table, the API's JSON array with verdicts, or an export out. */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { text as readStream } from 'node:stream/consumers';
import { isatty } from 'node:tty';
import { engineKeys, engineStatus, resultRows, type ResultRow } from '../analysis/rows.js';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { ExportSource } from '../export/common.js';
import { EXPORT_FORMATS, exportChunks, type ExportFormat } from '../export/index.js';
import { jsonLine } from '../export/json.js';
import type { ObservableResult } from '../runner/result.js';
import { canSpin, startProgress } from './progress.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface AnalyzeOptions {
  engines?: string;
  ignoreCache?: boolean;
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
  /** `--quiet`: no progress on standard error (spinner or wait lines); errors are still told. */
  quiet?: boolean;
  /** `--no-color` (false): no ANSI colours in the table or the spinner; NO_COLOR does the same. */
  color?: boolean;
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
 * The sink of `file` (undefined: standard output). A file that cannot be opened is a usage error
 * (exit 2); an error while writing it ends the command with exit 1, like one on standard output.
 */
export function openSink(file: string | undefined, binary: boolean, stdout: { write(chunk: string | Uint8Array): Promise<void> }): Sink {
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

/** Counts the lookups of each result, and the failed ones (exit 1 when every one failed). */
export class LookupCount {
  lookups = 0;
  failed = 0;
  constructor(
    private readonly catalog: Catalog,
    private readonly rows?: ResultRow[],
    /** A result's rows (default: resultRows; a remote server's results get generic summaries). */
    private readonly rowsOf: (result: ObservableResult) => ResultRow[] = (result) => resultRows([result], this.catalog),
  ) {}

  add(result: ObservableResult): void {
    if (!this.rows) {
      // Counting only: statuses, without the rows' summaries and verdict.
      const statuses = engineKeys(result).map((key) => engineStatus(result, key, this.catalog)).filter((s) => s !== 'not_applicable');
      this.lookups += Math.max(1, statuses.length); // none applies: one empty row, as in the table
      this.failed += statuses.filter((s) => s === 'error').length;
      return;
    }
    for (const row of this.rowsOf(result)) {
      this.lookups++;
      if (row.status === 'error') this.failed++;
      this.rows.push(row);
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
 * Once the results are out and everything is closed, the process ends within this time even if
 * an abandoned lookup still holds a socket or a timer.
 */
const EXIT_GRACE_MS = 1000;

export async function analyzeCommand(words: string[], options: AnalyzeOptions): Promise<number> {
  const server = options.server ?? (process.env.OAS_SERVER || undefined);
  const choice = outputChoice(options);
  if (server !== undefined) {
    if (options.redis !== undefined) throw new UsageError('--redis runs the analysis here with the team\'s cache and quotas; it does not go with --server (the server has its own)');
    const { remoteAnalyzeCommand } = await import('./remote.js');
    return remoteAnalyzeCommand(words, { ...options, server });
  }
  for (const flag of ['prefix', 'token', 'timeout'] as const) {
    if (options[flag] !== undefined) throw new UsageError(`--${flag} needs --server URL (or OAS_SERVER)`);
  }
  const stdout = quietOnClosedOutput();
  const input = await readInput(words);
  const engines = options.engines === undefined ? undefined : options.engines.split(',').map((s) => s.trim()).filter(Boolean);
  if (engines !== undefined && engines.length === 0) throw new UsageError('--engines needs at least one engine name');

  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const app = await createApp({ file: options.config, flags }, { analysisOf: { engines } });
  try {
    const request = { text: input, engines, ignore_cache: options.ignoreCache ?? false };
    const prepared = app.analyses.prepare(request);
    const { format } = choice;
    const sink = openSink(choice.file, format === 'xlsx', stdout);
    const rows: ResultRow[] = [];
    const count = new LookupCount(app.catalog, format === 'table' ? rows : undefined);
    // jsonl: one line per observable as it finishes (in the order they finish). The lines are the
    // progress there: no spinner over them on a terminal.
    const onObservable = format === 'jsonl'
      ? (_index: number, result: ObservableResult) => {
        count.add(result);
        void sink.write(`${jsonLine(result, app.catalog)}\n`);
      }
      : undefined;
    // On a terminal a spinner, unless jsonl lines are shown there (they are the progress): then,
    // as off a terminal, a line on standard error for each long wait.
    const progress = await startProgress({
      observables: prepared.observables.length,
      selections: prepared.selections.map((s) => ({ key: s.key, service: s.engine.service })),
      spinner: canSpin() && !(format === 'jsonl' && sink.isTTY),
      quiet: options.quiet ?? false,
      color: options.color !== false && !process.env['NO_COLOR'],
    });
    let record;
    try {
      record = await app.analyses.runToEnd(request, progress?.update, prepared, onObservable);
    } finally {
      progress?.stop();
    }
    // The results are read back from the store a page at a time: exports are written as they are
    // read (never built whole); the table keeps one short row per (observable, engine).
    if (format === 'table') {
      for await (const texts of app.analyses.resultTexts(record)) for (const text of texts) count.add(JSON.parse(text) as ObservableResult);
      const { renderTable } = await import('./table.js');
      const footer = [`${record.observables.length} observable(s), ${prepared.selections.length} engine(s)${count.failed ? `, ${count.failed} failed lookup(s)` : ''}`, `analysis ${record.id}`];
      await sink.write(`${renderTable(rows, sink.isTTY ? process.stdout.columns : undefined, { ...(sink.isTTY && options.color !== false ? {} : { color: false }), named: engines, footer })}\n`);
    } else if (format !== 'jsonl') {
      // The first reading counts the lookups (xlsx reads the results twice).
      let counted = false;
      const pages = () => {
        const texts = app.analyses.resultTexts(record);
        if (counted) return texts;
        counted = true;
        return (async function* () {
          for await (const page of texts) {
            for (const text of page) count.add(JSON.parse(text) as ObservableResult);
            yield page;
          }
        })();
      };
      await writeExport(format, { id: record.id, created_at: record.created_at, finished_at: record.finished_at, pages }, app.catalog, sink);
    }
    await sink.close();
    // Failures of every kind count, DNS ones included (the runner reports them as errors).
    return count.everyEngineFailed ? EXIT_FAILED : EXIT_OK;
  } finally {
    await app.close();
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
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
export async function readInput(words: string[]): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ');
  if (process.stdin.isTTY && words.length === 0) {
    throw new UsageError('no text to analyze: pass observables as arguments, or pipe text on standard input');
  }
  return readStream(process.stdin);
}
