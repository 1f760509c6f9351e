/** cli-table3 rendering sized to the terminal. */
import Table from 'cli-table3';
import type { ResultRow } from '../analysis/rows.js';

export function renderTable(rows: readonly ResultRow[], columns = 120): string {
  const width = Math.max(80, columns || 120);
  // Observable, type and engine get what they need up to a cap; the summary takes the rest.
  const observable = Math.min(48, Math.max(12, ...rows.map((r) => r.observable.length + 2)));
  const engine = Math.min(22, Math.max(8, ...rows.map((r) => r.engine.length + 2)));
  const summary = Math.max(20, width - observable - engine - 8 - 5);
  const table = new Table({
    head: ['Observable', 'Type', 'Engine', 'Summary'],
    colWidths: [observable, 8, engine, summary],
    wordWrap: true,
    style: { head: process.stdout.isTTY ? ['cyan'] : [], border: process.stdout.isTTY ? ['grey'] : [] },
  });
  for (const row of rows) table.push([row.observable, row.type, row.engine, row.summary]);
  return table.toString();
}

/** A plain table with given headings (for `oas engines`). */
export function renderGrid(head: string[], rows: string[][]): string {
  const table = new Table({
    head,
    wordWrap: true,
    style: { head: process.stdout.isTTY ? ['cyan'] : [], border: process.stdout.isTTY ? ['grey'] : [] },
  });
  table.push(...rows);
  return table.toString();
}
