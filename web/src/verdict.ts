/**
 * The verdict of an observable as the pages show it: a badge whose text says it (colour and a
 * sign only add to the word: red malicious, amber suspicious, green clean, grey unknown), and
 * the reasons, one line per engine that contributed.
 *
 * A reason comes from the server as `<engine key>: <reason>` (src/verdict/verdict.ts), the key
 * being the result's key (`provider_24`); the page names the engine as its column and its card
 * section do (`VirusTotal`), so one screen never gives one service two names. Only what is drawn
 * changes: the API's results and reasons keep the keys.
 */
import { el } from './dom.js';
import type { AnalysisView, VerdictName } from '../../src/view/types.js';

export const VERDICT_NAMES: readonly VerdictName[] = ['malicious', 'suspicious', 'clean', 'unknown'];

const SIGN: Record<VerdictName, string> = { malicious: '✖', suspicious: '!', clean: '✓', unknown: '?' };

/** Most severe first: the order of a sort by verdict. */
export const VERDICT_RANK: Record<VerdictName, number> = { malicious: 0, suspicious: 1, clean: 2, unknown: 3 };

/** `extraClass`: e.g. `verdict-small`, the badge of an engine's risk signal inside a table cell. */
export function verdictBadge(verdict: VerdictName, title?: string, extraClass?: string): HTMLElement {
  return el('span', { class: `verdict verdict-${verdict}${extraClass ? ` ${extraClass}` : ''}`, 'data-verdict': verdict, title: title ?? null },
    el('span', { class: 'verdict-sign', 'aria-hidden': 'true' }, SIGN[verdict]), ' ', verdict);
}

/** Engine key → the label its column and card section show, for the engines of an analysis. */
export type EngineLabels = ReadonlyMap<string, string>;

export function engineLabels(view: Pick<AnalysisView, 'engines'>): EngineLabels {
  return new Map(view.engines.map((engine) => [engine.key, engine.label]));
}

/** `provider_24: 9/94 engines flag it` → `VirusTotal: 9/94 engines flag it`; a key it does not know stays. */
export function reasonText(reason: string, labels: EngineLabels): string {
  const colon = reason.indexOf(': ');
  if (colon <= 0) return reason;
  const label = labels.get(reason.slice(0, colon));
  return label === undefined ? reason : `${label}${reason.slice(colon)}`;
}

/** The reasons as a list, each naming its engine by label, or nothing when there are none. */
export function reasonsList(reasons: readonly string[], labels: EngineLabels): HTMLElement | null {
  if (reasons.length === 0) return null;
  return el('ul', { class: 'reasons' }, reasons.map((reason) => el('li', { 'data-reason': reason }, reasonText(reason, labels))));
}
