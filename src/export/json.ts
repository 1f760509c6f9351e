/**
 * JSON and JSON Lines: the API's result elements, each with its observable's `verdict` and
 * `reasons` added after the spec's keys. The JSON document is written a piece at a time, never
 * built whole; a JSON line is one element, printed as soon as its observable is done.
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import { observableVerdict } from '../analysis/rows.js';
import { jsonChunks as resultsJson } from '../analysis/output.js';

/** A result element with its verdict (the key names are not engine names: no engine is called so). */
export function withVerdict<T extends ObservableResult>(result: T, catalog: Catalog, judgedAs: ObservableResult = result): T & { verdict: string; reasons: string[] } {
  const { verdict, reasons } = observableVerdict(judgedAs, catalog);
  return { ...result, verdict, reasons };
}

/** One line of `--format jsonl` (without its line break). */
export function jsonLine(result: ObservableResult, catalog: Catalog): string {
  return JSON.stringify(withVerdict(result, catalog));
}

/** The JSON export (an indented array) from the results as JSON texts, a page at a time. */
export function jsonChunks(pages: AsyncIterable<readonly string[]>, catalog: Catalog): AsyncGenerator<string> {
  return resultsJson(pages, true, (result) => withVerdict(result, catalog));
}
