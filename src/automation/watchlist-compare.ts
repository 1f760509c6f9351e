/**
 * What changed between two runs of a watchlist (issue 36), observable by observable: its verdict,
 * a reason it did not have (`vt: 5/76 engines flag it` after `vt: 2/76 ...`, or a new engine's),
 * and an engine that newly has data (its result went from null or empty to something: a first
 * urlscan scan, a first ThreatFox IOC). An engine that failed in either run says nothing: a
 * failure is not "no data". Read from the two analyses as stored (results and their verdicts), a
 * page at a time, so a large watchlist is never held twice as full results.
 */
import { engineKeys, engineOutcome, engineStatus, storedVerdict } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { StoredResult } from '../store/analysis-store.js';
import type { WatchlistChange } from './watchlist.js';

/** What one run says of one observable, as far as changes go. */
export interface ObservableState {
  observable: string;
  type: string;
  verdict: string;
  reasons: string[];
  /** Engine key -> `data` (with its summary), `empty`, or `unknown` (failed, withheld, not applicable). */
  engines: Map<string, { status: 'data' | 'empty' | 'unknown'; summary: string }>;
}

type Pages = AsyncIterable<StoredResult[]>;

const keyOf = (type: string, value: string) => `${type}\u0000${value}`;

/** An answer that holds nothing: null, an empty list, an empty object. */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function stateOf(row: StoredResult, catalog: Catalog): ObservableState | undefined {
  let result: ObservableResult;
  try {
    result = JSON.parse(row.value) as ObservableResult;
  } catch {
    return undefined;
  }
  const judged = storedVerdict(row.verdict, result, catalog);
  const engines: ObservableState['engines'] = new Map();
  for (const key of engineKeys(result)) {
    const status = engineStatus(result, key, catalog);
    if (status === 'ok' && !isEmpty(result[key])) engines.set(key, { status: 'data', summary: engineOutcome(result, key, catalog).summary });
    else if (status === 'ok' || status === 'empty') engines.set(key, { status: 'empty', summary: 'no data' });
    else engines.set(key, { status: 'unknown', summary: '' });
  }
  return { observable: result.observable, type: result.type, verdict: judged.verdict, reasons: judged.reasons, engines };
}

/** `vt: 54/76 engines flag it` -> `vt`. */
const engineOfReason = (reason: string) => reason.slice(0, Math.max(0, reason.indexOf(':'))) || undefined;

/** The changes of one observable from `before` to `after`. */
export function observableChanges(before: ObservableState, after: ObservableState): WatchlistChange[] {
  const changes: WatchlistChange[] = [];
  const base = { observable: after.observable, type: after.type };
  if (before.verdict !== after.verdict) changes.push({ ...base, kind: 'verdict', before: before.verdict, after: after.verdict });
  const had = new Set(before.reasons);
  for (const reason of after.reasons) {
    if (had.has(reason)) continue;
    const engine = engineOfReason(reason);
    const previous = engine === undefined ? undefined : before.reasons.find((r) => engineOfReason(r) === engine);
    changes.push({ ...base, kind: 'reason', ...(engine !== undefined ? { engine } : {}), before: previous ?? null, after: reason });
  }
  for (const [engine, now] of after.engines) {
    if (now.status === 'data' && before.engines.get(engine)?.status === 'empty') {
      changes.push({ ...base, kind: 'data', engine, before: 'no data', after: now.summary });
    }
  }
  return changes;
}

/**
 * The changes from the run whose results are `before` to the one whose results are `after`, in
 * the order of `after`'s observables; an observable only one of them holds is left out.
 */
export async function compareRuns(before: Pages, after: Pages, catalog: Catalog): Promise<WatchlistChange[]> {
  const earlier = new Map<string, ObservableState>();
  for await (const page of before) {
    for (const row of page) {
      const state = stateOf(row, catalog);
      if (state) earlier.set(keyOf(state.type, state.observable), state);
    }
  }
  const changes: WatchlistChange[] = [];
  for await (const page of after) {
    for (const row of page) {
      const state = stateOf(row, catalog);
      const previous = state && earlier.get(keyOf(state.type, state.observable));
      if (state && previous) changes.push(...observableChanges(previous, state));
    }
  }
  return changes;
}
