/**
 * The preview of a file chosen or dropped on the analyze form (issue 35): what `POST
 * {prefix}extract` found in it, before anything is sent. One row per observable with a checkbox,
 * its type, its value and where it was found; every one checked but the team's own (`internal`:
 * under internal_domains or internal_networks), which start unchecked with the reason beside them.
 * Above the list the e-mail's SPF, DKIM and DMARC outcomes when the file is one; below it, what
 * the reader could not read (notes). Analyze sends only the checked values.
 *
 * Everything but the types comes from the file (its name, values, places, notes): text nodes only.
 */
import { el } from './dom.js';
import { emailAuthLine } from './email-auth.js';
import { foundInList } from './found-in.js';
import { formatBytes, plural } from './format.js';
import type { FilePreviewView } from '../../src/view/types.js';

export interface PreviewList {
  element: HTMLElement;
  /** The checked observables' values, in the file's order. */
  checked(): string[];
  /** Where the focus goes when the file needs fixing: the first checkbox, if any. */
  firstBox(): HTMLInputElement | null;
}

/** `changed` is called when a box is checked or unchecked. */
export function renderPreview(preview: FilePreviewView, changed: () => void = () => {}): PreviewList {
  const boxes: HTMLInputElement[] = [];
  const rows = preview.observables.map((observable, index) => {
    const id = `file-obs-${index}`;
    const box = el('input', {
      type: 'checkbox',
      id,
      class: 'file-obs',
      value: observable.value,
      'data-type': observable.type,
      'aria-describedby': [`${id}-where`, observable.internal ? `${id}-internal` : null].filter(Boolean).join(' '),
    });
    box.checked = !observable.internal;
    box.addEventListener('change', () => {
      updateCount();
      changed();
    });
    boxes.push(box);
    return el('tr', { 'data-value': observable.value, 'data-internal': observable.internal ? 'true' : null },
      el('td', { class: 'preview-check' }, box),
      el('td', null, el('span', { class: 'type' }, observable.type)),
      el('th', { scope: 'row', class: 'obs-cell' },
        el('label', { for: id }, el('code', { class: 'obs' }, observable.value)),
        observable.internal
          ? el('div', { class: 'internal-note', id: `${id}-internal` }, 'Not checked: the team\'s own (', observable.internal, ')')
          : null),
      el('td', { id: `${id}-where`, class: 'preview-where' }, foundInList(observable.found_in, { label: false }) ?? el('span', { class: 'muted' }, '—')));
  });

  const count = el('p', { class: 'hint', id: 'file-preview-count', 'aria-live': 'polite' });
  function updateCount(): void {
    const checked = boxes.filter((b) => b.checked).length;
    count.textContent = `${checked} of ${plural(boxes.length, 'observable')} checked: Analyze sends only the checked ones.`;
  }
  const setAll = (label: string, id: string, value: (box: HTMLInputElement, index: number) => boolean) => {
    const button = el('button', { type: 'button', class: 'link-button', id }, label);
    button.addEventListener('click', () => {
      boxes.forEach((box, index) => (box.checked = value(box, index)));
      updateCount();
      changed();
    });
    return button;
  };
  const internal = preview.observables.filter((o) => o.internal).length;
  const tools = boxes.length > 1 || internal > 0
    ? el('div', { class: 'preview-tools', role: 'group', 'aria-label': 'Check observables' },
        setAll('Check all', 'file-check-all', () => true),
        setAll('Uncheck all', 'file-uncheck-all', () => false),
        internal > 0 ? setAll('All but the team\'s own', 'file-check-external', (_, index) => !preview.observables[index]!.internal) : null)
    : null;

  const { name, kind, bytes } = preview.file;
  const element = el('section', { class: 'file-preview', id: 'file-preview', 'aria-labelledby': 'file-preview-title' },
    el('h2', { id: 'file-preview-title' },
      boxes.length === 0 ? 'No observable found in ' : `${plural(boxes.length, 'observable')} in `,
      el('span', { class: 'file-name' }, name),
      el('span', { class: 'muted file-kind' }, ` (${kind}, ${formatBytes(bytes)})`)),
    preview.email_auth ? emailAuthLine(preview.email_auth, 'file-email-auth') : null,
    boxes.length > 0 ? [count, tools] : null,
    boxes.length > 0
      ? el('div', { class: 'table-wrap preview-wrap', role: 'region', 'aria-label': 'Observables of the file', tabindex: 0 },
          el('table', { class: 'preview-table' },
            el('thead', null, el('tr', null,
              el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Analyze')),
              el('th', { scope: 'col' }, 'Type'),
              el('th', { scope: 'col' }, 'Observable'),
              el('th', { scope: 'col' }, 'Found in'))),
            el('tbody', null, rows)))
      : null,
    preview.notes.length > 0
      ? el('div', { class: 'file-notes', id: 'file-notes' },
          el('h3', null, 'Notes'),
          el('ul', null, preview.notes.map((note) => el('li', null, note))))
      : null);
  updateCount();
  return {
    element,
    checked: () => boxes.filter((b) => b.checked).map((b) => b.value),
    firstBox: () => boxes[0] ?? null,
  };
}
