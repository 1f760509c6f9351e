/** `oas analyze`: text in, a table (or the API's JSON array) out. */
import { text as readStream } from 'node:stream/consumers';
import { jsonChunks } from '../analysis/output.js';
import { resultRows, type ResultRow } from '../analysis/rows.js';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import type { ObservableResult } from '../runner/result.js';
import type { Progress } from '../runner/runner.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface AnalyzeOptions {
  engines?: string;
  ignoreCache?: boolean;
  json?: boolean;
  config?: string;
  dataDir?: string;
  catalog?: string;
  /** Remote mode (src/cli/remote.ts): the server's URL, its API prefix, token and time limit. */
  server?: string;
  prefix?: string;
  token?: string;
  timeout?: string;
}

/**
 * Once the results are out and everything is closed, the process ends within this time even if
 * an abandoned lookup still holds a socket or a timer.
 */
const EXIT_GRACE_MS = 1000;

export async function analyzeCommand(words: string[], options: AnalyzeOptions): Promise<number> {
  const server = options.server ?? (process.env.OAS_SERVER || undefined);
  if (server !== undefined) {
    const { remoteAnalyzeCommand } = await import('./remote.js');
    return remoteAnalyzeCommand(words, { ...options, server });
  }
  for (const flag of ['prefix', 'token', 'timeout'] as const) {
    if (options[flag] !== undefined) throw new UsageError(`--${flag} needs --server URL (or OAS_SERVER)`);
  }
  const output = quietOnClosedOutput();
  const input = await readInput(words);
  const engines = options.engines === undefined ? undefined : options.engines.split(',').map((s) => s.trim()).filter(Boolean);
  if (engines !== undefined && engines.length === 0) throw new UsageError('--engines needs at least one engine name');

  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  const app = await createApp({ file: options.config, flags }, { analysisOf: { engines } });
  try {
    const request = { text: input, engines, ignore_cache: options.ignoreCache ?? false };
    const prepared = app.analyses.prepare(request);
    const spinner = await startSpinner(prepared.observables.length, prepared.selections.length);
    let record;
    try {
      record = await app.analyses.runToEnd(request, spinner?.update, prepared);
    } finally {
      spinner?.stop();
    }
    // The results are read back from the store a page at a time: the JSON is written as it is
    // read (never built whole); the table keeps one short row per (observable, engine).
    let lookups = 0;
    let failed = 0;
    const rows: ResultRow[] = [];
    const count = (result: ObservableResult) => {
      for (const row of resultRows([result], app.catalog)) {
        lookups++;
        if (row.status === 'error') failed++;
        if (!options.json) rows.push(row);
      }
    };
    if (options.json) {
      for await (const chunk of jsonChunks(app.analyses.resultTexts(record), true, count)) await output.write(chunk);
      await output.write('\n');
    } else {
      for await (const texts of app.analyses.resultTexts(record)) for (const text of texts) count(JSON.parse(text) as ObservableResult);
      const { renderTable } = await import('./table.js'); // cli-table3: not loaded for --json
      await output.write(`${renderTable(rows, process.stdout.columns)}\n`
        + `${record.observables.length} observable(s), ${prepared.selections.length} engine(s)`
        + `${failed ? `, ${failed} failed lookup(s)` : ''} · analysis ${record.id}\n`);
    }
    // Failures of every kind count, DNS ones included (the runner reports them as errors).
    const everyEngineFailed = lookups > 0 && failed === lookups;
    return everyEngineFailed ? EXIT_FAILED : EXIT_OK;
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
export function quietOnClosedOutput(): { write(text: string): Promise<void> } {
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

/**
 * A spinner on stderr with engines done / total, only when stderr is a terminal (ora is loaded
 * only then: scripts piping JSON don't pay for it).
 */
async function startSpinner(observables: number, engines: number): Promise<{ update: (p: Progress) => void; stop: () => void } | undefined> {
  // A terminal that reports no width (0 columns) would make ora redraw forever.
  if (!process.stderr.isTTY || !(process.stderr.columns > 0)) return undefined;
  const { default: ora } = await import('ora');
  const label = `Analyzing ${observables} observable(s) with ${engines} engine(s)`;
  const spinner = ora({ text: label, stream: process.stderr }).start();
  return {
    update: (p) => {
      spinner.text = `${label}: ${p.done}/${p.total} done${p.waiting ? ` (waiting: ${p.waiting})` : ''}`;
    },
    stop: () => spinner.stop(),
  };
}
