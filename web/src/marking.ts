/**
 * An analysis's TLP and PAP as the pages show them (issue 34): each as a label in the standard's
 * colours, the level's colour on black as FIRST's TLP 2.0 specifies (RED #FF2B2B, AMBER #FFC000,
 * GREEN #33FF00, CLEAR white; AMBER+STRICT as AMBER). PAP has no colours of its own: its labels
 * take the same ones. The text always spells the level (`TLP:AMBER+STRICT`), colour only adds to it.
 * Records of older versions have no marking: nothing is drawn for them.
 */
import { el } from './dom.js';
import type { PapLevel, TlpLevel } from '../../src/view/types.js';

/** `AMBER+STRICT` → `amber-strict`: the level's class name. */
function levelClass(level: string): string {
  return level.toLowerCase().replace(/[^a-z]+/g, '-');
}

/** One label, `TLP:RED` or `PAP:GREEN`. */
export function markingBadge(kind: 'TLP' | 'PAP', level: TlpLevel | PapLevel): HTMLElement {
  return el('span', { class: `marking marking-${levelClass(level)}`, 'data-kind': kind.toLowerCase(), 'data-level': level }, `${kind}:${level}`);
}

/** Both labels of an analysis, or null when it has none (a record of an older version). */
export function markingLabels(marking: { tlp: TlpLevel | null; pap: PapLevel | null }, id?: string): HTMLElement | null {
  if (marking.tlp === null && marking.pap === null) return null;
  const title = [marking.tlp ? `TLP:${marking.tlp}: who may receive what this analysis holds` : '', marking.pap ? `PAP:${marking.pap}: what may be done with it` : ''].filter(Boolean).join('; ');
  return el('span', { class: 'markings', id: id ?? null, title },
    marking.tlp ? markingBadge('TLP', marking.tlp) : null,
    marking.tlp && marking.pap ? ' ' : null,
    marking.pap ? markingBadge('PAP', marking.pap) : null);
}
