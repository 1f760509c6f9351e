/**
 * "Seen before" (issue 38) on the results page: under an observable, how often the store's earlier
 * analyses held it, since when and what it was the last time, linked to the page listing them
 * (`/observables/<value>`). Text nodes only: the verdict and ids come from the server's JSON.
 */
import { el } from './dom.js';
import type { SeenView } from '../../src/view/types.js';

/** The address of the page that lists the analyses that held `value`. */
export function observablePage(value: string): string {
  return `/observables/${encodeURIComponent(value)}`;
}

/** `Seen 3 times since 2026-11-02, last malicious`, as the CLI says it; `Seen once, on 2026-11-02, clean` for one. */
export function seenWords(seen: SeenView): string {
  const day = (iso: string) => iso.slice(0, 10);
  return seen.count === 1
    ? `Seen once, on ${day(seen.first)}, ${seen.last_verdict}`
    : `Seen ${seen.count} times since ${day(seen.first)}, last ${seen.last_verdict}`;
}

/** The line under an observable, or null when no earlier analysis held it. */
export function seenNote(seen: SeenView | null | undefined, value: string): HTMLElement | null {
  if (!seen) return null;
  return el('div', { class: 'seen', 'data-seen-count': seen.count, 'data-seen-last-verdict': seen.last_verdict },
    el('a', { href: observablePage(value), title: `The analyses that held ${value}, newest first` }, seenWords(seen)));
}
