/**
 * Where an observable was found in the file an analysis was made from (its `found_in`, issue 35:
 * `Received header 2`, `link in HTML body ("View your invoice")`, `row 14, column ip`), as a short
 * list: in the form's preview, on each card and under the observable in the table. The places
 * quote the file (a link's text, an attachment's name): text nodes only, never markup.
 */
import { el } from './dom.js';

/** The places as a list (`Found in:` read before it by screen readers), or null when there are none. */
export function foundInList(places: readonly string[], options: { id?: string; label?: boolean } = {}): HTMLElement | null {
  if (places.length === 0) return null;
  return el('div', { class: 'found-in', id: options.id ?? null },
    options.label === false ? null : el('span', { class: 'found-in-label' }, 'Found in: '),
    el('ul', { class: 'found-in-list' }, places.map((place) => el('li', null, place))));
}

/** The places on one line, for titles and the text filter. */
export function foundInText(places: readonly string[]): string {
  return places.join('; ');
}
