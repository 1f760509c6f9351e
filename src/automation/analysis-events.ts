/**
 * The events of a completed analysis (issue 36): one `analysis.completed` (who started it, its
 * engines, how many observables and of which verdict, the worst, TLP, PAP, times), and one
 * `observable.verdict` per observable whose stored verdict is at least a threshold (the lowest
 * `min_verdict` of the endpoints that subscribe; each endpoint then takes its own). Built from the
 * header as stored at completion and the rows with their stored verdicts, read a page at a time;
 * nothing here knows where they go.
 */
import type { Catalog } from '../engine/catalog.js';
import { storedVerdict } from '../analysis/rows.js';
import type { ObservableResult } from '../runner/result.js';
import type { AnalysisHeader, StoredResult } from '../store/analysis-store.js';
import type { Verdict } from '../verdict/verdict.js';
import type { OasEvent } from './events.js';

/** Verdicts from the least to the most severe (`min_verdict`). */
const ORDER: readonly Verdict[] = ['unknown', 'clean', 'suspicious', 'malicious'];

/** Whether `verdict` is at least as severe as `min`. */
export function atLeast(verdict: Verdict, min: Verdict): boolean {
  return ORDER.indexOf(verdict) >= ORDER.indexOf(min);
}

/** The least severe of some verdicts (undefined for none). */
export function leastOf(verdicts: Iterable<Verdict>): Verdict | undefined {
  let least: Verdict | undefined;
  for (const verdict of verdicts) if (least === undefined || ORDER.indexOf(verdict) < ORDER.indexOf(least)) least = verdict;
  return least;
}

/** `analysis.completed` of a completed analysis's header. */
export function completedEvent(header: AnalysisHeader, link: string): OasEvent {
  const verdicts = header.verdicts ?? { malicious: 0, suspicious: 0, clean: 0, unknown: 0, worst: 'unknown' as const };
  return {
    type: 'analysis.completed',
    timestamp: header.finished_at ?? new Date().toISOString(),
    analysis: { id: header.id, tlp: header.tlp },
    data: {
      analysis_id: header.id,
      link,
      started_by: header.started_by ?? null,
      engines: [...header.engines],
      observables: header.observables.length,
      verdicts: { malicious: verdicts.malicious, suspicious: verdicts.suspicious, clean: verdicts.clean, unknown: verdicts.unknown },
      worst_verdict: verdicts.worst,
      tlp: header.tlp ?? null,
      pap: header.pap ?? null,
      created_at: header.created_at,
      finished_at: header.finished_at,
      duration_ms: header.duration_ms,
    },
  };
}

/** One `observable.verdict`, with the observable's index in its analysis (for a stable delivery id). */
export interface VerdictEvent {
  index: number;
  verdict: Verdict;
  event: OasEvent;
}

/**
 * `observable.verdict` for each stored row whose verdict is at least `min`, in input order. A row
 * that cannot be read is skipped (it judges nothing).
 */
export async function* verdictEvents(
  header: AnalysisHeader,
  rows: AsyncIterable<StoredResult[]>,
  min: Verdict,
  catalog: Catalog,
  link: string,
): AsyncGenerator<VerdictEvent> {
  const timestamp = header.finished_at ?? new Date().toISOString();
  let position = 0;
  for await (const page of rows) {
    for (const row of page) {
      const index = (row as { idx?: number }).idx ?? position;
      position++;
      let result: ObservableResult;
      try {
        result = JSON.parse(row.value) as ObservableResult;
      } catch {
        continue;
      }
      const judged = storedVerdict(row.verdict, result, catalog);
      if (!atLeast(judged.verdict, min)) continue;
      const observable = header.observables[index];
      const foundIn = result.found_in ?? observable?.found_in;
      yield {
        index,
        verdict: judged.verdict,
        event: {
          type: 'observable.verdict',
          timestamp,
          analysis: { id: header.id, tlp: header.tlp },
          data: {
            analysis_id: header.id,
            link,
            observable: result.observable ?? observable?.value,
            type: result.type ?? observable?.type,
            verdict: judged.verdict,
            reasons: judged.reasons,
            // An analyst's mark decided (issue 38): the mark (its note) and the engines' verdict.
            ...(judged.computed ? { computed_verdict: judged.computed, mark: result.mark } : {}),
            ...(foundIn?.length ? { found_in: foundIn } : {}),
          },
        },
      };
    }
  }
}
