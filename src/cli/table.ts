/**
 * The terminal's layouts, sized to its width (`COLUMNS`, else the terminal's, else 100): the
 * analysis as one block per observable (verdict first), and `oas engines` as aligned columns.
 *
 * Every text they are given (upstreams' answers, observables, names from the configuration) is
 * laid out inert (src/text/inert.ts): a control character or a bidi control shows as an escape
 * such as `\x1b`, never acts on the terminal; the only escape sequences written are the colours.
 */
import Table from 'cli-table3';
import type { ResultRow } from '../analysis/rows.js';
import { inertLine } from '../text/inert.js';
import { markingLabel, papLabel, tlpLabel, type Marking, type Pap, type Tlp } from '../marking/levels.js';
import type { Verdict } from '../verdict/verdict.js';

export interface TableOptions {
  /**
   * ANSI colours (verdicts, engine names), always in addition to the text. Default: standard
   * output is a terminal and NO_COLOR is not set.
   */
  color?: boolean;
  /**
   * The engine names the caller typed (`--engines`), undefined when the default engines ran. A
   * result key the caller typed is shown as typed (an id stays an id, an alias an alias); any
   * other key is shown by its service name (`ipapi`, not `provider_11`).
   */
  named?: readonly string[] | undefined;
  /** Lines of the footer after the verdict counts (`3 observable(s), 2 engine(s)`, `analysis <id>`), joined by ` · ` as the width allows. */
  footer?: readonly string[];
  /** The environment `COLUMNS` is read from (default: the process's). */
  env?: NodeJS.ProcessEnv;
}

/** Colours only when standard output is a terminal and NO_COLOR (https://no-color.org) is unset or empty. */
export function useColor(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env['NO_COLOR'];
}

/** Width when neither `COLUMNS` nor a terminal gives one (a pipe, a file). */
export const DEFAULT_WIDTH = 100;
/** Narrower than this, the layouts would be mostly indentation: they are laid out at this width. */
export const MIN_WIDTH = 40;

/**
 * The width to lay the output out in: `COLUMNS` (a positive integer), else `terminalColumns` (the
 * terminal's width when the output is one), else 100; never under 40.
 */
export function outputWidth(terminalColumns?: number, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = /^\s*\d+\s*$/.test(env['COLUMNS'] ?? '') ? Number(env['COLUMNS']) : 0;
  const width = fromEnv > 0 ? fromEnv : terminalColumns !== undefined && terminalColumns > 0 ? terminalColumns : DEFAULT_WIDTH;
  return Math.max(MIN_WIDTH, Math.floor(width));
}

const VERDICT_COLOR: Record<Verdict, string> = {
  malicious: '\u001b[1;31m', // bold red
  suspicious: '\u001b[33m', // yellow (amber)
  clean: '\u001b[32m', // green
  unknown: '\u001b[90m', // grey
};
const BOLD = '\u001b[1m';
const CYAN = '\u001b[36m';
const RED = '\u001b[31m';
const RESET = '\u001b[0m';
const STRIKE = '\u001b[9m';

/** "suspicious", the longest verdict: the observable starts after it and two spaces. */
const VERDICT_WIDTH = 10;
const OBSERVABLE_INDENT = VERDICT_WIDTH + 2;
/** The engine names' column is at most this wide (a longer name pushes its summary along). */
const LABEL_CAP = 18;
/** Below this, a summary starts on the line under its engine's name. */
const MIN_SUMMARY = 20;

/**
 * The analysis, one block per observable in input order:
 *
 * ```
 * suspicious  8.8.8.8  IPv4
 *             seen 3 times since 2026-11-02, last malicious
 *   - ipapi: Tor exit node
 *   ipapi        AS15169 Google LLC · US, Mountain View · datacenter
 *   reverse_dns  dns.google
 * ```
 *
 * The verdict first, then the observable (whole: a long one wraps), its type and reversed IP; where
 * it was found and what earlier analyses said of it (`seen`); its verdict's reasons; one line per
 * engine with its summary, wrapped under itself. Then the count of
 * each verdict and the caller's footer. No line is longer than the width (`columns`, the
 * terminal's; `COLUMNS` first; else 100), with or without colour.
 */
