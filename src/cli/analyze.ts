/** `oas analyze`: text in, a table (or the API's JSON array) out. */
import { text as readStream } from 'node:stream/consumers';
import { resultRows } from '../analysis/rows.js';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import type { Progress } from '../runner/runner.js';
import { renderTable } from './table.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface AnalyzeOptions {
  engines?: string;
  ignoreCache?: boolean;
  json?: boolean;
  config?: string;
  dataDir?: string;
  catalog?: string;
}

export async function analyzeCommand(words: string[], options: AnalyzeOptions): Promise<number> {
  const input = await readInput(words);
  const engines = options.engines === undefined ? undefined : options.engines.split(',').map((s) => s.trim()).filter(Boolean);
  if (engines !== undefined && engines.length === 0) throw new UsageError('--engines needs at least one engine name');

  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  const app = await createApp({ file: options.config, flags });
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
    const rows = resultRows(record.results, app.catalog);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(record.results, null, 2)}\n`);
    } else {
      process.stdout.write(`${renderTable(rows, process.stdout.columns)}\n`);
      const failed = rows.filter((r) => r.status === 'error').length;
      process.stdout.write(`${record.observables.length} observable(s), ${prepared.selections.length} engine(s)`
        + `${failed ? `, ${failed} failed lookup(s)` : ''} · analysis ${record.id}\n`);
    }
    const everyEngineFailed = rows.length > 0 && rows.every((r) => r.status === 'error');
    return everyEngineFailed ? EXIT_FAILED : EXIT_OK;
  } finally {
    await app.close();
  }
}

/** The text from the arguments, or standard input when there are none or the argument is "-". */
async function readInput(words: string[]): Promise<string> {
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
  if (!process.stderr.isTTY) return undefined;
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
