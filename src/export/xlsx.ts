/**
 * xlsx (exceljs): a sheet "Observables" with one row per observable (its verdict, reasons and one
 * column per engine with its one-line summary), then one sheet per engine with its result's fields
 * flattened (`a.b.c` columns). Written with exceljs's streaming writer, in two passes over the
 * results (the first finds each engine's fields). Every text cell a spreadsheet could run as a
 * formula is prefixed with an apostrophe, as in the CSV.
 */
import type { Writable } from 'node:stream';
import type { Catalog } from '../engine/catalog.js';
import { engineKeys } from '../analysis/rows.js';
import type { ObservableResult } from '../runner/result.js';
import type { Verdict } from '../verdict/verdict.js';
import { engineLines, judged, neutraliseFormula, type ExportSource } from './common.js';
import { markingLabel } from '../marking/levels.js';

/** The fixed columns of "Observables" (then one per engine) and of an engine sheet (then its fields). */
/** The first columns of the Observables sheet; `found_in`: where it was found in its file (issue 35), one place a line. */
export const OBSERVABLE_COLUMNS = ['observable', 'type', 'reversed_ip', 'verdict', 'reasons', 'found_in'] as const;
export const ENGINE_COLUMNS = ['observable', 'type', 'status', 'summary'] as const;
/** Most field columns in one engine sheet; the other fields go, as JSON, into a last `other` column. */
const FIELDS_MAX = 150;
/** Nesting flattened into columns; deeper objects are one JSON cell. */
const DEPTH_MAX = 3;
/** Excel's limit on the characters of one cell. */
const CELL_MAX = 32_767;

const FILL: Record<Verdict, string> = { malicious: 'FFF4CCCC', suspicious: 'FFFCE5B6', clean: 'FFD3EED3', unknown: 'FFE4E4E4' };

type Cell = string | number | boolean;

/** A result's fields as flat columns: nested objects as dotted paths, lists of plain values joined. */
export function flatten(value: unknown, prefix = '', out: Map<string, Cell> = new Map(), depth = 0): Map<string, Cell> {
  const key = prefix || 'value';
  if (value === null || value === undefined) {
    if (prefix) out.set(key, '');
  } else if (typeof value === 'string' || typeof value === 'boolean') {
    out.set(key, value);
  } else if (typeof value === 'number') {
    out.set(key, Number.isFinite(value) ? value : String(value));
  } else if (Array.isArray(value)) {
    const plain = value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
    out.set(key, plain ? value.map((v) => String(v ?? '')).join(', ') : JSON.stringify(value));
  } else if (typeof value === 'object' && depth < DEPTH_MAX) {
    const entries = Object.entries(value);
    if (entries.length === 0 && prefix) out.set(key, '');
    for (const [name, inner] of entries) flatten(inner, prefix ? `${prefix}.${name}` : name, out, depth + 1);
  } else {
    out.set(key, JSON.stringify(value));
  }
  return out;
}

/** A cell as written: text made safe and cut to Excel's limit. */
export function xlsxCell(value: Cell): Cell {
  if (typeof value !== 'string') return value;
  const safe = neutraliseFormula(value);
  return safe.length > CELL_MAX ? `${safe.slice(0, CELL_MAX - 1)}…` : safe;
}

/** A sheet name Excel accepts (31 characters, none of : \ / ? * [ ]), unique in the workbook. */
function sheetName(engine: string, taken: Set<string>): string {
  const base = (engine.replace(/[:\\/?*[\]]/g, '_').replace(/^'+|'+$/g, '') || 'engine').slice(0, 31);
  let name = base;
  for (let n = 2; taken.has(name.toLowerCase()) || name.toLowerCase() === 'history'; n++) name = `${base.slice(0, 31 - String(n).length - 1)}~${n}`;
  taken.add(name.toLowerCase());
  return name;
}

