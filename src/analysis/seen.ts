/**
 * "Seen before" at analysis time (issue 38): the earlier analyses that held each observable of an
 * analysis, looked up once for all of them before they run (src/analysis/launch.ts; with Redis,
 * when its jobs are queued: src/scale/queue.ts), and the key of an observable as a person writes it.
 */
import { identifyObservable } from '../observables/extract.js';
import type { Observable } from '../observables/types.js';
import type { SeenBefore } from '../runner/result.js';
import type { AnalysisStore } from '../store/analysis-store.js';
import { seenKey, type SeenRecord } from '../store/seen.js';

/**
 * For each of `observables`, by index, what the other analyses of the store (all but `id`: a
 * resumed analysis's own rows do not count) say of it: its `SeenBefore`, or null when none held
 * it. Undefined when the store could not answer: the results then carry no `seen` rather than a
 * wrong null, and the analysis goes on.
 */
export async function lookUpSeen(store: Pick<AnalysisStore, 'seenBefore'>, observables: readonly Observable[], id: string): Promise<((index: number) => SeenBefore | null) | undefined> {
  const keys = observables.map((o) => seenKey(o.value, o.type));
  let found: Map<string, SeenBefore>;
  try {
    found = await store.seenBefore(keys, id);
  } catch {
    return undefined;
  }
  return (index) => found.get(keys[index]!) ?? null;
}

/**
 * The index's key of an observable as a person writes it (`oas history evil[.]example`): refanged
 * and read as one observable when it is one, else the text as it is (trimmed).
 */
export function observableKey(written: string): string {
  const observable = identifyObservable(written);
  return observable ? seenKey(observable.value, observable.type) : seenKey(written.trim());
}

/** The record of an observable `analysis` held, with its verdict there. */
export function seenRecord(observable: Observable, analysis: { id: string; created_at: string }, verdict: string): SeenRecord {
  return { value: seenKey(observable.value, observable.type), at: analysis.created_at, analysis_id: analysis.id, verdict };
}
