/**
 * CSV export of an analysis: one row per (observable, engine that applies), with the one-line
 * summary and the engine's whole result as JSON, so nothing the API gives is lost.
 */
import { engineKeys, engineOutcome } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';

export const CSV_COLUMNS = ['observable', 'type', 'reversed_ip', 'engine', 'status', 'summary', 'result'] as const;

export function resultsCsv(results: readonly (ObservableResult | null)[], catalog: Catalog): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const result of results) if (result) lines.push(...csvLines(result, catalog));
  return `${lines.join('\r\n')}\r\n`;
}

/** The CSV lines (without their CRLF) of one observable's result, after the header line. */
export function csvLines(result: ObservableResult, catalog: Catalog): string[] {
  const lines: string[] = [];
  for (const key of engineKeys(result)) {
    const outcome = engineOutcome(result, key, catalog);
    if (outcome.status === 'not_applicable') continue;
    const data = outcome.status === 'error' ? '' : JSON.stringify(result[key] ?? null);
    lines.push([result.observable, result.type, result.reversed_ip ?? '', key, outcome.status, outcome.summary, data].map(csvCell).join(','));
  }
  return lines;
}

/**
 * RFC 4180 quoting, and a leading apostrophe on text a spreadsheet would run as a formula
 * (observables and upstream text are attacker controlled).
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
