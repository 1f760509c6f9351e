/**
 * `/results/<id>`: the analysis as it runs. Polls the live view (/ui/analyses/<id>) every second,
 * so each observable shows up as soon as it is done; once the view says complete (which it says
 * only once the result is stored), the whole result comes from GET {prefix}results/<id> (the JSON
 * view, "copy JSON"). Three views (table, cards, raw JSON), a filter by text, one by observable
 * type and one by verdict, sorting, copy buttons and exports. The view is the address's fragment
 * (`#cards`); without one, phones get the cards and wider screens the table.
 *
 * What comes next: "New analysis", copy the observables shown (as written, one a line, or
 * defanged), and "Re-run with other engines" (the form, prefilled through its fragment with the
 * observables shown, this analysis's engines and its TLP and PAP).
 *
 * An analysis made from files (issue 35) says so in its meta line (their formats and sizes), each
 * observable shows where it was found (`found_in`, in the table and the cards; the text filter
 * finds it there too), and one made from an e-mail shows the e-mail's SPF, DKIM and DMARC outcomes
 * under the title (web/src/email-auth.ts).
 *
 * Under the title, the analysis's TLP and PAP as labels in the standard's colours (web/src/marking.ts);
 * an engine withheld from an observable (its ceilings are below the marking) shows `withheld` and
 * why, in the table and the cards: not sent is not failed.
 *
 * Once complete, a "Send to ..." button for each platform the server pushes to (issue 37; MISP,
 * OpenCTI, TheHive), under the progress line: web/src/push-buttons.ts.
 *
 * Analysts' marks (issue 38): an observable a mark decided shows it, the engines' verdict beside it;
 * one marked since this analysis says so; analysts and admins get "Mark" on each (web/src/marks.ts).
 *
 * On a phone the first result comes first: the view tabs and the text filter stay, the secondary
 * controls (type and verdict filters, next steps, copy and downloads) fold into one menu behind
 * "More"; on wider screens they sit in the toolbar with the rest and the button is not drawn.
 */
import { ApiError, apiPath, getJson } from './api.js';
import { copyButton } from './clipboard.js';
import { el, errorNotice, mainElement, replace } from './dom.js';
import { emailAuthLine } from './email-auth.js';
import { defang, formatBytes, formatDuration, formatTime, plural } from './format.js';
import { markingLabels } from './marking.js';
import { loadMarker } from './marks.js';
import { pushButtons } from './push-buttons.js';
import { renderCards } from './results-cards.js';
import { renderGraph } from './results-graph.js';
import { renderTable, type SortState } from './results-table.js';
import { engineLabels, reasonText, VERDICT_NAMES } from './verdict.js';
import type { AnalysisView, ObservableView, VerdictName } from '../../src/view/types.js';

type ViewName = 'table' | 'cards' | 'graph' | 'json';
const VIEWS: { name: ViewName; label: string }[] = [
  { name: 'table', label: 'Table' },
  { name: 'cards', label: 'Cards' },
  { name: 'graph', label: 'Graph' },
  { name: 'json', label: 'JSON' },
];
/** Below this width (the stylesheet's phone layout) the cards are the default view. */
const PHONE_QUERY = '(max-width: 640px)';
const POLL_MS = 1000;
const RETRY_MS = 3000;

/** The verdict filter: every observable, one verdict, or malicious and suspicious together. */
type VerdictFilter = '' | 'flagged' | VerdictName;
const VERDICT_FILTERS: { value: VerdictFilter; label: string }[] = [
  { value: '', label: 'All verdicts' },
  { value: 'flagged', label: 'Malicious or suspicious' },
  ...VERDICT_NAMES.map((v) => ({ value: v, label: v[0]!.toUpperCase() + v.slice(1) })),
];

/** The downloads: `/export/<id>?format=...`, and the name each is saved under. */
const EXPORTS: { format: string; label: string; title: string; file: string }[] = [
  { format: 'csv', label: 'CSV', title: 'Download CSV', file: 'csv' },
  { format: 'json', label: 'JSON', title: 'Download JSON', file: 'json' },
  { format: 'xlsx', label: 'Excel', title: 'Download an Excel workbook (xlsx)', file: 'xlsx' },
  { format: 'stix', label: 'STIX', title: 'Download a STIX 2.1 bundle', file: 'stix.json' },
  { format: 'misp', label: 'MISP', title: 'Download a MISP event', file: 'misp.json' },
];

