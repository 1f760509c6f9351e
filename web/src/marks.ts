/**
 * Analysts' marks on the results page (issue 38).
 *
 * Shown: an observable whose result carries a mark (`mark`: it applied when the analysis ran) has
 * the mark's verdict as its verdict, and under it "marked malicious by alice on 2026-11-20: <note>"
 * and the verdict the engines gave, kept beside it (`computed_verdict`), with their reasons; for a
 * false positive that verdict is struck through. An earlier analysis is not rewritten: when a mark
 * was made since (`mark_now`, from GET /ui/analyses/<id>), it says "marked ... since this
 * analysis: <note>" under the verdict it had.
 *
 * The action: analysts and admins (GET /ui/me) get a "Mark" button beside each observable's copy
 * buttons. It opens a small dialog (outside the view the page redraws while the analysis runs) with
 * the verdict, a note, an optional expiry and who marks (the signed-in user: the server takes the
 * author from the session); it posts to POST {prefix}marks as any client of the API does, says the
 * API's refusal beside the button, and once marked says that later analyses will show it, this one
 * not being rewritten. Everything drawn goes in as text, never as HTML.
 */
import { apiPath, getJson, postJson } from './api.js';
import { announce, el } from './dom.js';
import { field, problemLine, submitting } from './small-form.js';
import { reasonsList, verdictBadge, type EngineLabels } from './verdict.js';
import type { MarkVerdictName, MarkView, MeView, ObservableView } from '../../src/view/types.js';

const MARK_VERDICTS: readonly MarkVerdictName[] = ['malicious', 'suspicious', 'clean', 'false_positive'];

/** `false_positive` → `false positive`. */
const spoken = (verdict: MarkVerdictName) => verdict.replace('_', ' ');

/** "marked malicious by alice on 2026-11-20: <note>", as the server's reason says it; `since`: "... since this analysis: ...". */
function markWords(mark: MarkView, since = false): string {
  return `marked ${spoken(mark.verdict)} by ${mark.by} on ${mark.at.slice(0, 10)}${since ? ' since this analysis' : ''}: ${mark.note}`;
}

/**
 * What goes under an observable's verdict badge: its reasons, or, when a mark decided, the mark
 * and the engines' verdict beside it; then a mark made since this analysis, if any.
 */
export function verdictNotes(row: ObservableView, labels: EngineLabels): (HTMLElement | null)[] {
  return [
    row.mark ? markedBlock(row.mark, row.computed_verdict, labels) : reasonsList(row.reasons, labels),
    row.mark_now ? el('p', { class: 'mark-since', 'data-mark-verdict': row.mark_now.verdict, 'data-mark-by': row.mark_now.by }, markWords(row.mark_now, true)) : null,
  ];
}

function markedBlock(mark: MarkView, computed: ObservableView['computed_verdict'], labels: EngineLabels): HTMLElement {
  const falsePositive = mark.verdict === 'false_positive';
  let engines: HTMLElement | null = null;
  if (computed) {
    const badge = verdictBadge(computed.verdict, falsePositive ? 'The engines\' verdict, overruled: marked a false positive' : 'The engines\' verdict', 'verdict-small');
    engines = el('div', { class: 'computed-verdict', 'data-computed-verdict': computed.verdict },
      el('span', { class: 'muted' }, 'the engines said '),
      falsePositive ? [el('s', null, badge), el('span', { class: 'visually-hidden' }, ' (overruled: a false positive)')] : badge,
      reasonsList(computed.reasons, labels));
  }
  return el('div', { class: 'mark', 'data-mark-verdict': mark.verdict, 'data-mark-by': mark.by },
    el('p', { class: 'mark-line' }, markWords(mark)),
    engines);
}

let me: MeView | undefined;
const mayMark = () => me?.role === 'analyst' || me?.role === 'admin';
let redraw: () => void = () => undefined;

/**
 * Asks once who the user is; `onReady` is called when the Mark buttons can be drawn (an analyst
 * or an admin), and again after a mark so that its row says it.
 */
