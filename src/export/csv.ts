/**
 * CSV: one row per (observable, engine that applies), with the one-line summary and the engine's
 * whole result as JSON, so nothing the API gives is lost; each row carries its observable's
 * verdict and reasons (the first seven columns are those of earlier versions), then the
 * analysis's TLP (issue 34; empty for an analysis of an older version, which had none), then
 * where the observable was found in its file (issue 35: `found_in`, places joined by `; `;
 * empty for a pasted text).
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { StoredResult } from '../store/analysis-store.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import { observableRows, observableVerdict, storedVerdict } from '../analysis/rows.js';
import { chunked, neutraliseFormula } from './common.js';
import { tlpLabel, type Marking } from '../marking/levels.js';

export const CSV_COLUMNS = ['observable', 'type', 'reversed_ip', 'engine', 'status', 'summary', 'result', 'verdict', 'reasons', 'tlp', 'found_in'] as const;

/** The whole CSV document at once, each verdict worked out here (tests, small exports). */
export function resultsCsv(results: readonly (ObservableResult | null)[], catalog: Catalog, marking?: Marking): string {
  const lines = [CSV_COLUMNS.join(',')];
  const tlp = tlpCell(marking);
  for (const result of results) if (result) lines.push(...csvLines(result, catalog, observableVerdict(result, catalog), tlp));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The CSV lines (without their CRLF) of one observable's result and its verdict `judged`, after
 * the header line: its table rows (`observableRows`), so an observable no selected engine applies
 * to still has one line, for its verdict (`unknown`).
 */
function csvLines(result: ObservableResult, catalog: Catalog, judged: ObservableVerdict, tlp = ''): string[] {
  const rows = observableRows(result, catalog, judged);
  const reasons = rows[0]?.reasons.join('; ') ?? '';
  const found = result.found_in?.join('; ') ?? '';
  return rows.map((row) => {
    const none = row.engine === '-'; // no selected engine applies
    const data = none || row.status === 'error' || row.status === 'withheld' ? '' : JSON.stringify(result[row.engine] ?? null);
    return [row.observable, row.type, result.reversed_ip ?? '', none ? '' : row.engine, row.status, row.summary, data, row.verdict, reasons, tlp, found].map(csvCell).join(',');
  });
}

/** The CSV export from the stored results, a page at a time, in chunks, with their stored verdicts. */
export function csvChunks(pages: AsyncIterable<readonly StoredResult[]>, catalog: Catalog, marking?: Marking): AsyncGenerator<string> {
  const tlp = tlpCell(marking);
  return chunked((async function* () {
    yield `${CSV_COLUMNS.join(',')}\r\n`;
    for await (const page of pages) {
      for (const stored of page) {
        const result = JSON.parse(stored.value) as ObservableResult;
        yield `${csvLines(result, catalog, storedVerdict(stored.verdict, result, catalog), tlp).join('\r\n')}\r\n`;
      }
    }
  })());
}

/**
 * RFC 4180 quoting, and a leading apostrophe on text a spreadsheet would run as a formula
 * (observables and upstream text are attacker controlled).
 */
export function csvCell(value: string): string {
  const safe = neutraliseFormula(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The tlp column's value: `TLP:AMBER`; empty for an analysis of an older version, which had none. */
function tlpCell(marking: Marking | undefined): string {
  return marking ? tlpLabel(marking.tlp) : '';
}