const id = document.body.dataset['analysisId'] ?? '';

const state: {
  view: ViewName;
  filter: string;
  verdict: VerdictFilter;
  /** An observable type (`IPv4`, `URL`...), or '' for every type. */
  type: string;
  sort: SortState | null;
  data: AnalysisView | null;
} = { view: viewFromHash(), filter: '', verdict: '', type: '', sort: null, data: null };

/** The view the address names, else the default for the screen: cards on a phone, else the table. */
function viewFromHash(): ViewName {
  const name = window.location.hash.slice(1);
  if (VIEWS.some((v) => v.name === name)) return name as ViewName;
  return window.matchMedia(PHONE_QUERY).matches ? 'cards' : 'table';
}

// --- layout, built once ---
const title = el('h1', null, 'Analysis ', el('code', { class: 'analysis-id' }, id));
const meta = el('p', { class: 'meta muted', id: 'analysis-meta' });
/** An e-mail's SPF, DKIM and DMARC outcomes, for an analysis made from one (issue 35). */
const emailAuth = el('div', { class: 'analysis-email-auth', id: 'analysis-email-auth', hidden: true });
/** The analysis's TLP and PAP, in the standard's colours (none for records of older versions). */
const marking = el('p', { class: 'analysis-marking', id: 'analysis-marking', hidden: true });
const progressBar = el('progress', { id: 'progress-bar', max: 1, value: 0, 'aria-labelledby': 'progress-text' });
const progressText = el('span', { id: 'progress-text' }, 'Loading…');
const status = el('div', { class: 'progress', id: 'analysis-status', role: 'status', 'aria-live': 'polite', 'data-complete': 'false' }, progressBar, progressText);
/** "Send to MISP" and the rest, once the analysis is complete (issue 37). */
const push = pushButtons(id);

const viewButtons = VIEWS.map((v) => {
  const button = el('button', { type: 'button', class: 'tab', 'data-view': v.name, 'aria-pressed': String(v.name === state.view) }, v.label);
  button.addEventListener('click', () => switchView(v.name));
  return button;
});
const filter = el('input', { type: 'search', id: 'results-filter', placeholder: 'Filter: observable, type, any result text', 'aria-label': 'Filter results', autocomplete: 'off' });
filter.addEventListener('input', () => {
  state.filter = filter.value.trim().toLowerCase();
  renderContent();
});
const verdictFilter = el('select', { id: 'verdict-filter', 'aria-label': 'Filter by verdict' },
  VERDICT_FILTERS.map((f) => el('option', { value: f.value }, f.label)));
verdictFilter.addEventListener('change', () => {
  state.verdict = verdictFilter.value as VerdictFilter;
  renderContent();
});
const typeFilter = el('select', { id: 'type-filter', 'aria-label': 'Filter by observable type' }, el('option', { value: '' }, 'All types'));
typeFilter.addEventListener('change', () => {
  state.type = typeFilter.value;
  renderContent();
});
const shownCount = el('span', { class: 'muted', id: 'shown-count' });
const copyAll = copyButton('Copy JSON', () => JSON.stringify(currentJson(), null, 2), 'Copy the whole result as JSON', 'button');
const exportLinks = EXPORTS.map((e) => ({
  ...e,
  link: el('a', { id: `export-${e.format}`, class: 'button', 'aria-disabled': 'true', title: e.title, 'aria-label': e.title }, e.label),
}));
const content = el('div', { id: 'view', class: 'view' });

// What comes next, once the results are read.
const newAnalysis = el('a', { href: '/', class: 'button', id: 'new-analysis' }, 'New analysis');
const rerun = el('a', { href: '/', class: 'button', id: 'rerun', title: 'Open the form with these observables and engines filled in' }, 'Re-run with other engines');
const copyObservables = copyButton('Copy observables', () => shownRows().map((r) => r.observable).join('\n'), 'Copy the observables shown, one a line', 'button');
copyObservables.id = 'copy-observables';
const copyDefanged = copyButton('Copy defanged', () => shownRows().map((r) => defang(r.observable, r.type)).join('\n'), 'Copy the observables shown, defanged, one a line', 'button');
copyDefanged.id = 'copy-defanged';
const nextSteps = el('div', { class: 'next-steps', role: 'group', 'aria-label': 'Next steps' }, newAnalysis, rerun, copyObservables, copyDefanged);

