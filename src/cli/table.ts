/** cli-table3 rendering sized to the terminal. */
import Table from 'cli-table3';
import type { ResultRow } from '../analysis/rows.js';
import type { Verdict } from '../verdict/verdict.js';

export interface TableOptions {
  /**
   * ANSI colours (verdicts, heading, borders), always in addition to the text. Default: standard
   * output is a terminal and NO_COLOR is not set.
   */
  color?: boolean;
}

/** Colours only when standard output is a terminal and NO_COLOR (https://no-color.org) is unset or empty. */
export function useColor(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env['NO_COLOR'];
}

const VERDICT_COLOR: Record<Verdict, string> = {
  malicious: '\u001b[1;31m', // bold red
  suspicious: '\u001b[33m', // yellow (amber)
  clean: '\u001b[32m', // green
  unknown: '\u001b[90m', // grey
};
const RESET = '\u001b[0m';

/** Columns the verdict, type and borders take whatever the terminal's width. */
const VERDICT_WIDTH = 12; // "suspicious" and one space each side
const TYPE_WIDTH = 8;
const BORDERS = 6; // five columns

/**
 * The (observable, engine) rows, with the observable's verdict first after it, then one line per
 * malicious or suspicious observable with its reasons, and the count of each verdict.
 */
export function renderTable(rows: readonly ResultRow[], columns = 120, options: TableOptions = {}): string {
  const color = options.color ?? useColor();
  const width = Math.max(80, columns || 120);
  // Engine and observable get what they need up to a cap (the observable at most 45% of what
  // the engine leaves, so the summary keeps room); the summary takes the rest, at least 20.
  const fixed = VERDICT_WIDTH + TYPE_WIDTH + BORDERS;
  const engine = Math.min(22, Math.max(8, ...rows.map((r) => r.engine.length + 2)));
  const observableCap = Math.max(12, Math.min(48, Math.floor((width - fixed - engine) * 0.45)));
  const observable = Math.min(observableCap, Math.max(12, ...rows.map((r) => r.observable.length + 2)));
  const summary = Math.max(20, width - fixed - observable - engine);
  const table = new Table({
    head: ['Observable', 'Verdict', 'Type', 'Engine', 'Summary'],
    colWidths: [observable, VERDICT_WIDTH, TYPE_WIDTH, engine, summary],
    wordWrap: true,
    style: { head: color ? ['cyan'] : [], border: color ? ['grey'] : [] },
  });
  // A long observable (a URL) is cut anywhere rather than truncated: it always shows whole.
  for (const row of rows) table.push([{ content: row.observable, wrapOnWordBoundary: false }, paint(row.verdict, color), row.type, row.engine, row.summary]);
  return `${table.toString()}${verdictFooter(rows, width, color)}`;
}

function paint(verdict: Verdict, color: boolean): string {
  return color ? `${VERDICT_COLOR[verdict]}${verdict}${RESET}` : verdict;
}

/**
 * After the table: each malicious or suspicious observable with its reasons (one per line,
 * wrapped to the width), then `Verdicts: 1 malicious, 0 suspicious, 2 clean, 1 unknown`.
 */
function verdictFooter(rows: readonly ResultRow[], width: number, color: boolean): string {
  const seen = new Map<string, ResultRow>();
  for (const row of rows) if (!seen.has(`${row.type}\u0000${row.observable}`)) seen.set(`${row.type}\u0000${row.observable}`, row);
  if (seen.size === 0) return '';
  const observables = [...seen.values()];
  const lines: string[] = [];
  for (const verdict of ['malicious', 'suspicious'] as const) {
    for (const row of observables.filter((r) => r.verdict === verdict)) {
      lines.push(`${paint(verdict, color)} ${row.observable}`);
      for (const reason of row.reasons) lines.push(...wrap(reason, width, '  - ', '    '));
    }
  }
  const counts = (['malicious', 'suspicious', 'clean', 'unknown'] as const).map((v) => `${observables.filter((r) => r.verdict === v).length} ${v}`);
  lines.push(`Verdicts: ${counts.join(', ')}`);
  return `\n${lines.join('\n')}`;
}

/** `text` in lines of at most `width` characters, the first after `first`, the others after `rest`. */
function wrap(text: string, width: number, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** A plain table with given headings (for `oas engines`). */
export function renderGrid(head: string[], rows: string[][]): string {
  const color = useColor();
  const table = new Table({
    head,
    wordWrap: true,
    style: { head: color ? ['cyan'] : [], border: color ? ['grey'] : [] },
  });
  table.push(...rows);
  return table.toString();
}
