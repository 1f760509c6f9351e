/** One engine's outcome for one observable, and the flat (observable, engine) rows tables show. */
import type { Catalog } from '../engine/catalog.js';
import { RESERVED_KEYS, type ObservableResult, type SeenBefore } from '../runner/result.js';
import { parseVerdict, verdictOf, type ObservableVerdict, type Verdict } from '../verdict/verdict.js';

/** `withheld`: not sent the observable (its TLP/PAP: the result's `withheld`), neither an answer nor a failure. */
export type OutcomeStatus = 'ok' | 'empty' | 'error' | 'withheld' | 'not_applicable';

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
  status: 'ok' | 'empty' | 'error' | 'withheld';
  /** The observable's verdict (the same on every row of the observable). */
  verdict: Verdict;
  /** Its reasons, `<engine key>: <reason>`, most severe first (one array shared by its rows). */
  reasons: readonly string[];
  /** Where it was found in its file (the result's `found_in`, issue 35); absent for a pasted text. */
  foundIn?: readonly string[] | undefined;
  /**
   * When an analyst's mark decided the verdict (issue 38): the engines' verdict, and whether the
   * mark says false positive (the engines' verdict is then shown struck through).
   */
  computed?: { verdict: Verdict; falsePositive: boolean } | undefined;
  /**
   * What the earlier analyses that held it said (the result's `seen`, issue 38), as one line: `seen
   * 3 times since 2026-11-02, last malicious`. Absent when none did or it is not known.
   */
  seen?: string | undefined;
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
    case 'withheld': return { status: 'withheld', summary: `withheld: ${result.withheld![key]}` };
    case 'not_applicable': return { status: 'not_applicable', summary: `does not apply to ${result.type}` };
    case 'empty': return { status: 'empty', summary: 'no data' };
    case 'ok': return { status: 'ok', summary: summarize(catalog, key, result[key]) };
  }
}

/** engineOutcome's status alone (no summary made). */
export function engineStatus(result: ObservableResult, key: string, catalog: Catalog): OutcomeStatus {
  if (result.errors?.[key] !== undefined) return 'error';
  if (result.withheld?.[key] !== undefined) return 'withheld';
  const engine = catalog.find(key);
  const applies = !engine || engine.types.includes(result.type) || (engine.reversedIp && (result.type === 'FQDN' || result.type === 'URL'));
  if (!applies) return 'not_applicable';
  const value = result[key];
  return value === null || value === undefined ? 'empty' : 'ok';
}

/**
 * Rows of every engine that applies to its observable's type (directly or on the resolved IP),
 * each observable's verdict worked out here (`observableRows` takes one already known).
 */
export function resultRows(results: readonly (ObservableResult | null)[], catalog: Catalog): ResultRow[] {
  return results.flatMap((result) => (result ? observableRows(result, catalog, observableVerdict(result, catalog)) : []));
}

/** The rows of one observable's result (see `resultRows`), with its verdict `judged` (the stored one). */
export function observableRows(result: ObservableResult, catalog: Catalog, judged: ObservableVerdict): ResultRow[] {
  const rows: ResultRow[] = [];
  const { verdict, reasons } = judged;
  const reversedIp = typeof result.reversed_ip === 'string' && result.reversed_ip !== '' ? result.reversed_ip : undefined;
  const common = { observable: result.observable, type: result.type, verdict, reasons, reversedIp, ...(result.found_in?.length ? { foundIn: result.found_in } : {}), ...(isSeen(result.seen) ? { seen: seenText(result.seen) } : {}),
    ...(judged.computed ? { computed: { verdict: judged.computed.verdict, falsePositive: result.mark?.verdict === 'false_positive' } } : {}) };
  for (const key of engineKeys(result)) {
    const outcome = engineOutcome(result, key, catalog);
    if (outcome.status === 'not_applicable') continue;
    rows.push({ ...common, engine: key, service: catalog.find(key)?.service ?? key, status: outcome.status, summary: outcome.summary });
  }
  if (rows.length === 0) {
    rows.push({ ...common, engine: '-', service: '-', status: 'empty', summary: `no selected engine applies to ${result.type}` });
  }
  return rows;
}

/**
 * What earlier analyses said of an observable (issue 38), as every surface says it: `seen 3 times
 * since 2026-11-02, last malicious`; `seen once, on 2026-11-02, clean` for one.
 */
export function seenText(seen: SeenBefore): string {
  const day = (iso: string) => iso.slice(0, 10);
  if (seen.count === 1) return `seen once, on ${day(seen.first)}, ${seen.last_verdict}`;
  return `seen ${seen.count} times since ${day(seen.first)}, last ${seen.last_verdict}`;
}

/** A result's `seen` as oas writes it (a remote server's answer may hold anything there): dates as ISO 8601. */
export function isSeen(value: unknown): value is SeenBefore {
  if (typeof value !== 'object' || value === null) return false;
  const seen = value as Record<string, unknown>;
  const date = (text: unknown) => typeof text === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(text);
  return typeof seen['count'] === 'number' && Number.isInteger(seen['count']) && seen['count'] > 0 && date(seen['first']) && date(seen['last'])
    && typeof seen['last_verdict'] === 'string' && typeof seen['last_analysis_id'] === 'string';
}

/**
 * `verdictOf`, never throwing: a result nothing can read is `unknown`. Worked out once per result,
 * as its observable finishes (src/analysis/launch.ts, src/scale/worker.ts); readers take the
 * stored one (`storedVerdict`).
 */
export function observableVerdict(result: ObservableResult, catalog: Catalog): ObservableVerdict {
  try {
    return verdictOf(result, catalog);
  } catch {
    return { verdict: 'unknown', reasons: [] };
  }
}

/**
 * The verdict stored beside a result (`StoredResult.verdict`); for a row written by an older
 * version, which has none, worked out from the result.
 */
export function storedVerdict(stored: string | null | undefined, result: ObservableResult, catalog: Catalog): ObservableVerdict {
  return parseVerdict(stored) ?? observableVerdict(result, catalog);
}

function summarize(catalog: Catalog, key: string, value: unknown): string {
  const engine = catalog.find(key);
  try {
    return engine ? engine.summary(value) || 'result' : 'result';
  } catch {
    return 'result';
  }
}