// The secondary controls, and the button that shows them on a phone (the stylesheet hides it elsewhere).
const moreControls = el('div', { class: 'more-controls', id: 'more-controls' },
  el('div', { class: 'refine', role: 'group', 'aria-label': 'Filter by type and verdict' }, typeFilter, verdictFilter),
  nextSteps,
  el('div', { class: 'actions' }, copyAll,
    el('span', { class: 'downloads', role: 'group', 'aria-label': 'Downloads' },
      el('span', { class: 'muted', 'aria-hidden': 'true' }, 'Download:'), exportLinks.map((e) => e.link))));
const moreToggle = el('button', { type: 'button', class: 'more-toggle', id: 'more-toggle', 'aria-expanded': 'false', 'aria-controls': 'more-controls' },
  'More', el('span', { class: 'more-mark', 'aria-hidden': 'true' }, '▾'));
moreToggle.addEventListener('click', () => {
  const open = moreToggle.getAttribute('aria-expanded') !== 'true';
  moreToggle.setAttribute('aria-expanded', String(open));
  moreControls.classList.toggle('open', open);
});

function layout(): HTMLElement {
  return el('section', { class: 'panel results' },
    el('div', { class: 'results-head' }, title, marking, meta, emailAuth, status, push.element),
    el('div', { class: 'toolbar' },
      el('div', { class: 'tabs', role: 'group', 'aria-label': 'View' }, viewButtons),
      el('div', { class: 'filter' }, filter, shownCount),
      moreToggle,
      moreControls),
    content);
}

function switchView(name: ViewName): void {
  state.view = name;
  for (const button of viewButtons) button.setAttribute('aria-pressed', String(button.dataset['view'] === name));
  history.replaceState(null, '', `#${name}`);
  renderContent();
}

// --- rendering ---
function currentJson(): unknown[] {
  return state.data?.results.filter((r) => r !== null) ?? [];
}

/** The observables the filters let through, in input order. */
function shownRows(): ObservableView[] {
  return state.data?.observables.filter(matches) ?? [];
}

/** Whether the verdict filter `filter` lets an observable of this verdict through. */
function verdictPasses(filter: VerdictFilter, verdict: VerdictName | null): boolean {
  if (filter === 'flagged') return verdict === 'malicious' || verdict === 'suspicious';
  return filter === '' || verdict === filter;
}

function matches(row: ObservableView): boolean {
  if (state.type !== '' && row.type !== state.type) return false;
  if (!verdictPasses(state.verdict, row.verdict)) return false;
  if (state.filter === '') return true;
  // The reasons as the API gives them and as drawn (engine label in place of its key): both find it.
  const labels = engineLabels(state.data ?? { engines: [] });
  const text = [row.observable, row.type, row.reversed_ip ?? '', row.verdict ?? '', ...row.found_in, ...row.reasons, ...row.reasons.map((r) => reasonText(r, labels)), ...row.cells.map((c) => c.summary)].join('\n').toLowerCase();
  return text.includes(state.filter);
}

/** The verdict filter's options say how many observables each would show. */
function renderVerdictCounts(data: AnalysisView): void {
  const count = (f: VerdictFilter) => data.observables.filter((o) => verdictPasses(f, o.verdict)).length;
  VERDICT_FILTERS.forEach((f, i) => {
    const option = verdictFilter.options[i];
    if (option) option.textContent = `${f.label} (${count(f.value)})`;
  });
}

/** The type filter's options: the types present, each with how many observables it shows. */
function renderTypeOptions(data: AnalysisView): void {
  const counts = new Map<string, number>();
  for (const row of data.observables) counts.set(row.type, (counts.get(row.type) ?? 0) + 1);
  const options = [{ value: '', label: 'All types', count: data.observables.length }, ...[...counts].map(([type, count]) => ({ value: type, label: type, count }))];
  if (state.type !== '' && !counts.has(state.type)) options.push({ value: state.type, label: state.type, count: 0 });
  const signature = options.map((o) => `${o.value}:${o.count}`).join('|');
  if (typeFilter.dataset['signature'] === signature) return;
  typeFilter.dataset['signature'] = signature;
  replace(typeFilter, options.map((o) => el('option', { value: o.value }, `${o.label} (${o.count})`)));
  typeFilter.value = state.type;
}