export function renderTable(given: readonly ResultRow[], columns?: number, options: TableOptions = {}): string {
  const rows = given.map(inertRow);
  const color = options.color ?? useColor();
  const width = outputWidth(columns, options.env);
  const typed = options.named === undefined ? undefined : new Set(options.named.map((n) => n.trim().toLowerCase()));
  const label = (row: ResultRow) => (row.engine === '-' ? '' : typed?.has(row.engine.toLowerCase()) ? row.engine : (row.service ?? row.engine));
  const groups = groupRows(rows);
  const labelWidth = Math.min(LABEL_CAP, Math.floor(width / 3), Math.max(0, ...rows.map((r) => label(r).length)));

  const blocks: string[] = [];
  for (const group of groups) {
    const first = group[0]!;
    const lines: string[] = [];
    // The verdict, then the observable cut into pieces that fit (never truncated).
    const pieces = breakObservable(first.observable, width - OBSERVABLE_INDENT);
    const indent = ' '.repeat(OBSERVABLE_INDENT);
    const verdict = (color ? `${VERDICT_COLOR[first.verdict]}${first.verdict}${RESET}` : first.verdict) + ' '.repeat(VERDICT_WIDTH - first.verdict.length + 2);
    pieces.forEach((piece, i) => lines.push(`${i === 0 ? verdict : indent}${color ? `${BOLD}${piece}${RESET}` : piece}`));
    // Its type and reversed IP, after it when they fit, else on the lines under it.
    const meta = first.type + (first.reversedIp ? ` · reversed IP ${first.reversedIp}` : '');
    const last = pieces.at(-1)!;
    if (OBSERVABLE_INDENT + last.length + 2 + meta.length <= width) lines[lines.length - 1] += `  ${meta}`;
    else lines.push(...wrapWords(meta, width, indent, indent));
    // Where it was found in its file (issue 35).
    if (first.foundIn?.length) lines.push(...wrapWords(`found in: ${first.foundIn.join('; ')}`, width, indent, indent));
    // What the earlier analyses of the store said of it (issue 38).
    if (first.seen) lines.push(...wrapWords(first.seen, width, indent, indent));
    // Why: the verdict's reasons, each engine named as in the lines below (a reason that only
    // repeats its engine's summary, "bad_asn: AS15169 not listed", is left to that line).
    const names = new Map(group.map((r) => [r.engine, label(r)]));
    const summaries = new Set(group.map((r) => `${r.engine}: ${r.summary}`));
    for (const reason of first.reasons) {
      if (!summaries.has(reason)) lines.push(...wrapWords(relabel(reason, names), width, '  - ', '    '));
    }
    // An analyst's mark decided (issue 38): what the engines said, struck through for a false positive.
    if (first.computed) {
      const { verdict: said, falsePositive } = first.computed;
      const shown = !falsePositive ? said : color ? `${STRIKE}${said}${RESET}` : `~~${said}~~`;
      lines.push(`${indent}the engines said ${shown}${falsePositive ? ' (a false positive, as marked)' : ''}`);
    }
    // One line per engine.
    for (const row of group) lines.push(...engineLines(label(row), row, labelWidth, width, color));
    blocks.push(lines.join('\n'));
  }

  const counts = (['malicious', 'suspicious', 'clean', 'unknown'] as const).map((v) => `${groups.filter((g) => g[0]!.verdict === v).length} ${v}`);
  const footer = [...wrapWords(`Verdicts: ${counts.join(', ')}`, width, '', ''), ...joinParts((options.footer ?? []).map(inertLine), width)];
  return [...blocks, footer.join('\n')].join('\n\n');
}

/** A row's texts as one inert line each (the verdict and status are our own words). */
function inertRow(row: ResultRow): ResultRow {
  return {
    ...row,
    observable: inertLine(row.observable),
    type: inertLine(row.type),
    reversedIp: row.reversedIp && inertLine(row.reversedIp),
    engine: inertLine(row.engine),
    service: row.service && inertLine(row.service),
    summary: inertLine(row.summary),
    reasons: row.reasons.map(inertLine),
    foundIn: row.foundIn?.map(inertLine),
    seen: row.seen && inertLine(row.seen),
  };
}

/** Consecutive rows of one observable (resultRows gives each observable's rows together). */
function groupRows(rows: readonly ResultRow[]): ResultRow[][] {
  const groups: ResultRow[][] = [];
  for (const row of rows) {
    const group = groups.at(-1);
    if (group && group[0]!.observable === row.observable && group[0]!.type === row.type) group.push(row);
    else groups.push([row]);
  }
  return groups;
}