export function loadMarker(onReady: () => void): void {
  redraw = onReady;
  void getJson<MeView>('/ui/me').then((answer) => {
    me = answer;
    if (mayMark()) redraw();
  }, () => undefined);
}

/** The "Mark" button of one observable, or null for a viewer (and until the role is known). */
export function markButton(row: ObservableView): HTMLButtonElement | null {
  if (!mayMark()) return null;
  return el('button', { type: 'button', class: 'mark-button', 'data-mark-value': row.observable, title: `Mark ${row.observable}: your verdict, shown by later analyses`, onclick: () => openDialog(row) }, 'Mark');
}

function openDialog(row: ObservableView): void {
  document.getElementById('mark-dialog')?.remove();
  const verdict = el('select', { id: 'mark-verdict', name: 'verdict' }, MARK_VERDICTS.map((v) => el('option', { value: v }, spoken(v))));
  const note = el('textarea', { id: 'mark-note', name: 'note', rows: 3, required: true, maxlength: 1000, placeholder: 'e.g. red-team C2 for exercise X' });
  const expires = el('input', { id: 'mark-expires', name: 'expires', autocomplete: 'off', placeholder: 'never' });
  const problem = problemLine('mark-problem');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'mark-submit' }, 'Mark');
  const cancel = el('button', { type: 'button', id: 'mark-cancel', onclick: () => dialog.close() }, 'Cancel');
  const form = el('form', { class: 'mark-form', id: 'mark-form', onsubmit: submitting(submit, problem, async () => {
    const mark = await postJson<MarkView & { value: string }>(apiPath('marks'), { value: row.observable, verdict: verdict.value, note: note.value, ...(expires.value.trim() ? { expires: expires.value.trim() } : {}) }, { signIn: false });
    row.mark_now = { verdict: mark.verdict, note: mark.note, by: mark.by, at: mark.at, expires: mark.expires };
    const done = el('p', { class: 'mark-done', id: 'mark-done', role: 'status' },
      `Marked ${spoken(mark.verdict)}. Later analyses of ${mark.value} will show this mark; this analysis is not rewritten.`);
    const close = el('button', { type: 'button', id: 'mark-close', onclick: () => dialog.close() }, 'Close');
    form.replaceWith(el('div', { class: 'mark-form' }, done, el('div', { class: 'form-footer' }, close)));
    close.focus();
    announce(`${mark.value} marked ${spoken(mark.verdict)}`);
    redraw();
  }) },
  field('Verdict', verdict, 'false positive: judged clean, the engines\' verdict shown struck through'),
  field('Note', note, 'why: shown with your name to whoever analyses it next'),
  field('Expires', expires, 'optional: a duration (90s, 10m, 12h, 30d) or an ISO 8601 time; empty: never'),
  el('p', { class: 'hint', id: 'mark-by' }, 'Marked by ', el('strong', null, me?.name ?? 'you'), me ? ` (${me.role})` : null),
  el('div', { class: 'form-footer' }, el('span', { class: 'mark-buttons' }, submit, ' ', cancel), el('div', { class: 'form-problem' }, problem.element)));
  const dialog = el('dialog', { class: 'mark-dialog', id: 'mark-dialog', 'aria-labelledby': 'mark-title' },
    el('h2', { id: 'mark-title' }, 'Mark ', el('code', { class: 'obs' }, row.observable)),
    el('p', { class: 'hint' }, 'Your verdict on it: later analyses show it in place of the engines\' (kept beside it), with your name and the note. This analysis is not rewritten.'),
    form);
  dialog.addEventListener('close', () => {
    dialog.remove();
    // The row may have been redrawn meanwhile: its new button takes the focus back.
    const button = [...document.querySelectorAll<HTMLElement>(`[data-index="${row.index}"] .mark-button`)].find((b) => b.offsetParent !== null);
    button?.focus();
  });
  document.body.appendChild(dialog);
  dialog.showModal();
  note.focus();
}