/** Writes the workbook to `out` (which it ends). */
export async function writeXlsx(source: ExportSource, catalog: Catalog, out: Writable): Promise<void> {
  // First pass: the engines, in order of appearance, and each one's field columns (no verdict
  // needed: the results are only parsed).
  const engines = new Map<string, { fields: Set<string>; more: boolean }>();
  for await (const page of source.pages()) {
    for (const stored of page) {
      const result = JSON.parse(stored.value) as ObservableResult;
      for (const key of engineKeys(result)) {
        let engine = engines.get(key);
        if (!engine) engines.set(key, (engine = { fields: new Set(), more: false }));
        if (result.errors?.[key] !== undefined) continue;
        for (const field of flatten(result[key]).keys()) {
          if (engine.fields.has(field)) continue;
          if (engine.fields.size < FIELDS_MAX) engine.fields.add(field);
          else engine.more = true;
        }
      }
    }
  }

  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  workbook.creator = 'oas';
  workbook.created = new Date(Date.parse(source.finished_at ?? '') || Date.parse(source.created_at) || Date.now());
  const header = { font: { bold: true } };
  const frozen = [{ state: 'frozen' as const, ySplit: 1 }];
  const taken = new Set<string>(['observables']);

  const keys = [...engines.keys()];
  // A marked analysis's first line says its marking (issue 34); the column names follow it.
  const headerRow = source.marking ? 2 : 1;
  const main = workbook.addWorksheet('Observables', { views: [{ state: 'frozen' as const, ySplit: headerRow }] });
  const mainColumns = [...OBSERVABLE_COLUMNS, ...keys];
  main.columns = mainColumns.map((name) => ({ ...(source.marking ? {} : { header: name }), key: name, width: name === 'reasons' || name === 'found_in' ? 60 : name === 'observable' ? 40 : 24 }));
  if (source.marking) {
    const line = main.addRow([markingLabel(source.marking)]);
    line.font = header.font;
    line.commit();
    main.addRow(mainColumns);
  }
  main.getRow(headerRow).font = header.font;
  main.autoFilter = { from: { row: headerRow, column: 1 }, to: { row: headerRow, column: mainColumns.length } };

  const sheets = new Map<string, { sheet: ReturnType<typeof workbook.addWorksheet>; fields: string[]; columns: ReadonlySet<string>; more: boolean }>();
  for (const [key, engine] of engines) {
    const fields = [...engine.fields];
    const sheet = workbook.addWorksheet(sheetName(key, taken), { views: frozen });
    sheet.columns = [...ENGINE_COLUMNS, ...fields, ...(engine.more ? ['other'] : [])].map((name) => ({ header: name, key: name, width: name === 'observable' ? 40 : 24 }));
    sheet.getRow(1).font = header.font;
    sheets.set(key, { sheet, fields, columns: engine.fields, more: engine.more });
  }

  // Second pass: the rows.
  for await (const { result, verdict, reasons } of judged(source, catalog)) {
    const lines = new Map(engineLines(result, catalog).map((line) => [line.engine, line]));
    const row = main.addRow([result.observable, result.type, result.reversed_ip ?? '', verdict, reasons.join('\n'), (result.found_in ?? []).join('\n'), ...keys.map((key) => lines.get(key)?.summary ?? '')].map(xlsxCell));
    row.getCell(4).fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: FILL[verdict] } };
    row.getCell(5).alignment = { wrapText: true, vertical: 'top' };
    row.getCell(6).alignment = { wrapText: true, vertical: 'top' };
    row.commit();
    for (const [key, line] of lines) {
      const target = sheets.get(key);
      if (!target) continue;
      const values = line.status === 'error' ? new Map<string, Cell>() : flatten(result[key]);
      const cells: Cell[] = [result.observable, result.type, line.status, line.summary, ...target.fields.map((f) => values.get(f) ?? '')];
      if (target.more) {
        const rest = Object.fromEntries([...values].filter(([f]) => !target.columns.has(f)));
        cells.push(Object.keys(rest).length > 0 ? JSON.stringify(rest) : '');
      }
      target.sheet.addRow(cells.map(xlsxCell)).commit();
    }
  }
  main.commit();
  for (const { sheet } of sheets.values()) sheet.commit();
  await workbook.commit();
}
