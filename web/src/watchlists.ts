/**
 * `/watchlists` (issue 36): the team's watchlists, observables analysed again on a schedule, each
 * run compared with the one before. Each watchlist shows its interval, owner, TLP and PAP, engines
 * and observables, then its runs, newest first: when, why (added, schedule, run now), its analysis
 * (a link to its results) and what changed for which observable (a verdict before and after, a new
 * reason, an engine that now has data). Analysts and admins (GET /ui/me) also get a form to add
 * one, and "Run now" and "Remove" on each; viewers read. Everything shown comes from the API
 * (GET {prefix}watchlists) and goes in as text, never as HTML. While a run runs, the page asks
 * again every few seconds.
 */
import { apiPath, deleteJson, getJson, postJson } from './api.js';
import { announce, el, errorNotice, mainElement, replace } from './dom.js';
import { formatTime, plural } from './format.js';
import { markingLabels } from './marking.js';
import { field, problemLine, submitting } from './small-form.js';
import { verdictBadge, VERDICT_NAMES } from './verdict.js';
import type { CatalogView, MeView, VerdictName, WatchlistChangeView, WatchlistRunView, WatchlistView } from '../../src/view/types.js';

const REFRESH_MS = 3_000;
const base = apiPath('watchlists');

const list = el('div', { id: 'watchlist-list' });
const summary = el('p', { class: 'muted', id: 'watchlist-summary', role: 'status', 'aria-live': 'polite' });
let mayChange = false;
let timer = 0;

