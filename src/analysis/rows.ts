/** Flattens results into one row per (observable, engine) with a one-line summary: for tables. */
import type { Catalog } from '../engine/catalog.js';
import { RESERVED_KEYS, type ObservableResult } from '../runner/result.js';

export interface ResultRow {
  observable: string;
  type: string;
  engine: string;
  status: 'ok' | 'empty' | 'error';
  summary: string;
}

export function resultRows(results: readonly (ObservableResult | null)[], catalog: Catalog): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const result of results) {
    if (!result) continue;
    for (const key of Object.keys(result)) {
      if (RESERVED_KEYS.has(key)) continue;
      const error = result.errors?.[key];
      const value = result[key];
      const base = { observable: result.observable, type: result.type, engine: key };
      if (error !== undefined) rows.push({ ...base, status: 'error', summary: `error: ${error}` });
      else if (value === null || value === undefined) rows.push({ ...base, status: 'empty', summary: '-' });
      else rows.push({ ...base, status: 'ok', summary: summarize(catalog, key, value) });
    }
  }
  return rows;
}

function summarize(catalog: Catalog, key: string, value: unknown): string {
  const engine = catalog.find(key);
  try {
    return engine ? engine.summary(value) || 'result' : 'result';
  } catch {
    return 'result';
  }
}