/** "Re-run with other engines": the form, its fragment carrying the observables shown and the engines. */
function renderRerun(data: AnalysisView, rows: ObservableView[]): void {
  const params = new URLSearchParams({ text: rows.map((r) => r.observable).join('\n'), engines: data.engines.map((e) => e.key).join(',') });
  // The same marking: a re-run of a TLP:RED analysis is TLP:RED too.
  if (data.tlp) params.set('tlp', data.tlp);
  if (data.pap) params.set('pap', data.pap);
  rerun.href = `/#${params}`;
  const scope = rows.length === data.observables.length ? 'these observables' : `the ${plural(rows.length, 'observable')} shown`;
  rerun.title = `Open the form with ${scope} and these engines filled in`;
}

function renderHeader(data: AnalysisView): void {
  const observablesDone = data.observables.filter((o) => o.done).length;
  if (marking.hidden && (data.tlp !== null || data.pap !== null)) {
    replace(marking, markingLabels(data, 'analysis-marking-labels'));
    marking.hidden = false;
  }
  if (emailAuth.hidden && data.source?.email_auth) {
    replace(emailAuth, emailAuthLine(data.source.email_auth, 'email-auth'));
    emailAuth.hidden = false;
  }
  meta.textContent = `Started ${formatTime(data.created_at)}${data.started_by ? ` by ${data.started_by}` : ''}${sourceText(data)} · ${plural(data.observables.length, 'observable')} · engines: ${data.engines.map((e) => e.label).join(', ')}${data.ignore_cache ? ' · cache ignored' : ''}`;
  progressBar.max = Math.max(1, data.progress.total);
  progressBar.value = data.complete ? progressBar.max : data.progress.done;
  progressText.textContent = data.complete
    ? `Complete: ${plural(data.observables.length, 'observable')}, ${plural(data.progress.total, 'lookup')} in ${formatDuration(data.duration_ms)}`
    : `Running: ${data.progress.done} of ${plural(data.progress.total, 'lookup')} done · ${observablesDone} of ${plural(data.observables.length, 'observable')} complete`;
  status.dataset['complete'] = String(data.complete);
  push.update(data.complete);
  status.classList.toggle('complete', data.complete);
  document.title = data.complete ? `oas · analysis ${id.slice(0, 8)}` : `(${observablesDone}/${data.observables.length}) oas · analysis ${id.slice(0, 8)}`;
  for (const { link, format, file } of exportLinks) {
    if (data.complete) {
      link.href = `/export/${encodeURIComponent(id)}?format=${format}`;
      link.setAttribute('download', `oas-${id}.${file}`);
      link.removeAttribute('aria-disabled');
    }
  }
}

/** ` · from a file (.eml, 14.2 KB)`: the files an analysis was made from (never their names: not kept); empty for a pasted text. */
function sourceText(data: AnalysisView): string {
  const files = data.source?.files ?? [];
  if (files.length === 0) return '';
  const each = files.map((f) => `${f.ext ? `.${f.ext}` : f.kind}, ${formatBytes(f.bytes)}`).join('; ');
  return ` · from ${files.length === 1 ? 'a file' : `${files.length} files`} (${each})`;
}