/** `provider_11: Tor exit node` as `ipapi: Tor exit node` when the lines show provider_11 as ipapi. */
function relabel(reason: string, names: ReadonlyMap<string, string>): string {
  const colon = reason.indexOf(': ');
  const name = colon > 0 ? names.get(reason.slice(0, colon)) : undefined;
  return name ? `${name}${reason.slice(colon)}` : reason;
}

/** `  ipapi        summary`, the summary wrapped under itself; on the next line when the width leaves it too little room. */
function engineLines(label: string, row: ResultRow, labelWidth: number, width: number, color: boolean): string[] {
  const summary = row.summary.replace(/\s+/g, ' ').trim();
  const paintLabel = (text: string) => (color && text.trim() ? text.replace(label, `${CYAN}${label}${RESET}`) : text);
  const paintSummary = (text: string) => (color && row.status === 'error' && text.trim() ? `${RED}${text}${RESET}` : text);
  if (label === '') return wrapWords(summary, width, '  ', '  ').map(paintSummary);
  const column = 2 + labelWidth + 2;
  const first = `  ${label.padEnd(labelWidth)}  `;
  let lines: string[];
  if (width - Math.max(column, first.length) >= MIN_SUMMARY) {
    lines = wrapWords(summary, width, first, ' '.repeat(column));
    return lines.map((line, i) => (i === 0 ? paintLabel(line.slice(0, first.length)) + paintSummary(line.slice(first.length)) : line.slice(0, column) + paintSummary(line.slice(column))));
  }
  lines = [...wrapWords(label, width, '  ', '  ').map(paintLabel), ...wrapWords(summary, width, '    ', '    ').map((l) => l.slice(0, 4) + paintSummary(l.slice(4)))];
  return lines;
}

/**
 * `text` in lines of at most `width` characters, the first after `first`, the others after `rest`,
 * broken at spaces; a word longer than a line is cut.
 */
export function wrapWords(text: string, width: number, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  const fresh = width - length(rest);
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word !== '') {
      const room = width - length(line) - (empty ? 0 : 1);
      if (length(word) <= room) {
        line += empty ? word : ` ${word}`;
        empty = false;
        break;
      }
      // On a line of its own when it fits one, or when little room is left on this one.
      if (!empty && (length(word) <= fresh || room < Math.min(8, fresh))) {
        lines.push(line);
        line = rest;
        empty = true;
        continue;
      }
      // Longer than a whole line: cut, the rest on the following lines.
      const chars = Array.from(word);
      const cut = Math.max(1, room);
      lines.push(line + (empty ? '' : ' ') + chars.slice(0, cut).join(''));
      line = rest;
      empty = true;
      word = chars.slice(cut).join('');
    }
  }
  if (!empty || lines.length === 0) lines.push(line);
  return lines;
}

/**
 * An observable in pieces of at most `room` characters, joined they give it back exactly: a piece
 * ends after a `/`, `?`, `&`, `.` or `@` when one is in its second half, anywhere otherwise.
 */
export function breakObservable(observable: string, room: number): string[] {
  const chars = Array.from(observable);
  const pieces: string[] = [];
  const size = Math.max(1, room);
  let start = 0;
  while (chars.length - start > size) {
    let end = start + size;
    for (let i = end - 1; i > start + size / 2; i--) {
      if ('/?&.@=#;,-'.includes(chars[i]!)) {
        end = i + 1;
        break;
      }
    }
    pieces.push(chars.slice(start, end).join(''));
    start = end;
  }
  pieces.push(chars.slice(start).join(''));
  return pieces;
}

