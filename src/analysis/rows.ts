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

/** Rows of every engine that applies to its observable's type (directly or on the resolved IP). */
export function resultRows(results: readonly (ObservableResult | null)[], catalog: Catalog): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const result of results) {
    if (!result) continue;
    const before = rows.length;
    for (const key of Object.keys(result)) {
      if (RESERVED_KEYS.has(key)) continue;
      const error = result.errors?.[key];
      const value = result[key];
      const engine = catalog.find(key);
      const applies = !engine || engine.types.includes(result.type) || (engine.reversedIp && (result.type === 'FQDN' || result.type === 'URL'));
      if (!applies && error === undefined) continue;
      const base = { observable: result.observable, type: result.type, engine: key };
      if (error !== undefined) rows.push({ ...base, status: 'error', summary: `error: ${error}` });
      else if (value === null || value === undefined) rows.push({ ...base, status: 'empty', summary: 'no data' });
      else rows.push({ ...base, status: 'ok', summary: summarize(catalog, key, value) });
    }
    if (rows.length === before) {
      rows.push({ observable: result.observable, type: result.type, engine: '-', status: 'empty', summary: `no selected engine applies to ${result.type}` });
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
