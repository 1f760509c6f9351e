/**
 * Results shaped for a model: per observable its verdict, the reasons and one short line per
 * engine (the `analyze` tool), or the spec's result objects cut to a size a model can take (the
 * `get_results` tool), with a line saying what was left out and how to ask for it.
 */
import { engineKeys, engineOutcome } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import { verdictOf } from '../verdict/verdict.js';

/** One observable in brief. */
export interface ObservableBrief {
  observable: string;
  type: string;
  verdict: string;
  reasons: string[];
  /** Engine key → one line: its summary, `no data`, `does not apply to ...` or `error: ...`. */
  engines: Record<string, string>;
}

const LINE_MAX = 200;

export function briefOf(result: ObservableResult, catalog: Catalog): ObservableBrief {
  const { verdict, reasons } = verdictOf(result, catalog);
  const engines: Record<string, string> = {};
  for (const key of engineKeys(result)) {
    const line = engineOutcome(result, key, catalog).summary.replace(/\s+/g, ' ').trim();
    engines[key] = line.length > LINE_MAX ? `${line.slice(0, LINE_MAX - 1)}…` : line;
  }
  return { observable: result.observable, type: result.type, verdict, reasons: [...reasons], engines };
}

/** The briefs as text for the model: a block per observable. */
export function briefText(briefs: readonly ObservableBrief[]): string {
  return briefs.map((b) => [
    `${b.observable} (${b.type}): ${b.verdict}`,
    ...b.reasons.map((r) => `  why: ${r}`),
    ...Object.entries(b.engines).map(([key, line]) => `  ${key}: ${line}`),
  ].join('\n')).join('\n\n');
}

export interface CutResults {
  results: unknown[];
  /** Set when something was left out: what, and how to ask for it (one line). */
  leftOut: string | undefined;
}

/**
 * The results, whole while they fit in `maxChars` of JSON. An observable that does not fit whole
 * keeps its verdict-free skeleton with each engine answer too large replaced by a note; the
 * observables after the limit are named in the line saying how to ask for them.
 */
export function cutResults(results: readonly ObservableResult[], maxChars: number, id: string): CutResults {
  const shown: unknown[] = [];
  let used = 2;
  let trimmed: string[] = [];
  let tooLarge: string[] = [];
  let index = 0;
  for (; index < results.length; index++) {
    const result = results[index]!;
    const whole = JSON.stringify(result);
    if (used + whole.length + 1 <= maxChars) {
      shown.push(result);
      used += whole.length + 1;
      continue;
    }
    // The first that does not fit: its engine answers, largest first, become notes until it fits.
    const room = maxChars - used - 1;
    const slim: Record<string, unknown> = { ...result };
    const keys = engineKeys(result).sort((a, b) => JSON.stringify(result[b] ?? null).length - JSON.stringify(result[a] ?? null).length);
    const cut: string[] = [];
    const alone: string[] = [];
    for (const key of keys) {
      if (JSON.stringify(slim).length <= room) break;
      const size = JSON.stringify(result[key] ?? null).length;
      // An answer that does not fit even asked for alone cannot be had from get_results: say so
      // rather than send the model asking for it again and again.
      if (JSON.stringify(filterResults([result], undefined, [key])).length + 1 > maxChars) {
        slim[key] = `left out (${size} characters): larger than mcp_max_result_chars (${maxChars}) even alone; the analysis's web page shows it`;
        alone.push(key);
      } else {
        slim[key] = `left out (${size} characters): get_results with observables ["${result.observable}"] and engines ["${key}"]`;
        cut.push(key);
      }
    }
    if (JSON.stringify(slim).length <= room && (shown.length === 0 || cut.length + alone.length < keys.length)) {
      shown.push(slim);
      used += JSON.stringify(slim).length + 1;
      trimmed = cut.map((key) => `${result.observable} ${key}`);
      tooLarge = alone.map((key) => `${result.observable} ${key}`);
      index++;
    }
    break;
  }
  const rest = results.slice(index).map((r) => r.observable);
  const parts: string[] = [];
  if (tooLarge.length > 0) parts.push(`the answers of ${tooLarge.join(', ')} (larger than the limit even alone: the analysis's web page shows them)`);
  if (trimmed.length > 0) parts.push(`the answers of ${trimmed.join(', ')} (too large)`);
  if (rest.length > 0) {
    const named = rest.length > 20 ? `${rest.slice(0, 20).join(', ')} and ${rest.length - 20} more` : rest.join(', ');
    parts.push(`${rest.length} observable(s): ${named}`);
  }
  const ask = trimmed.length > 0 || rest.length > 0 ? ` Ask for them with get_results {"analysis_id": "${id}", "observables": [...], "engines": [...]}.` : '';
  const leftOut = parts.length === 0 ? undefined
    : `Left out to stay within ${maxChars} characters (setting mcp_max_result_chars): ${parts.join('; ')}.${ask}`;
  return { results: shown, leftOut };
}

/** The results restricted to these observables (as written, case-insensitive) and engine keys. */
export function filterResults(results: readonly ObservableResult[], observables: readonly string[] | undefined, engines: readonly string[] | undefined): ObservableResult[] {
  const wanted = observables && new Set(observables.map((o) => o.trim().toLowerCase()));
  const keys = engines && new Set(engines.map((e) => e.trim().toLowerCase()));
  return results
    .filter((r) => !wanted || wanted.has(r.observable.toLowerCase()))
    .map((r) => {
      if (!keys) return r;
      const kept: ObservableResult = { observable: r.observable, type: r.type, reversed_success: r.reversed_success };
      if (r.reversed_ip !== undefined) kept.reversed_ip = r.reversed_ip;
      for (const key of engineKeys(r)) if (keys.has(key.toLowerCase())) kept[key] = r[key];
      const errors = Object.entries(r.errors ?? {}).filter(([key]) => keys.has(key.toLowerCase()));
      if (errors.length > 0) kept.errors = Object.fromEntries(errors);
      return kept;
    });
}
