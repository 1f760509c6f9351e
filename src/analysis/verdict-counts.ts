/**
 * The verdicts of an analysis's observables, counted as they finish, and the header of a finished
 * analysis that keeps them (the history shows them without reading the results).
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { AnalysisHeader, StoredResult } from '../store/analysis-store.js';
import { parseVerdict, worse, type Verdict } from '../verdict/verdict.js';
import type { VerdictCountsView } from '../view/types.js';
import { observableVerdict } from './rows.js';

/** How many observables of an analysis got each verdict, and the most severe one. */
export type VerdictCounts = VerdictCountsView;

export function noVerdicts(): VerdictCounts {
  return { malicious: 0, suspicious: 0, clean: 0, unknown: 0, worst: 'unknown' };
}

/** Counts one observable's verdict. */
export function countVerdict(counts: VerdictCounts, verdict: Verdict): void {
  counts[verdict] += 1;
  counts.worst = worse(counts.worst, verdict);
}

/**
 * Counts the verdict of one stored result: the one stored beside it, else (a row of an older
 * version) worked out from its JSON text; a row that cannot be read judges nothing.
 */
export function countRow(counts: VerdictCounts, row: StoredResult, catalog: Catalog): void {
  let verdict: Verdict | undefined = parseVerdict(row.verdict)?.verdict;
  if (verdict === undefined) {
    try {
      verdict = observableVerdict(JSON.parse(row.value) as ObservableResult, catalog).verdict;
    } catch {
      verdict = 'unknown';
    }
  }
  countVerdict(counts, verdict);
}

/** The header of a finished analysis: complete, timed, its verdicts counted (rows all written). */
export function completedHeader(header: AnalysisHeader, verdicts: VerdictCounts, durationMs: number): AnalysisHeader {
  const total = header.progress.total;
  const final: AnalysisHeader = {
    ...header,
    complete: true,
    finished_at: new Date().toISOString(),
    duration_ms: durationMs,
    progress: { done: total, total },
    format: 2,
    verdicts,
  };
  delete final.results;
  return final;
}
