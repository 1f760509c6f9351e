/**
 * One risk verdict per observable, from the evidence each engine's result gives.
 *
 * Every engine file may declare `evidence(result)` next to its summary: what its answer says about
 * the observable (`malicious`, `suspicious` or `clean`, with a one-line reason such as
 * "54/76 engines flag it"), or nothing when its answer does not judge (geolocation, DNS records).
 * `evidence` also sees `null` (the engine ran and had nothing to report): a lookup in a threat
 * list that finds nothing is itself evidence of `clean`.
 *
 * The verdict of an observable is the most severe evidence (malicious > suspicious > clean);
 * `unknown` when no engine that can judge ran, or every one failed. An engine error never counts,
 * least of all as clean. `reasons` has one line per engine that contributed, most severe first.
 */
import type { Catalog } from '../engine/catalog.js';
import type { Evidence } from '../engine/contract.js';
import type { ObservableMark, ObservableResult } from '../runner/result.js';
import { RESERVED_KEYS } from '../runner/result.js';

export const VERDICTS = ['malicious', 'suspicious', 'clean', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface ObservableVerdict {
  verdict: Verdict;
  /** `<engine key>: <reason>`, one per engine that contributed, most severe first. */
  reasons: string[];
  /**
   * When an analyst's mark decided the verdict (issue 38): the verdict the engines (or the
   * allowlist) gave, kept beside it. Absent otherwise.
   */
  computed?: { verdict: Verdict; reasons: string[] };
}

const SEVERITY: Record<Verdict, number> = { malicious: 3, suspicious: 2, clean: 1, unknown: 0 };

/** The most severe of two verdicts. */
export function worse(a: Verdict, b: Verdict): Verdict {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}

/**
 * What the engine under `key` says about this observable, or undefined when it says nothing: it
 * failed, it does not take the observable's type (directly, or on the resolved IP: it was never
 * asked, its null says nothing), it has no rule, or its rule cannot read the answer. The one
 * reading of evidence: the verdict, the pages' highlights and the graph all use it.
 */
export function evidenceOf(result: ObservableResult, key: string, catalog: Catalog): Evidence | undefined {
  if (RESERVED_KEYS.has(key) || result.errors?.[key] !== undefined) return undefined;
  const engine = catalog.find(key);
  if (!engine?.evidence) return undefined;
  const applies = engine.types.includes(result.type) || (engine.reversedIp && (result.type === 'FQDN' || result.type === 'URL'));
  const value = result[key];
  if (!applies || value === undefined) return undefined;
  try {
    return engine.evidence(value as never);
  } catch {
    return undefined; // an answer the rule cannot read judges nothing
  }
}

/**
 * What each engine of the result says about the observable, by result key, in the result's order;
 * the engines that say nothing (see `evidenceOf`) are left out. Computed once per result, it gives
 * the verdict (`verdictFrom`), the cells' highlights and the graph's flags.
 */
export function evidenceByKey(result: ObservableResult, catalog: Catalog): Map<string, Evidence> {
  const found = new Map<string, Evidence>();
  for (const key of Object.keys(result)) {
    const evidence = evidenceOf(result, key, catalog);
    if (evidence) found.set(key, evidence);
  }
  return found;
}

/** The verdict from the engines' evidence (`evidenceByKey`): the most severe, reasons most severe first. */
export function verdictFrom(evidence: ReadonlyMap<string, Evidence>): ObservableVerdict {
  const found = [...evidence].sort(([, a], [, b]) => SEVERITY[b.level] - SEVERITY[a.level]);
  const verdict = found.reduce<Verdict>((v, [, e]) => worse(v, e.level), 'unknown');
  return { verdict, reasons: found.map(([key, e]) => `${key}: ${e.reason}`) };
}

/** The verdict of one observable's result, from the engines of `catalog` (by result key). */
export function verdictOf(result: ObservableResult, catalog: Catalog): ObservableVerdict {
  // On the allowlist (issue 38): clean, by who put it there and why.
  const computed = result.allowlisted
    ? { verdict: 'clean' as const, reasons: [`allowlisted by ${result.allowlisted.by}: ${result.allowlisted.reason}`] }
    : verdictFrom(evidenceByKey(result, catalog));
  return result.mark ? markedVerdict(result.mark, computed) : computed;
}

/**
 * An analyst's mark decides (issue 38): its verdict (`false_positive`: clean), the reason "marked
 * malicious by alice on 2026-11-20: red-team C2", and the engines' verdict kept as `computed`.
 */
export function markedVerdict(mark: ObservableMark, computed: ObservableVerdict): ObservableVerdict {
  return {
    verdict: mark.verdict === 'false_positive' ? 'clean' : mark.verdict,
    reasons: [markReason(mark)],
    computed: { verdict: computed.verdict, reasons: computed.reasons },
  };
}

/** "marked false positive by alice on 2026-11-20: the CDN of our vendor". */
export function markReason(mark: Pick<ObservableMark, 'verdict' | 'by' | 'at' | 'note'>): string {
  return `marked ${mark.verdict.replace('_', ' ')} by ${mark.by} on ${mark.at.slice(0, 10)}: ${mark.note}`;
}

/**
 * A verdict as it is stored beside its result (`analysis_results.verdict`, Redis's verdicts hash):
 * compact JSON, `{"verdict":"malicious","reasons":["vt: 54/76 engines flag it"]}`. Worked out once
 * as the observable finishes; every reader takes it from there (`parseVerdict`).
 */
export function verdictText(judged: ObservableVerdict): string {
  return JSON.stringify(judged.computed
    ? { verdict: judged.verdict, reasons: judged.reasons, computed_verdict: judged.computed }
    : { verdict: judged.verdict, reasons: judged.reasons });
}

/** A stored verdict (`verdictText`) read back; undefined when none was stored (rows of older versions) or it cannot be read. */
export function parseVerdict(text: string | null | undefined): ObservableVerdict | undefined {
  if (typeof text !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const judged = verdictIn(value);
  if (!judged) return undefined;
  const computed = verdictIn((value as { computed_verdict?: unknown }).computed_verdict);
  return computed ? { ...judged, computed } : judged;
}

/** `{ verdict, reasons }` read from a parsed value, or undefined when it is none. */
function verdictIn(value: unknown): { verdict: Verdict; reasons: string[] } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { verdict, reasons } = value as { verdict?: unknown; reasons?: unknown };
  if (typeof verdict !== 'string' || !(VERDICTS as readonly string[]).includes(verdict)) return undefined;
  if (!Array.isArray(reasons) || !reasons.every((reason) => typeof reason === 'string')) return undefined;
  return { verdict: verdict as Verdict, reasons: reasons as string[] };
}
