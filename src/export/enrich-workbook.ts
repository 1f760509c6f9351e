/**
 * The .xlsx side of `oas enrich` (issue 35), with exceljs: the first worksheet's cells as text (its
 * first row the column names; a link's target counts as its text), and the same workbook written
 * back with the new columns after the sheet's last used column: the original cells' values are
 * left as they were, the other sheets kept. What exceljs does not carry over (charts, pivot
 * tables, macros) is lost, as in any exceljs round trip. A row without observable gets no new cell;
 * the new cells are guarded against formulas and cut to Excel's limit as the xlsx export's are
 * (`xlsxCell`).
 */
import type { Row, Workbook, Worksheet } from 'exceljs';
import { InputError } from '../analysis/request.js';
import type { SheetRows } from './enrich-cells.js';
import { xlsxCell } from './xlsx.js';

export interface ReadWorkbook {
  workbook: Workbook;
  sheet: Worksheet;
  rows: SheetRows;
  /** The sheet's last used column: the new ones come after it. */
  width: number;
}

/** Reads the workbook; one exceljs cannot read (not a workbook, encrypted, damaged) is an InputError naming it. */
export async function readWorkbook(bytes: Buffer, name: string): Promise<ReadWorkbook> {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (error) {
    throw new InputError(`${name}: cannot read it as an .xlsx workbook (${error instanceof Error ? error.message : String(error)}); is it an unencrypted Excel file?`);
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new InputError(`${name}: the workbook has no worksheet`);
  const width = sheet.columnCount;
  const textOf = (row: Row, column: number): string => {
    const cell = row.getCell(column);
    const text = cell.text ?? '';
    const link = typeof cell.hyperlink === 'string' && cell.hyperlink !== text ? cell.hyperlink : '';
    return link ? `${text} ${link}` : text;
  };
  const columns = Array.from({ length: width }, (_, index) => index + 1);
  const header = columns.map((column) => sheet.getRow(1).getCell(column).text ?? '');
  const rows: SheetRows['rows'] = [];
  sheet.eachRow((row, number) => {
    if (number > 1) rows.push({ number, cells: columns.map((column) => textOf(row, column)) });
  });
  return { workbook, sheet, rows: { header, rows }, width };
}

/**
 * The workbook as bytes, the first sheet with `names` in its first row after `width` (in the font
 * of its last column name) and each row's cells of `cells` (by row number) under them.
 */
export async function writeWorkbook(read: ReadWorkbook, names: readonly string[], cells: ReadonlyMap<number, readonly string[]>): Promise<Buffer> {
  const { sheet, width } = read;
  const header = sheet.getRow(1);
  const font = width > 0 ? header.getCell(width).font : undefined;
  names.forEach((name, index) => {
    const cell = header.getCell(width + 1 + index);
    cell.value = xlsxCell(name);
    if (font) cell.font = font;
  });
  for (const [number, values] of cells) {
    const row = sheet.getRow(number);
    values.forEach((value, index) => {
      if (value !== '') row.getCell(width + 1 + index).value = xlsxCell(value);
    });
  }
  return Buffer.from(await read.workbook.xlsx.writeBuffer());
}
