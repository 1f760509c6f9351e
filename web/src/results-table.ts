/**
 * The table view: one row per observable, its verdict (badge and reasons), one column per engine
 * with its one-line summary. A summary that carries a risk signal (the engine's evidence is
 * suspicious or malicious: VPN, Tor, proxy, detections, listed ASN...) is highlighted and starts
 * with a small badge spelling the level. Under an observable of a file, where it was found (`found_in`);
 * under one that earlier analyses held, how often and how it was judged last (`seen`, web/src/seen.ts).
 * An analyst's mark shows under the verdict with the engines' verdict beside it, and analysts get a
 * "Mark" action beside the copy buttons (web/src/marks.ts).
 * Columns sort on click (again to reverse), the header stays in view while scrolling.
 */
import { copyButtons } from './observable-actions.js';
import { el } from './dom.js';
import { foundInList } from './found-in.js';
import { seenNote } from './seen.js';
import { markButton, verdictNotes } from './marks.js';
import { engineLabels, verdictBadge, VERDICT_RANK, type EngineLabels } from './verdict.js';
import type { AnalysisView, CellView, ObservableView } from '../../src/view/types.js';

export interface SortState {
  /** `observable`, `verdict`, `type`, or an engine key. */
  column: string;
  direction: 'ascending' | 'descending';
}

/** The risk level of a cell when its engine flags the observable, else null. */
export function riskOf(cell: CellView): 'malicious' | 'suspicious' | null {
  const level = cell.evidence?.level;
  return level === 'malicious' || level === 'suspicious' ? level : null;
}

function cellContent(cell: CellView): Node | string | (Node | string)[] {
  const risk = riskOf(cell);
  switch (cell.status) {
    case 'ok':
      return risk ? [verdictBadge(risk, cell.evidence?.reason, 'verdict-small'), ' ', cell.summary] : cell.summary;
    case 'error':
      return el('span', null, el('span', { class: 'status-label' }, 'error'), ' ', cell.summary.replace(/^error: /, ''));
    case 'withheld':
      // Not sent (the analysis's TLP/PAP is above the engine's ceilings): why, not an error.
      return el('span', null, el('span', { class: 'status-label' }, 'withheld'), ' ', cell.summary.replace(/^withheld: /, ''));
    case 'empty':
      return risk ? [verdictBadge(risk, cell.evidence?.reason, 'verdict-small'), ' ', cell.evidence?.reason ?? 'no data'] : el('span', { class: 'status-label' }, 'no data');
    case 'not_applicable':
      return el('span', { class: 'status-label', 'aria-label': cell.summary }, '—');
    case 'pending':
      return el('span', { class: 'status-label pending' }, 'running…');
  }
}

export function renderTable(view: AnalysisView, rows: ObservableView[], sort: SortState | null, onSort: (column: string) => void): HTMLElement {
  const header = (column: string, label: string) => {
    const sorted = sort?.column === column ? sort.direction : null;
    return el('th', { scope: 'col', 'aria-sort': sorted ?? 'none' },
      el('button', { type: 'button', class: 'sort', 'data-column': column, onclick: () => onSort(column) },
        label, el('span', { class: 'sort-mark', 'aria-hidden': 'true' }, sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : '')));
  };
  const sortedRows = sort ? sortRows(view, rows, sort) : rows;
  const labels = engineLabels(view);
  return el('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Results table' },
    el('table', { class: 'results-table' },
      el('thead', null,
        el('tr', null,
          header('observable', 'Observable'),
          header('verdict', 'Verdict'),
          header('type', 'Type'),
          view.engines.map((engine) => header(engine.key, engine.label)))),
      el('tbody', null, sortedRows.map((row) => renderRow(row, labels, () => view.results[row.index])))));
}

function renderRow(row: ObservableView, labels: EngineLabels, result: () => unknown): HTMLElement {
  return el('tr', { 'data-index': row.index, 'data-observable': row.observable, 'data-state': row.done ? 'done' : 'pending' },
    el('th', { scope: 'row', class: 'obs-cell' },
      el('code', { class: 'obs' }, row.observable),
      row.reversed_ip ? el('div', { class: 'sub' }, `→ ${row.reversed_ip}`) : null,
      foundInList(row.found_in),
      seenNote(row.seen, row.observable),
      el('div', { class: 'row-actions' }, copyButtons(row, result), markButton(row))),
    el('td', { class: 'verdict-cell', 'data-verdict': row.verdict ?? 'pending' },
      row.verdict ? [verdictBadge(row.verdict), verdictNotes(row, labels)] : el('span', { class: 'status-label pending' }, 'running…')),
    el('td', null, el('span', { class: 'type' }, row.type)),
    row.cells.map((cell) => {
      const risk = riskOf(cell);
      return el('td', {
        class: `cell status-${cell.status}${risk ? ` risk risk-${risk}` : ''}`,
        'data-engine': cell.engine,
        'data-evidence': cell.evidence?.level ?? null,
        title: risk && cell.evidence ? `${cell.summary} (${risk}: ${cell.evidence.reason})` : cell.summary,
      }, cellContent(cell));
    }));
}

function sortRows(view: AnalysisView, rows: ObservableView[], sort: SortState): ObservableView[] {
  const engineIndex = view.engines.findIndex((e) => e.key === sort.column);
  const key = (row: ObservableView): string => {
    if (sort.column === 'observable') return row.observable;
    if (sort.column === 'type') return row.type;
    // Most severe first, pending last; within a verdict, the most reasons first.
    if (sort.column === 'verdict') return row.verdict ? `${VERDICT_RANK[row.verdict]}${String(999 - row.reasons.length).padStart(3, '0')}` : '9999';
    const cell = row.cells[engineIndex];
    if (!cell) return '';
    // Results first, then empty, errors, withheld, not applicable, pending; alphabetical within each.
    const rank = { ok: 0, empty: 1, error: 2, withheld: 3, not_applicable: 4, pending: 5 }[cell.status];
    return `${rank}${cell.summary}`;
  };
  const factor = sort.direction === 'ascending' ? 1 : -1;
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  return [...rows].sort((a, b) => factor * collator.compare(key(a), key(b)) || a.index - b.index);
}
