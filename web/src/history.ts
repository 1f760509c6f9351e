/**
 * `/history`: past analyses, newest first, searchable by observable, one page at a time, each
 * linking to its results. The search and page live in the address (?q=&page=), so a search can
 * be bookmarked and Back works. A finished analysis shows its worst verdict and how many of its
 * observables are malicious or suspicious (counted when it completed; older records show none),
 * and who started it. "Mine" (?mine=1) keeps only the analyses the signed-in user started, with
 * the search as it is. Each analysis shows its TLP and PAP as labels in the standard's colours
 * (none for records of older versions).
 */
import { getJson } from './api.js';
import { el, errorNotice, mainElement, replace } from './dom.js';
import { formatDuration, formatTime, plural } from './format.js';
import { markingLabels } from './marking.js';
import { verdictBadge } from './verdict.js';
import type { HistoryItemView, HistoryView, VerdictCountsView } from '../../src/view/types.js';

const PER_PAGE = 20;
const SEARCH_DELAY_MS = 250;

const params = new URLSearchParams(window.location.search);
const state = { query: params.get('q') ?? '', page: Math.max(1, Number(params.get('page')) || 1), mine: params.get('mine') === '1' };

const search = el('input', { type: 'search', id: 'history-search', name: 'q', placeholder: 'Search by observable (domain, IP, URL, hash, e-mail)', 'aria-label': 'Search analyses by observable', autocomplete: 'off' });
search.value = state.query;
const summary = el('p', { class: 'muted', id: 'history-summary', role: 'status', 'aria-live': 'polite' });
const list = el('div', { id: 'history-list' });
const prev = el('button', { type: 'button', id: 'history-prev' }, '← Newer');
const next = el('button', { type: 'button', id: 'history-next' }, 'Older →');
const pageText = el('span', { class: 'muted', id: 'history-page' });
const mineToggle = el('button', { type: 'button', class: 'chip', id: 'history-mine', 'aria-pressed': String(state.mine), title: 'Only the analyses you started' }, 'Mine');
mineToggle.addEventListener('click', () => {
  state.mine = !state.mine;
  mineToggle.setAttribute('aria-pressed', String(state.mine));
  // The search as typed goes along (even before its delay ran out).
  window.clearTimeout(timer);
  state.query = search.value.trim();
  state.page = 1;
  void load();
});

let timer = 0;
search.addEventListener('input', () => {
  window.clearTimeout(timer);
  timer = window.setTimeout(() => {
    state.query = search.value.trim();
    state.page = 1;
    void load();
  }, SEARCH_DELAY_MS);
});
const form = el('form', { role: 'search', class: 'history-search', onsubmit: (event: Event) => {
  event.preventDefault();
  window.clearTimeout(timer);
  state.query = search.value.trim();
  state.page = 1;
  void load();
} }, search, ' ', mineToggle);
prev.addEventListener('click', () => { state.page -= 1; void load(); });
next.addEventListener('click', () => { state.page += 1; void load(); });

let sequence = 0;
async function load(): Promise<void> {
  const mine = ++sequence;
  const query = new URLSearchParams({ q: state.query, page: String(state.page), per_page: String(PER_PAGE), ...(state.mine ? { mine: '1' } : {}) });
  let view: HistoryView;
  try {
    view = await getJson<HistoryView>(`/ui/history?${query}`);
  } catch (error) {
    replace(list, errorNotice(`Could not load the history: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  if (mine !== sequence) return; // a newer search answered first
  const pages = Math.max(1, Math.ceil(view.total / view.per_page));
  const address = new URLSearchParams();
  if (state.query) address.set('q', state.query);
  if (state.mine) address.set('mine', '1');
  if (state.page > 1) address.set('page', String(state.page));
  history.replaceState(null, '', address.size > 0 ? `?${address}` : window.location.pathname);
  const whose = state.mine ? ' started by you' : '';
  summary.textContent = state.query
    ? `${plural(view.total, 'analysis', 'analyses')}${whose} with an observable containing “${state.query}”`
    : `${plural(view.total, 'analysis', 'analyses')}${whose}`;
  pageText.textContent = `Page ${view.page} of ${pages}`;
  prev.disabled = view.page <= 1;
  next.disabled = view.page >= pages;
  const filtered = state.query !== '' || state.mine;
  replace(list, view.items.length === 0
    ? el('p', { class: 'empty' }, filtered ? 'No analysis matches.' : 'No analysis yet. ', filtered ? null : el('a', { href: '/' }, 'Start one.'))
    : renderTable(view.items));
}

function renderTable(items: HistoryItemView[]): HTMLElement {
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'history-table' },
      el('thead', null, el('tr', null,
        el('th', { scope: 'col' }, 'Started'),
        el('th', { scope: 'col' }, 'Marking'),
        el('th', { scope: 'col' }, 'Verdict'),
        el('th', { scope: 'col' }, 'Observables'),
        el('th', { scope: 'col' }, 'Engines'),
        el('th', { scope: 'col' }, 'Status'),
        el('th', { scope: 'col' }, 'Started by'))),
      el('tbody', null, items.map((item) => el('tr', { 'data-id': item.id },
        el('td', { class: 'history-started' }, el('a', { href: `/results/${encodeURIComponent(item.id)}` }, formatTime(item.created_at))),
        el('td', { class: 'history-marking' }, markingLabels(item)),
        el('td', { class: 'history-verdict' }, item.verdicts ? verdictSummary(item.verdicts) : null),
        el('td', { class: 'obs-list' },
          // Never broken in the middle (an IP or hash cut in two reads as two values): one line
          // each, clipped with an ellipsis when wider than the column, in full in the title.
          item.observables.map((o) => el('code', { class: 'obs', title: `${o.type}: ${o.value}` }, o.value)),
          item.observable_count > item.observables.length ? el('span', { class: 'muted' }, ` +${item.observable_count - item.observables.length} more`) : null),
        el('td', null, item.engine_labels.join(', ')),
        el('td', null, item.complete
          ? el('span', { class: 'badge badge-ok' }, `done in ${formatDuration(item.duration_ms)}`)
          : el('span', { class: 'badge badge-pending' }, 'running')),
        el('td', { class: 'history-by' }, item.started_by ?? el('span', { class: 'muted' }, 'unknown')))))));
}

mainElement().appendChild(el('section', { class: 'panel' },
  el('h1', null, 'History'),
  form,
  summary,
  list,
  el('nav', { class: 'pager', 'aria-label': 'Pages' }, prev, pageText, next)));
void load();

/** The worst verdict as a badge, and `2 malicious, 1 suspicious` (or `none flagged`). */
function verdictSummary(counts: VerdictCountsView): HTMLElement {
  const flagged = [counts.malicious > 0 ? `${counts.malicious} malicious` : '', counts.suspicious > 0 ? `${counts.suspicious} suspicious` : ''].filter(Boolean);
  return el('span', { class: 'verdict-summary', 'data-malicious': counts.malicious, 'data-suspicious': counts.suspicious },
    verdictBadge(counts.worst, `Worst verdict of the analysis: ${counts.worst}`),
    el('span', { class: 'verdict-counts' }, flagged.length > 0 ? flagged.join(', ') : 'none flagged'));
}
