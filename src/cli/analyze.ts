/**
 * `oas analyze`: text in; a table, the API's JSON array with verdicts, or an export out. With
 * `--server` the analysis runs on a server (src/cli/remote.ts); what both read and write is
 * src/cli/output.ts.
 */
import { storedVerdict, type ResultRow } from '../analysis/rows.js';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { jsonLine } from '../export/json.js';
import { recordedMarking } from '../marking/levels.js';
import type { ObservableResult } from '../runner/result.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import { canSpin, startProgress } from './progress.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';
import { engineNames, LookupCount, openSink, outputChoice, quietOnClosedOutput, readInput, writeExport, type AnalyzeOptions } from './output.js';

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
    if (options.push !== undefined) throw new UsageError('--push sends an analysis run here; for one run on a server, push it there: POST /api/analyses/<id>/push, or the results page\'s "Send to" button');
    const { remoteAnalyzeCommand } = await import('./remote.js');
    return remoteAnalyzeCommand(words, { ...options, server });
  }
  for (const flag of ['prefix', 'token', 'timeout'] as const) {
    if (options[flag] !== undefined) throw new UsageError(`--${flag} needs --server URL (or OAS_SERVER)`);
  }
  const stdout = quietOnClosedOutput();
  const paths = options.file ?? [];
  if (paths.filter((p) => p === '-').length > 1) throw new UsageError('--file - reads standard input once: give it once');
  // With --file, the text is the arguments only (standard input may be one of the files).
  const input = paths.length > 0 ? words.filter((w) => w !== '-').join(' ') : await readInput(words);
  if (paths.length === 0 && options.column?.length) throw new UsageError('--column chooses the columns of a CSV given with --file');
  const engines = engineNames(options);

  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const app = await createApp({ file: options.config, flags }, { analysisOf: { engines } });
  try {
    // A push that cannot happen is said before the analysis runs, not after.
    if (options.push !== undefined) {
      const { checkPushTarget } = await import('../push/service.js');
      try {
        checkPushTarget(app.config, options.push);
      } catch (error) {
        throw new UsageError(`--push: ${(error as Error).message}`);
      }
    }
    const files = paths.length > 0
      ? await (await import('./files-in.js')).readInputFiles(paths, app.config, { columns: options.column?.length ? options.column : undefined })
      : undefined;
    const request = { text: input, files, engines, ignore_cache: options.ignoreCache ?? false, ignore_allowlist: options.ignoreAllowlist, tlp: options.tlp, pap: options.pap };
    const prepared = files
      ? await app.analyses.prepareWith(request, async (text) => (await import('../observables/extract.js')).extractObservables(text))
      : app.analyses.prepare(request);
    const { format } = choice;
    const sink = openSink(choice.file, format, stdout);
    const rows: ResultRow[] = [];
    const count = new LookupCount(app.catalog, format === 'table' ? rows : undefined);
    // jsonl: one line per observable as it finishes (in the order they finish), with the verdict
    // worked out as it finished. The lines are the progress there: no spinner over them on a terminal.
    const onObservable = format === 'jsonl'
      ? (_index: number, result: ObservableResult, judged: ObservableVerdict) => {
        count.add(result);
        void sink.write(`${jsonLine(result, judged, prepared.marking)}\n`);
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
    // The results are read back from the store a page at a time, with the verdicts stored beside
    // them: exports are written as they are read (never built whole); the table keeps one short
    // row per (observable, engine).
    if (format === 'table') {
      for await (const page of app.analyses.storedResults(record)) {
        for (const stored of page) {
          const result = JSON.parse(stored.value) as ObservableResult;
          count.add(result, storedVerdict(stored.verdict, result, app.catalog));
        }
      }
      const { renderTable, markingLine } = await import('./table.js');
      const footer = [`${record.observables.length} observable(s), ${prepared.selections.length} engine(s)${count.failed ? `, ${count.failed} failed lookup(s)` : ''}`, `analysis ${record.id}`];
      const colored = sink.isTTY && options.color !== false && !process.env['NO_COLOR'];
      const marking = recordedMarking(record);
      const heading = marking ? `${markingLine(marking, colored)}\n\n` : '';
      await sink.write(`${heading}${renderTable(rows, sink.isTTY ? process.stdout.columns : undefined, { ...(sink.isTTY && options.color !== false ? {} : { color: false }), named: engines === undefined ? undefined : prepared.selections.map((s) => s.key), footer })}\n`);
    } else if (format !== 'jsonl') {
      // The first reading counts the lookups (xlsx reads the results twice).
      let counted = false;
      const pages = () => {
        const stored = app.analyses.storedResults(record);
        if (counted) return stored;
        counted = true;
        return (async function* () {
          for await (const page of stored) {
            for (const row of page) count.add(JSON.parse(row.value) as ObservableResult);
            yield page;
          }
        })();
      };
      await writeExport(format, { id: record.id, created_at: record.created_at, finished_at: record.finished_at, marking: recordedMarking(record), pages }, app.catalog, sink);
    }
    await sink.close();
    const pushed = options.push !== undefined ? await (await import('./push.js')).pushAfterAnalysis(app, options.push, record.id) : EXIT_OK;
    // Failures of every kind count, DNS ones included (the runner reports them as errors).
    return count.everyEngineFailed ? EXIT_FAILED : pushed;
  } finally {
    await app.close();
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
}
