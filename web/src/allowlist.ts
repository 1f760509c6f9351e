/**
 * `/allowlist` (issue 38): what the team knows to be its own or harmless, which no engine is sent
 * and which is judged clean. One row per entry (GET {prefix}allowlist): its value, reason, who added
 * it and when, its expiry (an entry past it is shown expired: it covers nothing). The
 * configuration's entries (setting `allowlist`) come first, marked as such, with no Remove button:
 * they change in the configuration. Analysts and admins (GET /ui/me) also get a form to add an entry
 * (POST {prefix}allowlist: value, reason, optional expiry) and Remove on each run-time entry
 * (DELETE {prefix}allowlist/<value>, URL-encoded); viewers read. The API's refusals are shown as
 * text beside the form or above the list; everything shown goes in as text, never as HTML.
 */
import { apiPath, deleteJson, getJson, postJson } from './api.js';
import { announce, el, errorNotice, mainElement, replace } from './dom.js';
import { formatTime, plural } from './format.js';
import { errorText, field, problemLine, submitting } from './small-form.js';
import type { AllowEntryView, MeView } from '../../src/view/types.js';

const base = apiPath('allowlist');

const list = el('div', { id: 'allowlist-list' });
const summary = el('p', { class: 'muted', id: 'allowlist-summary', role: 'status', 'aria-live': 'polite' });
/** What a Remove answered when it failed (shown above the list). */
const listProblem = problemLine('allowlist-list-problem');
let mayChange = false;

async function load(): Promise<void> {
  let entries: AllowEntryView[];
  try {
    entries = await getJson<AllowEntryView[]>(base);
  } catch (error) {
    replace(list, errorNotice(`Could not load the allowlist: ${errorText(error)}`));
    return;
  }
  const expired = entries.filter((e) => !e.active).length;
  summary.textContent = `${plural(entries.length, 'entry', 'entries')}${expired ? `, ${expired} expired` : ''}`;
  replace(list, entries.length === 0
    ? el('p', { class: 'empty' }, 'Nothing on the allowlist yet.', mayChange ? ' Add an entry with the form above.' : '')
    : entriesTable(entries));
}

function entriesTable(entries: AllowEntryView[]): HTMLElement {
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'history-table allowlist-table' },
      el('thead', null, el('tr', null,
        el('th', { scope: 'col' }, 'Value'),
        el('th', { scope: 'col' }, 'Reason'),
        el('th', { scope: 'col' }, 'By'),
        el('th', { scope: 'col' }, 'Added'),
        el('th', { scope: 'col' }, 'Expires'),
        mayChange ? el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Actions')) : null)),
      el('tbody', null, entries.map(entryRow))));
}

function entryRow(entry: AllowEntryView): HTMLElement {
  const fromConfig = entry.by === 'config' && entry.at === undefined;
  return el('tr', { 'data-value': entry.value, 'data-origin': fromConfig ? 'config' : 'runtime', 'data-active': String(entry.active), class: entry.active ? null : 'expired' },
    el('td', null, el('code', { class: 'obs' }, entry.value)),
    el('td', { class: 'allowlist-reason' }, entry.reason),
    el('td', null, fromConfig ? el('span', { class: 'badge', title: 'The setting allowlist of the configuration: changed there, not here' }, 'configuration') : entry.by),
    el('td', null, entry.at ? formatTime(entry.at) : el('span', { class: 'muted' }, '—')),
    el('td', { class: 'allowlist-expires' },
      entry.expires === null ? el('span', { class: 'muted' }, 'never')
        : entry.active ? formatTime(entry.expires)
          : [el('span', { class: 'badge badge-error' }, 'expired'), ' ', formatTime(entry.expires)]),
    mayChange ? el('td', null, fromConfig
      ? el('span', { class: 'muted' }, 'from the configuration')
      : el('button', { type: 'button', class: 'allowlist-remove link-button', 'aria-label': `Remove ${entry.value} from the allowlist`, onclick: () => void remove(entry.value) }, 'Remove')) : null);
}

async function remove(value: string): Promise<void> {
  if (!window.confirm(`Remove ${value} from the allowlist? Later analyses send it to the engines again.`)) return;
  listProblem.say('');
  try {
    await deleteJson(`${base}/${encodeURIComponent(value)}`, { signIn: false });
    announce(`${value} removed from the allowlist`);
  } catch (error) {
    listProblem.say(`Could not remove ${value}: ${errorText(error)}`);
  }
  await load();
}

/** The form of analysts and admins: value, reason, optional expiry. */
function addForm(): HTMLElement {
  const problem = problemLine('allowlist-problem');
  const value = el('input', { id: 'allowlist-value', name: 'value', required: true, maxlength: 2048, autocomplete: 'off', spellcheck: 'false', placeholder: '*.corp.example, 203.0.113.0/24, 8.8.8.8, a file hash' });
  const reason = el('input', { id: 'allowlist-reason', name: 'reason', required: true, maxlength: 1000, autocomplete: 'off' });
  const expires = el('input', { id: 'allowlist-expires', name: 'expires', size: 24, autocomplete: 'off', placeholder: 'never' });
  const submit = el('button', { type: 'submit', id: 'allowlist-add' }, 'Add to the allowlist');
  const form = el('form', { class: 'allowlist-form', id: 'allowlist-form', onsubmit: submitting(submit, problem, async () => {
    const entry = await postJson<AllowEntryView>(base, { value: value.value, reason: reason.value, ...(expires.value.trim() ? { expires: expires.value.trim() } : {}) }, { signIn: false });
    announce(`${entry.value} added to the allowlist`);
    form.reset();
    await load();
  }) },
  el('h2', null, 'Add an entry'),
  field('Value', value, 'an observable (defanged or not), a CIDR range, *.domain (the domain and every name under it) or a file hash'),
  field('Reason', reason, 'why it needs no lookup: shown as the reason of its clean verdict'),
  field('Expires', expires, 'optional: a duration (90s, 10m, 12h, 30d) or an ISO 8601 time; empty: never'),
  el('div', { class: 'form-footer' }, submit, el('div', { class: 'form-problem' }, problem.element)));
  return el('section', { class: 'panel allowlist-panel' }, form);
}

async function start(): Promise<void> {
  const main = mainElement();
  const me = await getJson<MeView>('/ui/me').catch(() => undefined);
  mayChange = me?.role === 'analyst' || me?.role === 'admin';
  main.appendChild(el('section', { class: 'panel allowlist-panel' },
    el('h1', null, 'Allowlist'),
    el('p', { class: 'muted' }, 'What the team knows to be its own or harmless: an observable an entry covers is sent to no engine and judged clean, with the entry\'s reason.',
      mayChange ? '' : ' Viewers read it; analysts and admins add and remove entries.'),
    summary));
  if (mayChange) main.appendChild(addForm());
  main.appendChild(el('section', { class: 'panel allowlist-panel' }, listProblem.element, list));
  await load();
}

void start();
