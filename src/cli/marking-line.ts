/**
 * The line above `oas analyze`'s table that says how the analysis is marked (issue 34):
 * `TLP:AMBER · PAP:GREEN`, each label in its standard's colour on a colour terminal (FIRST's
 * TLP 2.0 colours: red, amber, green; CLEAR is white).
 */
import type { Pap, Tlp } from '../marking/levels.js';

const RESET = '\u001b[0m';
const COLOURS: Record<string, string> = {
  RED: '\u001b[1;31m',
  'AMBER+STRICT': '\u001b[1;33m',
  AMBER: '\u001b[1;33m',
  GREEN: '\u001b[1;32m',
  CLEAR: '\u001b[1;37m',
};

export function markingLine(tlp: Tlp, pap: Pap, color: boolean): string {
  const label = (kind: string, level: string) => (color ? `${COLOURS[level]}${kind}:${level}${RESET}` : `${kind}:${level}`);
  return `${label('TLP', tlp)} · ${label('PAP', pap)}`;
}
