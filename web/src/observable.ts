/**
 * `/observables/<value>` (issue 38): the analyses of the store that held one observable, newest
 * first, each with the observable's verdict there and a link to its results; read from
 * GET /ui/observables/<value>. The value is shown as text, never markup.
 */
import { getJson } from './api.js';
import { el, errorNotice, mainElement, replace } from './dom.js';
import { formatTime, plural } from './format.js';
import { VERDICT_NAMES, verdictBadge } from './verdict.js';
import type { ObservableHistoryView, VerdictName } from '../../src/view/types.js';

const value = document.body.dataset['observable'] ?? '';
const summary = el('p', { class: 'muted', id: 'observable-summary', role: 'status', 'aria-live': 'polite' }, 'Loading…');
const list = el('div', { id: 'observable-list' });

mainElement().appendChild(el('section', { class: 'panel' },
  el('h1', null, 'Analyses that held ', el('code', { class: 'obs', id: 'observable-value' }, value)),
  summary,
  list));
void load();

async function load(): Promise<void> {
  let view: ObservableHistoryView;
  try {
    view = await getJson<ObservableHistoryView>(`/ui/observables/${encodeURIComponent(value)}`);
  } catch (error) {
    summary.textContent = '';
    replace(list, errorNotice(`Could not load the analyses: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  summary.textContent = view.total === 0
    ? 'No analysis of this server held it.'
    : view.items.length < view.total
      ? `${plural(view.total, 'analysis', 'analyses')} held it; the newest ${view.items.length} are listed.`
      : `${plural(view.total, 'analysis', 'analyses')} held it.`;
  replace(list, view.items.length === 0 ? null : el('div', { class: 'table-wrap' },
    el('table', { class: 'history-table observable-history' },
      el('thead', null, el('tr', null,
        el('th', { scope: 'col' }, 'Started'),
        el('th', { scope: 'col' }, 'Verdict'),
        el('th', { scope: 'col' }, 'Analysis'))),
      el('tbody', null, view.items.map((item) => el('tr', { 'data-id': item.analysis_id },
        el('td', null, el('a', { href: item.link }, formatTime(item.created_at))),
        el('td', { 'data-verdict': item.verdict }, isVerdict(item.verdict) ? verdictBadge(item.verdict) : item.verdict),
        el('td', null, el('a', { href: item.link }, el('code', null, item.analysis_id)))))))));
}

function isVerdict(text: string): text is VerdictName {
  return (VERDICT_NAMES as readonly string[]).includes(text);
}
