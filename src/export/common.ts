/** What every export format shares: the source of results, the verdict of each, plain text. */
import { engineKeys, engineOutcome, storedVerdict, type Outcome } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { StoredResult } from '../store/analysis-store.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import type { Marking } from '../marking/levels.js';

/** An analysis to export: what names it, and its results. */
export interface ExportSource {
  id: string;
  /** ISO 8601, with milliseconds: when the analysis was started. */
  created_at: string;
  /** When it finished (ISO 8601), when known. */
  finished_at?: string | null | undefined;
  /** Its TLP and PAP (issue 34); absent for an analysis of an older version, which had none. */
  marking?: Marking | undefined;
  /**
   * The results in input order, as JSON texts with the verdicts stored beside them, a page at a
   * time (the stored rows, `AnalysisService.storedResults`). A format may read them more than
   * once: each call starts over.
   */
  pages(): AsyncIterable<readonly StoredResult[]>;
}

/** One observable's result with its verdict, parsed once for a format. */
export interface Judged extends ObservableVerdict {
  result: ObservableResult;
}

/** One engine's outcome for an observable, for the engines that apply to it. */
export interface EngineLine extends Outcome {
  engine: string;
}

/** The results of a source, one at a time, with their verdicts (as stored: never worked out again). */
export async function* judged(source: ExportSource, catalog: Catalog): AsyncGenerator<Judged> {
  for await (const page of source.pages()) {
    for (const stored of page) {
      const result = JSON.parse(stored.value) as ObservableResult;
      yield { result, ...storedVerdict(stored.verdict, result, catalog) };
    }
  }
}

/** The engines that apply to the observable (or failed on it), with their one-line outcome. */
export function engineLines(result: ObservableResult, catalog: Catalog): EngineLine[] {
  const lines: EngineLine[] = [];
  for (const engine of engineKeys(result)) {
    const outcome = engineOutcome(result, engine, catalog);
    if (outcome.status !== 'not_applicable') lines.push({ engine, ...outcome });
  }
  return lines;
}

/**
 * Upstream text made plain for a document another tool displays: tags removed (no raw HTML),
 * control characters and runs of white space as one space.
 */
export function plainText(text: string): string {
  return text
    .replace(/<[^>]*>/g, '')
    .replace(/[<>]/g, '')
    .replace(/[\u0000-\u001f\u007f\s]+/g, ' ')
    .trim();
}

/** `text` cut to `max` characters (an ellipsis at the end when cut). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A leading apostrophe on text a spreadsheet would run as a formula (attacker-controlled text). */
export function neutraliseFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

export { chunked } from '../analysis/output.js';

/** `2026-11-23T12:00:00Z` and the like as a STIX timestamp (UTC, milliseconds). */
export function isoMillis(text: string | null | undefined, fallback: string): string {
  const time = Date.parse(text ?? '');
  return new Date(Number.isNaN(time) ? Date.parse(fallback) : time).toISOString();
}
