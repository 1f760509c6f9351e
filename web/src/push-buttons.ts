/**
 * The results page's "Send to ..." buttons (issue 37): one per platform the server has configured
 * as a push target (GET /ui/push-targets: names only, never a URL or a key), shown once the
 * analysis is complete. A click posts `{ "target" }` (and `"all": true` with the "all observables"
 * box) to POST {prefix}analyses/<id>/push, as any client of the API does: the server's default
 * threshold (suspicious and malicious) unless the box is checked. While it runs the button says
 * "Sending…" and is disabled; then one line under the buttons says what the platform made (the
 * answer's `message`, and its page as a link when that is an http(s) address) or why it failed.
 *
 * A viewer sees the buttons disabled with a note saying why, as the analyze form tells a viewer
 * Analyze is disabled. Everything the answer holds may quote the platform: it goes in as text.
 */
import { apiPath, getJson, postJson } from './api.js';
import { el, replace } from './dom.js';
import type { PushAnswerView, PushTargetName, PushTargetsView } from '../../src/view/types.js';

export interface PushButtons {
  /** The section to place on the page (hidden until there is something to show). */
  element: HTMLElement;
  /** Told on every poll whether the analysis is complete: the buttons show once it is. */
  update(complete: boolean): void;
}

const NOTE_ID = 'push-role-note';

/** `link` when it is an http(s) address, else null (a `javascript:` link from a platform is text at most). */
export function safeLink(link: string | undefined): string | null {
  if (!link) return null;
  try {
    const url = new URL(link);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

export function pushButtons(analysisId: string): PushButtons {
  const element = el('section', { class: 'push', id: 'push', 'aria-label': 'Send to a platform', hidden: true });
  let complete = false;
  let view: PushTargetsView | null = null;
  let drawn = false;

  // An older server (404) or a failed read: no buttons, the rest of the page as before.
  void getJson<PushTargetsView>('/ui/push-targets').then((answer) => {
    view = answer;
    draw();
  }, () => undefined);

  function draw(): void {
    if (drawn || !complete || !view || view.targets.length === 0) return;
    drawn = true;
    const { targets, can_push: canPush, role } = view;
    const all = el('input', { type: 'checkbox', id: 'push-all', disabled: !canPush });
    const lines = el('div', { class: 'push-lines', id: 'push-lines', role: 'status', 'aria-live': 'polite' });
    const describe = (label: string) => all.checked ? `Send every observable of this analysis to ${label}, whatever its verdict` : `Send the suspicious and malicious observables of this analysis to ${label}`;
    const buttons = targets.map(({ id, label }) => {
      const button = el('button', { type: 'button', class: 'push-button', id: `push-${id}`, 'data-target': id, title: describe(label), disabled: !canPush, 'aria-describedby': canPush ? null : NOTE_ID }, `Send to ${label}`);
      button.addEventListener('click', () => void send(id, label, button, all.checked, lines));
      return { button, label };
    });
    all.addEventListener('change', () => {
      for (const { button, label } of buttons) button.title = describe(label);
    });
    replace(element,
      el('div', { class: 'push-row', role: 'group', 'aria-label': 'Send to' },
        buttons.map((b) => b.button),
        el('label', { class: 'check push-all', title: 'Send every observable, whatever its verdict (else the suspicious and malicious ones)' }, all, 'all observables')),
      canPush ? null : el('p', { class: 'hint role-note', id: NOTE_ID }, `Your role (${role}) reads results; sending them to a platform needs analyst.`),
      lines);
    element.hidden = false;
  }

  async function send(target: PushTargetName, label: string, button: HTMLButtonElement, everything: boolean, lines: HTMLElement): Promise<void> {
    if (button.disabled) return;
    const text = button.textContent;
    button.disabled = true;
    button.textContent = 'Sending…';
    button.setAttribute('aria-busy', 'true');
    let line: HTMLElement;
    try {
      const answer = await postJson<PushAnswerView>(apiPath(`analyses/${encodeURIComponent(analysisId)}/push`), { target, ...(everything ? { all: true } : {}) });
      const href = safeLink(answer.link);
      line = el('p', { class: 'push-line push-done', 'data-target': target },
        el('span', { class: 'push-message' }, String(answer.message ?? '')),
        href ? [' ', el('a', { class: 'push-link', href, target: '_blank', rel: 'noopener noreferrer' }, `Open in ${label}`)] : null);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      line = el('p', { class: 'push-line push-failed form-error', 'data-target': target },
        el('span', { class: 'push-message' }, message.startsWith(label) ? message : `${label}: ${message}`));
    } finally {
      button.disabled = false;
      button.textContent = text;
      button.removeAttribute('aria-busy');
    }
    // One line per target: a second push's line replaces the first's.
    const previous = [...lines.children].find((child) => child instanceof HTMLElement && child.dataset['target'] === target);
    if (previous) previous.replaceWith(line);
    else lines.appendChild(line);
  }

  return {
    element,
    update(isComplete: boolean) {
      complete = isComplete;
      draw();
    },
  };
}
