/**
 * The figures `npm run bench` holds against a goal (issue 33's table, and the poll and fairness
 * goals of earlier issues), gathered as the sections measure them and printed together at the end,
 * each next to its goal and whether it met it. A section that could not measure a figure (no
 * /proc, no redis-server) reports it as n/a rather than leaving it out.
 */

export interface GoalRow {
  figure: string;
  /** What was measured, as printed. */
  value: string;
  goal: string;
  /** undefined: not measured. */
  met: boolean | undefined;
}

const rows: GoalRow[] = [];

/** Records one figure against its goal. */
export function goal(figure: string, value: string, goalText: string, met: boolean | undefined): void {
  rows.push({ figure, value, goal: goalText, met });
}

/** The recorded figures, for a caller that prints them itself. */
export function goals(): readonly GoalRow[] {
  return rows;
}

/** The table of every recorded figure: figure, measured, goal, met. */
export function printGoals(): void {
  console.log('\nFigures and their goals');
  const width = Math.max(...rows.map((r) => r.figure.length), 6);
  const valueWidth = Math.max(...rows.map((r) => r.value.length), 8);
  const goalWidth = Math.max(...rows.map((r) => r.goal.length), 4);
  console.log(`  ${'figure'.padEnd(width)}  ${'measured'.padEnd(valueWidth)}  ${'goal'.padEnd(goalWidth)}  met`);
  for (const r of rows) console.log(`  ${r.figure.padEnd(width)}  ${r.value.padEnd(valueWidth)}  ${r.goal.padEnd(goalWidth)}  ${r.met === undefined ? 'n/a' : r.met ? 'yes' : 'NO'}`);
  const missed = rows.filter((r) => r.met === false).length;
  console.log(`  ${rows.length} figures: ${rows.filter((r) => r.met).length} met, ${missed} missed, ${rows.filter((r) => r.met === undefined).length} not measured`);
}
