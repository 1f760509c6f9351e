/** One engine's outcome for one observable, and the flat (observable, engine) rows tables show. */
import type { Catalog } from '../engine/catalog.js';
import { RESERVED_KEYS, type ObservableResult } from '../runner/result.js';
import { verdictOf, type ObservableVerdict, type Verdict } from '../verdict/verdict.js';

export type OutcomeStatus = 'ok' | 'empty' | 'error' | 'not_applicable';

export interface Outcome {
  status: OutcomeStatus;
  /** One line: the engine's summary, the error, "no data"... */
  summary: string;
}

export interface ResultRow extends Outcome {
  observable: string;
  type: string;
  /** The engine's result key: the name the caller used (an id or a service alias); `-` for none. */
  engine: string;
  /**
   * The engine's service name (`ipapi` for provider_11), for headings that would otherwise show an
   * opaque id; the key itself for an engine the catalog does not know.
   */
  service?: string;
  /** For a domain or URL, the address its IP-only engines ran on (the result's `reversed_ip`). */
  reversedIp?: string | undefined;
  status: 'ok' | 'empty' | 'error';
  /** The observable's verdict (the same on every row of the observable). */
  verdict: Verdict;
  /** Its reasons, `<engine key>: <reason>`, most severe first (one array shared by its rows). */
  reasons: readonly string[];
}

/** The engine keys of a result (its selected engines), in order. */
export function engineKeys(result: ObservableResult): string[] {
  return Object.keys(result).filter((key) => !RESERVED_KEYS.has(key));
}

/**
 * What the engine under `key` gave for this observable. `not_applicable` when it does not take the
 * observable's type (directly or on the resolved IP) and did not fail.
 */
export function engineOutcome(result: ObservableResult, key: string, catalog: Catalog): Outcome {
  switch (engineStatus(result, key, catalog)) {
    case 'error': return { status: 'error', summary: `error: ${result.errors![key]}` };
    case 'not_applicable': return { status: 'not_applicable', summary: `does not apply to ${result.type}` };
    case 'empty': return { status: 'empty', summary: 'no data' };
    case 'ok': return { status: 'ok', summary: summarize(catalog, key, result[key]) };
  }
}

/** engineOutcome's status alone (no summary made). */
export function engineStatus(result: ObservableResult, key: string, catalog: Catalog): OutcomeStatus {
  if (result.errors?.[key] !== undefined) return 'error';
  const engine = catalog.find(key);
  const applies = !engine || engine.types.includes(result.type) || (engine.reversedIp && (result.type === 'FQDN' || result.type === 'URL'));
  if (!applies) return 'not_applicable';
  const value = result[key];
  return value === null || value === undefined ? 'empty' : 'ok';
}

/** Rows of every engine that applies to its observable's type (directly or on the resolved IP). */
export function resultRows(results: readonly (ObservableResult | null)[], catalog: Catalog): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const result of results) {
    if (!result) continue;
    const before = rows.length;
    const { verdict, reasons } = observableVerdict(result, catalog);
    const reversedIp = typeof result.reversed_ip === 'string' && result.reversed_ip !== '' ? result.reversed_ip : undefined;
    const common = { observable: result.observable, type: result.type, verdict, reasons, reversedIp };
    for (const key of engineKeys(result)) {
      const outcome = engineOutcome(result, key, catalog);
      if (outcome.status === 'not_applicable') continue;
      rows.push({ ...common, engine: key, service: catalog.find(key)?.service ?? key, status: outcome.status, summary: outcome.summary });
    }
    if (rows.length === before) {
      rows.push({ ...common, engine: '-', service: '-', status: 'empty', summary: `no selected engine applies to ${result.type}` });
    }
  }
  return rows;
}

/** `verdictOf`, never throwing: a result nothing can read is `unknown`. */
export function observableVerdict(result: ObservableResult, catalog: Catalog): ObservableVerdict {
  try {
    return verdictOf(result, catalog);
  } catch {
    return { verdict: 'unknown', reasons: [] };
  }
}

function summarize(catalog: Catalog, key: string, value: unknown): string {
  const engine = catalog.find(key);
  try {
    return engine ? engine.summary(value) || 'result' : 'result';
  } catch {
    return 'result';
  }
}
