/**
 * `oas enrich` (issue 35), whatever the file's format: the columns read, the observables of their
 * cells (one list for the whole file, in the order they first appear, each with the rows it was
 * found in), and the cells each row gets from the analysis: `oas_verdict`, `oas_reasons` and one
 * `oas_<engine>` per engine. The cells are plain text here; the writers (src/export/enrich-table.ts
 * for CSV/TSV, src/export/enrich-workbook.ts for .xlsx) guard them against spreadsheet formulas.
 */
import { engineOutcome } from '../analysis/rows.js';
import { InputError } from '../analysis/request.js';
import type { Catalog } from '../engine/catalog.js';
import { extractObservables } from '../observables/extract.js';
import type { Observable } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';
import { worse, type ObservableVerdict, type Verdict } from '../verdict/verdict.js';

/** A sheet as text: its first row (the column names) and its other rows that hold anything. */
export interface SheetRows {
  header: string[];
  /** `number`: the row's number in the file, the header being row 1 (a spreadsheet's numbering). */
  rows: { number: number; cells: string[] }[];
}

/** An observable of the file, with the places it was found (`row 14, column ip`). */
export type FileObservable = Observable & { found_in: string[] };

export interface Gathered {
  /** The file's distinct observables, in first-appearance order: one analysis for them all. */
  observables: FileObservable[];
  /** The row number's observables, as indices into `observables`, in the row's order. */
  byRow: Map<number, number[]>;
}

/** Places kept per observable: an address found in every row of a large file is not given 10 000. */
const FOUND_IN_MAX = 20;

/** The columns added, in order: `oas_verdict`, `oas_reasons`, then `oas_<engine key>`. */
export function newColumns(engineKeys: readonly string[]): string[] {
  return ['oas_verdict', 'oas_reasons', ...engineKeys.map((key) => `oas_${key}`)];
}

/**
 * The indices of the columns `names` (`--column`, repeatable; every column so named), or
 * undefined for every column when none is named. An unknown name is an InputError naming the
 * file's columns.
 */
export function chosenColumns(header: readonly string[], names: readonly string[], file: string): number[] | undefined {
  if (names.length === 0) return undefined;
  const missing = names.filter((name) => !header.includes(name));
  if (missing.length > 0) {
    const known = header.map((name) => JSON.stringify(name)).join(', ') || 'none';
    throw new InputError(`${file} has no column ${missing.map((name) => JSON.stringify(name)).join(', ')}; its columns (the names of its first row): ${known}`);
  }
  return header.flatMap((name, index) => (names.includes(name) ? [index] : []));
}

/**
 * A file enriched already (or holding a column of that name) would get a second column of the
 * same name: refused, naming it.
 */
export function checkNewColumns(header: readonly string[], added: readonly string[], file: string): void {
  const taken = added.filter((name) => header.includes(name));
  if (taken.length > 0) {
    throw new InputError(`${file} already has the column ${taken.map((name) => JSON.stringify(name)).join(', ')} (enriched before?): enrich the original file, or rename that column`);
  }
}

/** The file's observables (the cells of `columns`, else of every column) and those of each row. */
export function gatherObservables(sheet: SheetRows, columns: readonly number[] | undefined): Gathered {
  const observables: FileObservable[] = [];
  const indexOf = new Map<string, number>();
  const byRow = new Map<number, number[]>();
  for (const row of sheet.rows) {
    const indices: number[] = [];
    const read = columns ?? row.cells.map((_, index) => index);
    for (const column of read) {
      const text = row.cells[column];
      if (!text) continue;
      const place = `row ${row.number}, column ${sheet.header[column] || column + 1}`;
      for (const observable of extractObservables(text)) {
        const key = observableKey(observable);
        let index = indexOf.get(key);
        if (index === undefined) {
          index = observables.length;
          indexOf.set(key, index);
          observables.push({ value: observable.value, type: observable.type, found_in: [] });
        }
        const places = observables[index]!.found_in;
        if (places.length < FOUND_IN_MAX && !places.includes(place)) places.push(place);
        if (!indices.includes(index)) indices.push(index);
      }
    }
    if (indices.length > 0) byRow.set(row.number, indices);
  }
  return { observables, byRow };
}

/** One observable, whatever its case where case does not matter (names, addresses, hashes). */
function observableKey(observable: Observable): string {
  const folded = observable.type === 'FQDN' || observable.type === 'Email' || observable.type === 'MD5' || observable.type === 'SHA1' || observable.type === 'SHA256';
  return `${observable.type}\0${folded ? observable.value.toLowerCase() : observable.value}`;
}

/** What one observable's result gives its rows' cells. */
export interface ObservableCells {
  observable: string;
  verdict: Verdict;
  reasons: readonly string[];
  /** Each engine's one-line outcome (src/analysis/rows.ts), for the engines that apply to it. */
  summaries: Map<string, string>;
}

/** The cells' part of one result, with its verdict `judged` (the one stored with it). */
export function observableCells(result: ObservableResult, judged: ObservableVerdict, engineKeys: readonly string[], catalog: Catalog): ObservableCells {
  const summaries = new Map<string, string>();
  for (const key of engineKeys) {
    const outcome = engineOutcome(result, key, catalog);
    if (outcome.status !== 'not_applicable') summaries.set(key, outcome.summary);
  }
  return { observable: result.observable, verdict: judged.verdict, reasons: judged.reasons, summaries };
}

/**
 * The new cells of a row holding these observables (in `newColumns` order): the worst verdict;
 * the reasons and each engine's summary as they are for one observable, and for several as
 * `observable: text` for each that has some, joined with ` | `.
 */
export function rowCells(found: readonly ObservableCells[], engineKeys: readonly string[]): string[] {
  const verdict = found.reduce<Verdict>((worst, cells) => worse(worst, cells.verdict), 'unknown');
  const joined = (text: (cells: ObservableCells) => string) => {
    if (found.length === 1) return text(found[0]!);
    return found.flatMap((cells) => {
      const value = text(cells);
      return value ? [`${cells.observable}: ${value}`] : [];
    }).join(' | ');
  };
  return [
    verdict,
    joined((cells) => cells.reasons.join('; ')),
    ...engineKeys.map((key) => joined((cells) => cells.summaries.get(key) ?? '')),
  ];
}