function renderContent(): void {
  const data = state.data;
  if (!data) return;
  renderVerdictCounts(data);
  renderTypeOptions(data);
  const rows = data.observables.filter(matches);
  renderRerun(data, rows);
  shownCount.textContent = rows.length === data.observables.length ? plural(rows.length, 'observable') : `${rows.length} of ${plural(data.observables.length, 'observable')} shown`;
  const focus = focusKey();
  const scroller = content.querySelector('.table-wrap');
  const scroll = scroller ? { top: scroller.scrollTop, left: scroller.scrollLeft } : null;

  if (state.view === 'table') {
    replace(content, renderTable(data, rows, state.sort, (column) => {
      state.sort = state.sort?.column === column && state.sort.direction === 'ascending' ? { column, direction: 'descending' } : { column, direction: 'ascending' };
      renderContent();
    }));
  } else if (state.view === 'cards') {
    replace(content, renderCards(data, rows));
  } else if (state.view === 'graph') {
    replace(content, renderGraph(data, rows));
  } else {
    const json = state.filter === '' && state.verdict === '' && state.type === '' ? currentJson() : currentJson().filter((r) => rows.some((row) => isResultOf(r, row)));
    replace(content,
      data.complete ? null : el('p', { class: 'muted' }, `Partial: ${plural(json.length, 'observable')} so far; the rest follow as they finish.`),
      el('pre', { class: 'json', id: 'raw-json', tabindex: 0, 'aria-label': 'Raw JSON' }, JSON.stringify(json, null, 2)));
  }
  const newScroller = content.querySelector('.table-wrap');
  if (scroll && newScroller) newScroller.scrollTo(scroll);
  restoreFocus(focus);
}

function isResultOf(result: unknown, row: ObservableView): boolean {
  return typeof result === 'object' && result !== null && (result as { observable?: unknown }).observable === row.observable;
}

/** Where the keyboard focus is inside the view, so a refresh does not lose it. */
function focusKey(): string | null {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !content.contains(active)) return null;
  const row = active.closest('[data-index]')?.getAttribute('data-index') ?? '';
  return `${row}|${active.dataset['column'] ?? ''}|${active.dataset['copy'] ?? ''}|${active.id}`;
}

function restoreFocus(key: string | null): void {
  if (!key) return;
  const [row, column, copy, elementId] = key.split('|');
  let target: Element | null = null;
  if (elementId) target = document.getElementById(elementId);
  else if (column) target = content.querySelector(`[data-column="${CSS.escape(column)}"]`);
  else if (copy) target = content.querySelector(`[data-index="${CSS.escape(row ?? '')}"] [data-copy="${CSS.escape(copy)}"]`);
  if (target instanceof HTMLElement) target.focus();
}

// --- polling ---
let lastSignature = '';
/** Finished observables already received, by index: later polls ask only for the others. */
const finished = new Map<number, { row: ObservableView; result: Record<string, unknown> | null }>();

/** `?have=`: bit i set when observable i is held (base64url bitmap). */
function haveParam(): string {
  if (finished.size === 0) return '';
  const bytes = new Uint8Array((Math.max(...finished.keys()) >> 3) + 1);
  for (const index of finished.keys()) bytes[index >> 3]! |= 1 << (index & 7);
  const base64 = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `?have=${base64}`;
}

/** Completes a poll's answer with the finished observables it left out. */
function merge(data: AnalysisView): AnalysisView {
  data.observables.forEach((row) => {
    if (row.done) finished.set(row.index, { row, result: data.results[row.index] ?? null });
  });
  const byIndex = new Map(data.observables.map((row) => [row.index, row]));
  for (const [index, held] of finished) byIndex.set(index, held.row);
  const observables = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const results = data.results.map((result, index) => finished.get(index)?.result ?? result);
  return { ...data, observables, results };
}

async function poll(): Promise<void> {
  try {
    const data = merge(await getJson<AnalysisView>(`/ui/analyses/${encodeURIComponent(id)}${haveParam()}`));
    if (data.complete) data.results = await getJson<AnalysisView['results']>(apiPath(`results/${encodeURIComponent(id)}`));
    update(data);
    if (!data.complete) window.setTimeout(() => void poll(), POLL_MS);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      replace(content, errorNotice('This analysis no longer exists.'));
      return;
    }
    progressText.textContent = `${error instanceof Error ? error.message : String(error)} Retrying…`;
    window.setTimeout(() => void poll(), RETRY_MS);
  }
}

function update(data: AnalysisView): void {
  const signature = `${data.complete}|${data.progress.done}|${data.observables.filter((o) => o.done).length}`;
  state.data = data;
  renderHeader(data);
  if (signature === lastSignature) return;
  lastSignature = signature;
  renderContent();
}

window.addEventListener('hashchange', () => {
  if (viewFromHash() !== state.view) switchView(viewFromHash());
});
mainElement().appendChild(layout());
// The Mark buttons are drawn once the role is known (and the rows again after a mark).
loadMarker(renderContent);
void poll();
