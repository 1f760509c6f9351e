/**
 * JSON and JSON Lines: the API's result elements, each with its observable's `verdict` and
 * `reasons` added after the spec's keys. The JSON document is written a piece at a time, never
 * built whole; a JSON line is one element, printed as soon as its observable is done.
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { StoredResult } from '../store/analysis-store.js';
import type { Marking } from '../marking/levels.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import { storedVerdict } from '../analysis/rows.js';
import { jsonChunks as resultsJson } from '../analysis/output.js';

/** A result element with its verdict `judged` (the key names are not engine names: no engine is called so). */
export function withVerdict<T extends ObservableResult>(result: T, judged: ObservableVerdict): T & { verdict: string; reasons: string[] } {
  // An analyst's mark decided (issue 38): the engines' verdict beside it.
  if (judged.computed) return { ...result, verdict: judged.verdict, reasons: judged.reasons, computed_verdict: judged.computed };
  return { ...result, verdict: judged.verdict, reasons: judged.reasons };
}

/** One line of `--format jsonl` (without its line break): the result and its verdict `judged`. */
export function jsonLine(result: ObservableResult, judged: ObservableVerdict, marking?: Marking): string {
  return JSON.stringify(withMarking(withVerdict(result, judged), marking));
}

/**
 * The JSON export (an indented array) from the stored results, a page at a time, with their stored
 * verdicts; each element of a marked analysis also says its `tlp` and `pap` (issue 34).
 */
export function jsonChunks(pages: AsyncIterable<readonly StoredResult[]>, catalog: Catalog, marking?: Marking): AsyncGenerator<string> {
  return resultsJson(pages, true, (result, stored) => withMarking(withVerdict(result, storedVerdict(stored.verdict, result, catalog)), marking));
}

/** The element with the analysis's `tlp` and `pap` after its verdict, when they are known. */
export function withMarking<T extends object>(element: T, marking: Marking | undefined): T {
  return marking ? { ...element, tlp: marking.tlp, pap: marking.pap } : element;
}