/** The footer's parts on as few lines as the width allows, joined by ` · `. */
function joinParts(parts: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const part of parts.filter(Boolean)) {
    if (line !== '' && length(line) + 3 + length(part) <= width) {
      line += ` · ${part}`;
      continue;
    }
    if (line !== '') lines.push(line);
    const wrapped = wrapWords(part, width, '', '  ');
    lines.push(...wrapped.slice(0, -1));
    line = wrapped.at(-1)!;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function length(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Columns a line takes on a terminal: its characters, colour codes left out. */
export function displayWidth(line: string): number {
  return length(line.replace(/\u001b\[[0-9;]*m/g, ''));
}

/** A column of `renderColumns`. */
export interface ColumnSpec {
  head: string;
  /** It takes what the fixed columns leave, down to `min` (default: its natural width, no less). */
  flexible?: boolean;
  min?: number;
  /** Dropped, rightmost first, when the width cannot hold every column at its minimum. */
  optional?: boolean;
}

/**
 * Aligned columns without borders, two spaces apart, each cell wrapped within its column: every
 * line fits `width` (the flexible columns shrink, then optional columns are dropped).
 */
export function renderColumns(given: readonly ColumnSpec[], cells: readonly string[][], width: number, options: { color?: boolean } = {}): string {
  const columns = given.map((c) => ({ ...c, head: inertLine(c.head) }));
  const rows = cells.map((row) => row.map(inertLine));
  const color = options.color ?? useColor();
  const natural = columns.map((c, i) => Math.max(length(c.head), ...rows.map((r) => length(r[i] ?? ''))));
  let shown = columns.map((_, i) => i);
  const minimum = (i: number) => (columns[i]!.flexible ? Math.min(natural[i]!, columns[i]!.min ?? 10) : natural[i]!);
  const needed = (list: number[]) => list.reduce((sum, i) => sum + minimum(i), 0) + 2 * (list.length - 1);
  while (needed(shown) > width) {
    const drop = [...shown].reverse().find((i) => columns[i]!.optional);
    if (drop === undefined) break;
    shown = shown.filter((i) => i !== drop);
  }
  const widths = new Map(shown.map((i) => [i, natural[i]!]));
  const total = () => [...widths.values()].reduce((a, b) => a + b, 0) + 2 * (shown.length - 1);
  // Shrink the flexible columns, the widest first, down to their minimum.
  while (total() > width) {
    const flexible = shown.filter((i) => columns[i]!.flexible && widths.get(i)! > minimum(i));
    if (flexible.length === 0) break;
    const widest = flexible.reduce((a, b) => (widths.get(b)! > widths.get(a)! ? b : a));
    widths.set(widest, widths.get(widest)! - 1);
  }
  const lines: string[] = [];
  const emit = (cells: string[], head: boolean) => {
    const wrapped = shown.map((i, k) => wrapWords(cells[k] ?? '', widths.get(i)!, '', ''));
    const height = Math.max(...wrapped.map((w) => w.length));
    for (let n = 0; n < height; n++) {
      const parts = shown.map((i, k) => {
        const text = wrapped[k]![n] ?? '';
        const padded = k === shown.length - 1 ? text : text + ' '.repeat(Math.max(0, widths.get(i)! - length(text)));
        return head && color && text ? padded.replace(text, `${CYAN}${text}${RESET}`) : padded;
      });
      lines.push(parts.join('  ').trimEnd());
    }
  };
  emit(shown.map((i) => columns[i]!.head), true);
  for (const row of rows) emit(shown.map((i) => row[i] ?? ''), false);
  return lines.join('\n');
}

/** A plain table with given headings and borders, as wide as its content (`oas engines --wide`). */
export function renderGrid(head: string[], rows: string[][]): string {
  const color = useColor();
  const table = new Table({
    head: head.map(inertLine),
    wordWrap: true,
    style: { head: color ? ['cyan'] : [], border: color ? ['grey'] : [] },
  });
  table.push(...rows.map((row) => row.map(inertLine)));
  return table.toString();
}

/** FIRST's TLP 2.0 colours on a terminal (red, amber, green; CLEAR is white); PAP uses the same. */
const MARKING_COLOURS: Record<Tlp | Pap, string> = {
  RED: '\u001b[1;31m',
  'AMBER+STRICT': '\u001b[1;33m',
  AMBER: '\u001b[1;33m',
  GREEN: '\u001b[1;32m',
  CLEAR: '\u001b[1;37m',
};

/**
 * The line above the table that says how the analysis is marked (issue 34): `TLP:AMBER · PAP:GREEN`,
 * each label in its standard's colour when `color`.
 */
export function markingLine(marking: Marking, color: boolean): string {
  if (!color) return markingLabel(marking);
  const paint = (label: string, level: Tlp | Pap) => `${MARKING_COLOURS[level]}${label}${RESET}`;
  return `${paint(tlpLabel(marking.tlp), marking.tlp)} · ${paint(papLabel(marking.pap), marking.pap)}`;
}
