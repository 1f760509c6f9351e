/**
 * The verdict of an observable as the pages show it: a badge whose text says it (colour and a
 * sign only add to the word: red malicious, amber suspicious, green clean, grey unknown), and
 * the reasons, one line per engine that contributed.
 */
import { el } from './dom.js';
import type { VerdictName } from '../../src/view/types.js';

export const VERDICT_NAMES: readonly VerdictName[] = ['malicious', 'suspicious', 'clean', 'unknown'];

const SIGN: Record<VerdictName, string> = { malicious: '✖', suspicious: '!', clean: '✓', unknown: '?' };

/** Most severe first: the order of a sort by verdict. */
export const VERDICT_RANK: Record<VerdictName, number> = { malicious: 0, suspicious: 1, clean: 2, unknown: 3 };

/** `extraClass`: e.g. `verdict-small`, the badge of an engine's risk signal inside a table cell. */
export function verdictBadge(verdict: VerdictName, title?: string, extraClass?: string): HTMLElement {
  return el('span', { class: `verdict verdict-${verdict}${extraClass ? ` ${extraClass}` : ''}`, 'data-verdict': verdict, title: title ?? null },
    el('span', { class: 'verdict-sign', 'aria-hidden': 'true' }, SIGN[verdict]), ' ', verdict);
}

/** The reasons as a list, or nothing when there are none. */
export function reasonsList(reasons: readonly string[]): HTMLElement | null {
  if (reasons.length === 0) return null;
  return el('ul', { class: 'reasons' }, reasons.map((reason) => el('li', null, reason)));
}
