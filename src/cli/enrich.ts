/**
 * `oas enrich IN -o OUT` (issue 35): a spreadsheet of indicators in, the same spreadsheet out with
 * what oas finds. One analysis of every distinct observable of its cells (those of the `--column`s,
 * else of every column), recorded like any other; then each row with `oas_verdict`, `oas_reasons`
 * and one `oas_<engine>` column per engine appended. The cells: src/export/enrich-cells.ts; CSV and
 * TSV: src/export/enrich-table.ts; .xlsx: src/export/enrich-workbook.ts. The output has the
 * input's format; `-o -` writes it to standard output.
 */
import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { checkNewColumns, chosenColumns, gatherObservables, newColumns, observableCells, rowCells, type ObservableCells, type SheetRows } from '../export/enrich-cells.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';
import { engineNames, LookupCount, openSink, quietOnClosedOutput, type Sink } from './output.js';
import { canSpin, startProgress } from './progress.js';

export interface EnrichOptions {
  /** `-o`: the enriched copy (`-`: standard output). */
  output: string;
  /** `--column` (repeatable): the columns read; none: every column. */
  column?: string[];
  engines?: string;
  set?: string;
  ignoreCache?: boolean;
  tlp?: string;
  pap?: string;
  catalog?: string;
  config?: string;
  dataDir?: string;
  quiet?: boolean;
}

type Kind = 'csv' | 'tsv' | 'xlsx';
const KINDS: Readonly<Record<string, Kind>> = { '.csv': 'csv', '.tsv': 'tsv', '.xlsx': 'xlsx' };

/** As for `oas analyze`: once everything is written and closed, the process ends within this time. */
const EXIT_GRACE_MS = 1000;

/** A file read, and how to write its enriched copy. */
interface Table {
  rows: SheetRows;
  write(names: readonly string[], cells: ReadonlyMap<number, readonly string[]>, sink: Sink): Promise<void>;
}

export async function enrichCommand(file: string, options: EnrichOptions): Promise<number> {
  const kind = KINDS[extname(file).toLowerCase()];
  if (!kind) throw new UsageError(`${file}: oas enrich reads a .csv, .tsv or .xlsx file (named so)`);
  const output = options.output;
  if (output.trim() === '') throw new UsageError('--output needs a file name (or "-" for standard output)');
  const toStdout = output === '-';
  if (!toStdout && KINDS[extname(output).toLowerCase()] !== kind) {
    throw new UsageError(`--output ${output}: the enriched copy has the format of ${file}: give a name ending in .${kind} (or "-" for standard output)`);
  }
  if (!toStdout && resolve(output) === resolve(file)) throw new UsageError(`--output ${output} is the input file: give another name (oas never overwrites the input)`);
  if (toStdout && kind === 'xlsx' && process.stdout.isTTY) throw new UsageError('--output -: refusing to write a binary workbook to a terminal; give --output FILE.xlsx or redirect standard output to a file');
  const engines = engineNames(options);
  const stdout = quietOnClosedOutput();

  const table = await readTable(file, kind);
  const named = options.column ?? [];
  const columns = chosenColumns(table.rows.header, named, file);
  const gathered = gatherObservables(table.rows, columns);
  const total = gathered.observables.length;
  if (total === 0) {
    const where = columns ? `its column(s) ${named.map((name) => JSON.stringify(name)).join(', ')}` : 'its cells';
    throw new UsageError(`${file}: no observable in ${where} below the first row (domains, IP addresses, URLs, hashes, e-mail addresses, extension ids)`);
  }

  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  const app = await createApp({ file: options.config, flags }, { analysisOf: { engines } });
  try {
    const max = app.config.max_observables;
    if (total > max) throw new UsageError(`${file} holds ${total} distinct observables, more than max_observables (${max}): split the file, or raise max_observables`);
    const request = { text: file, engines, ignore_cache: options.ignoreCache ?? false, tlp: options.tlp, pap: options.pap };
    // One analysis for the whole file: its "text" is the file's name, and what prepareWith extracts
    // from it is the file's observables as gathered above (with their found_in), not the name's.
    const prepared = await app.analyses.prepareWith(request, async () => gathered.observables);
    const keys = [...new Set(prepared.selections.map((s) => s.key))];
    const names = newColumns(keys);
    checkNewColumns(table.rows.header, names, file);
    // Opened before the analysis runs: an output that cannot be written spends no quota.
    const sink = openSink(toStdout ? undefined : output, kind === 'xlsx' ? 'xlsx' : 'csv', stdout);

    const found: (ObservableCells | undefined)[] = new Array(total);
    const count = new LookupCount(app.catalog);
    const progress = await startProgress({
      observables: total,
      selections: prepared.selections.map((s) => ({ key: s.key, service: s.engine.service })),
      spinner: canSpin(),
      quiet: options.quiet ?? false,
      color: !process.env['NO_COLOR'],
    });
    let record;
    try {
      // Each observable's cells as it finishes, with the verdict stored beside its result.
      record = await app.analyses.runToEnd(request, progress?.update, prepared, (index, result, judged) => {
        count.add(result);
        found[index] = observableCells(result, judged, keys, app.catalog);
      });
    } finally {
      progress?.stop();
    }
    const cells = new Map<number, string[]>();
    for (const [row, indices] of gathered.byRow) {
      cells.set(row, rowCells(indices.flatMap((index) => found[index] ?? []), keys));
    }
    await table.write(names, cells, sink);
    await sink.close();
    if (!options.quiet) {
      process.stderr.write(`${total} observable(s) in ${gathered.byRow.size} row(s), ${keys.length} engine(s)${count.failed ? `, ${count.failed} failed lookup(s)` : ''}: ${toStdout ? 'written to standard output' : `wrote ${output}`}; analysis ${record.id}\n`);
    }
    // Failures of every kind count, as for oas analyze: exit 1 only when every lookup failed.
    return count.everyEngineFailed ? EXIT_FAILED : EXIT_OK;
  } finally {
    await app.close();
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
}

/** The file read as its name says; one that cannot be read is a usage error naming it. */
async function readTable(file: string, kind: Kind): Promise<Table> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new UsageError(`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check the path`);
  }
  if (kind === 'xlsx') {
    const { readWorkbook, writeWorkbook } = await import('../export/enrich-workbook.js');
    const read = await readWorkbook(bytes, file);
    return { rows: read.rows, write: async (names, cells, sink) => sink.write(await writeWorkbook(read, names, cells)) };
  }
  const { delimitedRows, readDelimited, writeDelimited } = await import('../export/enrich-table.js');
  const read = readDelimited(bytes, file, kind);
  return {
    rows: delimitedRows(read),
    write: async (names, cells, sink) => {
      // On a terminal as text, which the sink shows inert (control characters as escapes).
      for (const chunk of writeDelimited(read, names, cells)) await sink.write(sink.isTTY ? chunk.toString(read.encoding) : chunk);
    },
  };
}
