/**
 * The cards view: one card per observable, one section per engine that applies, with the fields
 * that matter and links to the source. Links open in a new tab and carry no referrer. An engine
 * whose answer is a risk signal (suspicious or malicious evidence) is highlighted: its badge spells
 * the level and its reason is shown. An observable of a file says where it was found (`found_in`), one
 * that earlier analyses held how often and how it was judged last (`seen`); one an analyst marked,
 * the mark and the engines' verdict beside it, and analysts get a "Mark" action (web/src/marks.ts).
 */
import { copyButtons } from './observable-actions.js';
import { el } from './dom.js';
import { foundInList } from './found-in.js';
import { seenNote } from './seen.js';
import { riskOf } from './results-table.js';
import { markButton, verdictNotes } from './marks.js';
import { engineLabels, verdictBadge, type EngineLabels } from './verdict.js';
import type { AnalysisView, CellView, ObservableView } from '../../src/view/types.js';

const STATUS_LABEL: Record<CellView['status'], string> = {
  ok: 'result',
  empty: 'no data',
  error: 'error',
  withheld: 'withheld',
  not_applicable: 'does not apply',
  pending: 'running…',
};

export function renderCards(view: AnalysisView, rows: ObservableView[]): HTMLElement {
  const labels = engineLabels(view);
  return el('div', { class: 'cards' }, rows.map((row) => renderCard(row, labels, () => view.results[row.index])));
}

function renderCard(row: ObservableView, labels: EngineLabels, result: () => unknown): HTMLElement {
  const cells = row.cells.filter((c) => c.status !== 'not_applicable');
  return el('article', { class: 'card', 'data-index': row.index, 'data-observable': row.observable, 'data-state': row.done ? 'done' : 'pending', 'aria-label': row.observable },
    el('header', { class: 'card-head' },
      el('h2', null, el('code', { class: 'obs' }, row.observable)),
      el('p', { class: 'card-meta' },
        row.verdict ? verdictBadge(row.verdict) : null,
        row.verdict ? ' ' : null,
        el('span', { class: 'type' }, row.type),
        row.reversed_ip ? el('span', { class: 'sub' }, ` resolved to ${row.reversed_ip}`) : null),
      foundInList(row.found_in),
      seenNote(row.seen, row.observable),
      row.verdict ? verdictNotes(row, labels) : null,
      el('div', { class: 'row-actions' }, copyButtons(row, result), markButton(row))),
    !row.done ? el('p', { class: 'status-label pending' }, 'running…') : null,
    row.done && cells.length === 0 ? el('p', { class: 'muted' }, `No selected engine applies to ${row.type}.`) : null,
    row.done ? cells.map((cell) => renderSection(cell, labels.get(cell.engine) ?? cell.engine)) : null);
}

function renderSection(cell: CellView, label: string): HTMLElement {
  const risk = riskOf(cell);
  return el('section', { class: `engine-section status-${cell.status}${risk ? ` risk risk-${risk}` : ''}`, 'data-engine': cell.engine, 'data-evidence': cell.evidence?.level ?? null },
    el('h3', null, label, ' ', risk
      ? verdictBadge(risk, `${label} flags it ${risk}`, 'verdict-small')
      : el('span', { class: `badge badge-${cell.status}` }, STATUS_LABEL[cell.status])),
    cell.status === 'ok' ? el('p', { class: 'summary' }, cell.summary) : null,
    risk && cell.evidence ? el('p', { class: 'evidence-reason' }, `${risk[0]!.toUpperCase()}${risk.slice(1)}: ${cell.evidence.reason}`) : null,
    cell.status === 'error' ? el('p', { class: 'error-text' }, cell.summary.replace(/^error: /, '')) : null,
    cell.status === 'withheld' ? el('p', { class: 'withheld-text' }, cell.summary.replace(/^withheld: /, '')) : null,
    cell.fields.length > 0
      ? el('dl', { class: 'fields' }, cell.fields.map((field) => [
          el('dt', null, field.label),
          el('dd', null, field.href && /^https?:\/\//i.test(field.href) ? el('a', { href: field.href, target: '_blank', rel: 'noopener noreferrer' }, field.value) : field.value),
        ]))
      : null);
}