async function load(): Promise<void> {
  window.clearTimeout(timer);
  let all: WatchlistView[];
  try {
    all = await getJson<WatchlistView[]>(base);
  } catch (error) {
    replace(list, errorNotice(`Could not load the watchlists: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  summary.textContent = plural(all.length, 'watchlist');
  replace(list, all.length === 0
    ? el('p', { class: 'empty' }, 'No watchlist yet.', mayChange ? ' Add one with the form above.' : '')
    : all.map(watchlistSection));
  if (all.some((w) => w.runs.some((r) => r.status === 'running'))) timer = window.setTimeout(() => void load(), REFRESH_MS);
}

/** Lines of a watchlist's text shown at most (all of it in the title). */
const TEXT_LINES = 12;

function watchlistSection(w: WatchlistView): HTMLElement {
  const lines = w.text.split('\n').filter((line) => line.trim() !== '');
  return el('section', { class: 'panel watchlist', 'data-name': w.name, 'aria-labelledby': `watchlist-${w.name}` },
    el('h2', { id: `watchlist-${w.name}` }, w.name),
    el('p', { class: 'meta watchlist-meta' },
      `Every ${w.every} · owner ${w.owner} · added ${formatTime(w.created)} · last run ${w.last_run ? formatTime(w.last_run) : 'never'} `,
      markingLabels(w)),
    el('p', { class: 'muted' }, `Engines: ${w.engines.join(', ')}`),
    el('div', { class: 'obs-list watchlist-text', title: w.text.slice(0, 2000) },
      el('span', { class: 'muted' }, 'Watches: '),
      lines.slice(0, TEXT_LINES).map((line) => [el('code', { class: 'obs' }, line), ' ']),
      lines.length > TEXT_LINES ? el('span', { class: 'muted' }, `+${lines.length - TEXT_LINES} more lines`) : null),
    mayChange ? el('p', { class: 'actions' },
      el('button', { type: 'button', class: 'watchlist-run', onclick: () => void runNow(w.name) }, 'Run now'), ' ',
      el('button', { type: 'button', class: 'watchlist-remove link-button', onclick: () => void remove(w.name) }, 'Remove')) : null,
    w.runs.length === 0 ? el('p', { class: 'empty' }, 'No run yet.') : runsTable(w.runs));
}

function runsTable(runs: WatchlistRunView[]): HTMLElement {
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'history-table watchlist-runs' },
      el('thead', null, el('tr', null,
        el('th', { scope: 'col' }, 'Run'),
        el('th', { scope: 'col' }, 'Analysis'),
        el('th', { scope: 'col' }, 'Result'),
        el('th', { scope: 'col' }, 'What changed'))),
      el('tbody', null, runs.map((run) => el('tr', { 'data-run': run.id, 'data-status': run.status },
        el('td', null, formatTime(run.at), el('br'), el('span', { class: 'muted' }, TRIGGERS[run.trigger])),
        el('td', null, run.analysis_id ? el('a', { href: `/results/${encodeURIComponent(run.analysis_id)}` }, run.analysis_id.slice(0, 8)) : el('span', { class: 'muted' }, 'none')),
        el('td', null, resultOf(run)),
        el('td', { class: 'watchlist-changes' }, run.changes.length === 0 ? null : el('ul', { class: 'reasons' },
          run.changes.map(changeItem),
          run.more_changes ? el('li', { class: 'muted' }, `and ${run.more_changes} more`) : null)))))));
}

const TRIGGERS: Record<WatchlistRunView['trigger'], string> = { added: 'baseline, when added', schedule: 'on schedule', manual: 'run now' };

function resultOf(run: WatchlistRunView): HTMLElement {
  if (run.status === 'running') return el('span', { class: 'badge badge-pending' }, 'running');
  if (run.status === 'failed') return el('span', { class: 'badge badge-error', title: run.error ?? '' }, `failed: ${run.error ?? 'unknown reason'}`);
  if (run.baseline) return el('span', { class: 'badge' }, 'baseline');
  const count = run.changes.length + (run.more_changes ?? 0);
  return el('span', { class: count > 0 ? 'badge badge-error' : 'badge badge-ok' }, count > 0 ? plural(count, 'change') : 'no change');
}

const isVerdict = (value: string | null): value is VerdictName => value !== null && (VERDICT_NAMES as readonly string[]).includes(value);

function changeItem(change: WatchlistChangeView): HTMLElement {
  const observable = el('code', { class: 'obs', title: `${change.type}: ${change.observable}` }, change.observable);
  if (change.kind === 'verdict' && isVerdict(change.before) && isVerdict(change.after)) {
    return el('li', { 'data-kind': 'verdict' }, observable, ' verdict ', verdictBadge(change.before, undefined, 'verdict-small'), ' → ', verdictBadge(change.after, undefined, 'verdict-small'));
  }
  const what = change.kind === 'data' ? ` ${change.engine ?? 'an engine'} now has data: ` : ' new reason: ';
  return el('li', { 'data-kind': change.kind }, observable, what,
    change.before !== null && change.kind === 'reason' ? [el('span', { class: 'muted' }, change.before), ' → '] : null,
    change.after);
}

async function runNow(name: string): Promise<void> {
  try {
    await postJson(`${base}/${encodeURIComponent(name)}/run`, {});
    announce(`Watchlist ${name} is running`);
  } catch (error) {
    announce(`Could not run ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  await load();
}

async function remove(name: string): Promise<void> {
  if (!window.confirm(`Remove the watchlist ${name}? Its runs' analyses stay in the history.`)) return;
  try {
    await deleteJson(`${base}/${encodeURIComponent(name)}`);
    announce(`Watchlist ${name} removed`);
  } catch (error) {
    announce(`Could not remove ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  await load();
}

/** The form of analysts and admins: name, observables, interval, engines, TLP and PAP. */
function addForm(catalog: CatalogView | undefined): HTMLElement {
  const problem = problemLine('watchlist-problem');
  const name = el('input', { id: 'watchlist-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off' });
  const text = el('textarea', { id: 'watchlist-text', name: 'text', rows: 4, required: true, placeholder: 'Domains, IP addresses, URLs, hashes, e-mail addresses (defanged or not)' });
  const every = el('input', { id: 'watchlist-every', name: 'every', required: true, value: '6h', size: 6 });
  const engines = el('input', { id: 'watchlist-engines', name: 'engines', placeholder: 'default engines', autocomplete: 'off' });
  const levels = (id: string, values: readonly string[], chosen: string | undefined) => el('select', { id, name: id.replace('watchlist-', '') },
    values.map((value) => el('option', { value, selected: value === chosen }, value)));
  const tlp = levels('watchlist-tlp', catalog?.tlp_levels ?? ['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED'], catalog?.default_tlp ?? 'AMBER');
  const pap = levels('watchlist-pap', catalog?.pap_levels ?? ['CLEAR', 'GREEN', 'AMBER', 'RED'], catalog?.default_pap ?? 'GREEN');
  const submit = el('button', { type: 'submit', id: 'watchlist-add' }, 'Add watchlist');
  const form = el('form', { class: 'watchlist-form', id: 'watchlist-form', onsubmit: submitting(submit, problem, async () => {
    const chosen = engines.value.split(',').map((s) => s.trim()).filter(Boolean);
    await postJson(base, { name: name.value.trim(), text: text.value, every: every.value.trim(), ...(chosen.length ? { engines: chosen } : {}), tlp: tlp.value, pap: pap.value }, { signIn: false });
    announce(`Watchlist ${name.value.trim()} added; its baseline runs now`);
    form.reset();
    every.value = '6h';
    await load();
  }) },
  el('h2', null, 'Add a watchlist'),
  field('Name', name, 'letters, digits, _ . - (at most 64)'),
  field('Observables', text),
  field('Every', every, 'e.g. 30m, 6h, 1d; at least 5m'),
  field('Engines', engines, 'ids, aliases or @sets, comma-separated; empty: the default engines'),
  field('TLP', tlp), field('PAP', pap),
  el('div', { class: 'form-footer' }, submit, el('div', { class: 'form-problem' }, problem.element)));
  return el('section', { class: 'panel' }, form);
}

async function start(): Promise<void> {
  const main = mainElement();
  const me = await getJson<MeView>('/ui/me').catch(() => undefined);
  mayChange = me?.role === 'analyst' || me?.role === 'admin';
  const catalog = mayChange ? await getJson<CatalogView>('/ui/engines').catch(() => undefined) : undefined;
  main.appendChild(el('section', { class: 'panel' },
    el('h1', null, 'Watchlists'),
    el('p', { class: 'muted' }, 'Observables analysed again on a schedule (by oas serve), each run compared with the one before: a verdict that changed, a new reason, an engine that now has data.', mayChange ? '' : ' Viewers read them; analysts and admins add and remove them.'),
    summary));
  if (mayChange) main.appendChild(addForm(catalog));
  main.appendChild(list);
  await load();
}

void start();
