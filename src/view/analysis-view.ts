/**
 * The live view of an analysis the results page polls: one row per observable (with its verdict,
 * reasons, what earlier analyses said of it and, for a file's, where it was found), one cell per
 * engine; and the files it was made from with an e-mail's SPF, DKIM and DMARC outcomes (issue 35),
 * for the top of the page.
 */
import type { AnalysisRecord } from '../store/analysis-store.js';
import { engineOutcome, isSeen } from '../analysis/rows.js';
import type { Evidence } from '../engine/contract.js';
import { evidenceByKey, verdictFrom } from '../verdict/verdict.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableMark, ObservableResult } from '../runner/result.js';
import { genericDetails } from './details.js';
import { observableGraph } from './graph-view.js';
import { safeHref } from '../lookup/fields.js';
import type { AnalysisSource } from '../files/types.js';
import type { AnalysisView, CellView, DetailFieldView, EvidenceView, MarkView, ObservableView, EmailAuthView, SourceView } from './types.js';

/**
 * `have`: indices of finished observables the page already holds; they are left out of
 * `observables` and are null in `results`, so a poll sends only what changed. `marksNow`: the
 * marks on its observables now (issue 38), by the value the record holds; one its result does not
 * carry becomes `mark_now` (the analysis is not rewritten: its page says a mark exists since).
 */
export function analysisView(record: AnalysisRecord, catalog: Catalog, have: ReadonlySet<number> = new Set(), marksNow?: ReadonlyMap<string, MarkView>): AnalysisView {
  const skip = (index: number) => have.has(index) && record.results[index] != null;
  return {
    id: record.id,
    created_at: record.created_at,
    finished_at: record.finished_at,
    duration_ms: record.duration_ms,
    complete: record.complete,
    ignore_cache: record.ignore_cache,
    started_by: record.started_by ?? null,
    tlp: record.tlp ?? null,
    pap: record.pap ?? null,
    progress: record.progress,
    engines: record.engines.map((key) => ({ key, label: catalog.find(key)?.label ?? key })),
    observables: record.observables.flatMap((observable, index) => {
      if (skip(index)) return [];
      const result = record.results[index] ?? null;
      if (!result) {
        return {
          index,
          observable: observable.value,
          type: observable.type,
          found_in: observable.found_in ?? [],
          reversed_ip: null,
          done: false,
          verdict: null,
          reasons: [],
          cells: record.engines.map((engine) => ({ engine, status: 'pending', summary: 'running…', fields: [] })),
          seen: null,
          mark: null,
          computed_verdict: null,
        } satisfies ObservableView;
      }
      // Each engine's evidence, read once: the cells' highlights and the graph's flags. The verdict
      // is the one stored with the result as it finished; only a row of an older version, which
      // has none, gets it from this evidence.
      const evidence = evidenceByKey(result, catalog);
      const judged = record.result_verdicts?.[index] ?? verdictFrom(evidence);
      const { verdict, reasons } = judged;
      return {
        index,
        observable: result.observable,
        type: result.type,
        found_in: result.found_in ?? observable.found_in ?? [],
        reversed_ip: result.reversed_ip ?? null,
        done: true,
        verdict,
        reasons,
        cells: record.engines.map((key) => cell(result, key, catalog, evidence.get(key))),
        graph: observableGraph(result, catalog, { verdict, evidence }),
        seen: isSeen(result.seen) ? result.seen : null,
        mark: result.mark ?? null,
        computed_verdict: judged.computed ?? null,
        ...markSince(result.mark, marksNow?.get(observable.value)),
      } satisfies ObservableView;
    }),
    results: record.results.map((result, index) => (skip(index) ? null : result)),
    source: sourceView(record.source),
  };
}

/** `mark_now` when the mark on the observable now is not the one its result carries. */
function markSince(carried: ObservableMark | undefined, now: MarkView | undefined): { mark_now?: MarkView } {
  if (!now || (carried && carried.at === now.at && carried.by === now.by && carried.verdict === now.verdict)) return {};
  return { mark_now: { verdict: now.verdict, note: now.note, by: now.by, at: now.at, expires: now.expires } };
}

/** The record's files (formats, sizes) and e-mail authentication for the page; null for a pasted text. */
function sourceView(source: AnalysisSource | undefined): SourceView | null {
  if (!source || source.files.length === 0) return null;
  const auth = source.email_auth;
  let email_auth: EmailAuthView | null = null;
  if (auth) {
    const known = (['spf', 'dkim', 'dmarc', 'authserv_id'] as const).filter((key) => typeof auth[key] === 'string');
    if (known.some((key) => key !== 'authserv_id')) email_auth = Object.fromEntries(known.map((key) => [key, auth[key]])) as EmailAuthView;
  }
  return { files: source.files.map((f) => ({ kind: f.kind, ext: f.ext, bytes: f.bytes })), email_auth };
}

/**
 * `found`: what the engine's answer says (src/verdict/verdict.ts); none for an engine that does not
 * judge, failed, or does not apply.
 */
function cell(result: ObservableResult, key: string, catalog: Catalog, found: Evidence | undefined): CellView {
  const outcome = engineOutcome(result, key, catalog);
  const evidence: EvidenceView | null = found ? { level: found.level, reason: found.reason } : null;
  if (outcome.status !== 'ok') return { engine: key, ...outcome, fields: [], evidence };
  return { engine: key, ...outcome, fields: details(result, key, catalog), evidence };
}

/** The engine's own card fields when it declares them, else the result's fields; hrefs are re-checked. */
function details(result: ObservableResult, key: string, catalog: Catalog): DetailFieldView[] {
  const engine = catalog.find(key);
  const value = result[key];
  let fields: DetailFieldView[];
  try {
    fields = engine?.details ? engine.details(value, result.reversed_ip ?? result.observable) : genericDetails(value);
  } catch {
    fields = genericDetails(value);
  }
  return fields.map((f) => {
    const href = safeHref(f.href);
    return href ? { label: f.label, value: f.value, href } : { label: f.label, value: f.value };
  });
}

/** The `?have=` parameter: a bitmap (bit i of byte i>>3 = observable i) in base64url. */
export function parseHave(param: string | undefined): Set<number> {
  const have = new Set<number>();
  if (!param || !/^[A-Za-z0-9_-]{1,20000}$/.test(param)) return have;
  const bytes = Buffer.from(param, 'base64url');
  bytes.forEach((byte, i) => {
    for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) have.add(i * 8 + bit);
  });
  return have;
}
