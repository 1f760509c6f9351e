/**
 * TLP and PAP, as FIRST defines them (issue 34): who may receive what an analysis holds (TLP 2.0:
 * CLEAR < GREEN < AMBER < AMBER+STRICT < RED) and what may be done with it (PAP: CLEAR < GREEN <
 * AMBER < RED). Levels are written as the standards spell them, upper case without the prefix;
 * `TLP:RED`, `red` and `Tlp:Amber+Strict` are read as they mean.
 */

export const TLP_LEVELS = ['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED'] as const;
export const PAP_LEVELS = ['CLEAR', 'GREEN', 'AMBER', 'RED'] as const;

export type Tlp = (typeof TLP_LEVELS)[number];
export type Pap = (typeof PAP_LEVELS)[number];

/**
 * Where an engine sends an observable: `none` (nothing leaves the process: local lists),
 * `internal` (a server or tenant the team runs) or `third_party` (a public service).
 */
export type Disclosure = 'none' | 'internal' | 'third_party';
export const DISCLOSURES: readonly Disclosure[] = ['none', 'internal', 'third_party'];

/** A marking that could not be read: names the allowed values. */
export class MarkingError extends Error {
  override name = 'MarkingError';
}

/** An analysis's marking. */
export interface Marking {
  tlp: Tlp;
  pap: Pap;
}

function levelOf<L extends string>(kind: 'TLP' | 'PAP', levels: readonly L[], value: unknown): L | undefined {
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toUpperCase().replace(new RegExp(`^${kind}:`), '');
  return (levels as readonly string[]).includes(word) ? (word as L) : undefined;
}

function parseLevel<L extends string>(kind: 'TLP' | 'PAP', levels: readonly L[], value: unknown): L {
  const level = levelOf(kind, levels, value);
  if (level !== undefined) return level;
  const shown = typeof value === 'string' ? `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"` : String(value);
  throw new MarkingError(`${shown} is no ${kind} level: use one of ${levels.join(', ')} (with or without "${kind}:", in any case)`);
}

/** `red`, `TLP:RED`, ` Amber+Strict ` -> the level; anything else throws MarkingError. */
export function parseTlp(value: unknown): Tlp {
  return parseLevel('TLP', TLP_LEVELS, value);
}

export function parsePap(value: unknown): Pap {
  return parseLevel('PAP', PAP_LEVELS, value);
}

/** The level `value` names, or undefined (never throws). */
export const tlpOf = (value: unknown): Tlp | undefined => levelOf('TLP', TLP_LEVELS, value);
export const papOf = (value: unknown): Pap | undefined => levelOf('PAP', PAP_LEVELS, value);

/**
 * The `tlp` and `pap` a request, a flag or a tool call gives, each optional; a value that is no
 * level throws MarkingError naming its field and the allowed values (`tlp: "PURPLE" is no TLP level: ...`).
 */
export function parseMarking(given: { tlp?: unknown; pap?: unknown }): { tlp?: Tlp; pap?: Pap } {
  const read = <L>(field: string, value: unknown, parse: (value: unknown) => L): L | undefined => {
    if (value === undefined) return undefined;
    try {
      return parse(value);
    } catch (error) {
      throw new MarkingError(`${field}: ${(error as Error).message}`);
    }
  };
  const tlp = read('tlp', given.tlp, parseTlp);
  const pap = read('pap', given.pap, parsePap);
  return { ...(tlp ? { tlp } : {}), ...(pap ? { pap } : {}) };
}

/** The whole marking a record holds (an analysis's header), or undefined when it lacks either (older versions). */
export function recordedMarking(record: { tlp?: Tlp | undefined; pap?: Pap | undefined }): Marking | undefined {
  return record.tlp && record.pap ? { tlp: record.tlp, pap: record.pap } : undefined;
}

/** The level's rank: CLEAR is 0. */
export function tlpRank(level: Tlp): number {
  return TLP_LEVELS.indexOf(level);
}

export function papRank(level: Pap): number {
  return PAP_LEVELS.indexOf(level);
}

/** `TLP:AMBER+STRICT`: how a level is written for people. */
export const tlpLabel = (level: Tlp): string => `TLP:${level}`;
export const papLabel = (level: Pap): string => `PAP:${level}`;
/** `TLP:AMBER · PAP:GREEN`. */
export const markingLabel = (marking: Marking): string => `${tlpLabel(marking.tlp)} · ${papLabel(marking.pap)}`;

/** An engine's default TLP ceiling: a third party gets at most AMBER, the team's own servers anything. */
export function defaultMaxTlp(disclosure: Disclosure): Tlp {
  return disclosure === 'third_party' ? 'AMBER' : 'RED';
}

/**
 * An engine's default PAP ceiling: GREEN for a lookup that can reach the observable's own
 * infrastructure (PAP:AMBER forbids any such activity, wherever it is run from), else RED for what
 * stays in-house and AMBER for a third party's lookup.
 */
export function defaultMaxPap(disclosure: Disclosure, touchesTarget: boolean): Pap {
  if (touchesTarget) return 'GREEN';
  return disclosure === 'third_party' ? 'AMBER' : 'RED';
}

/** An engine's ceilings: the most restrictive TLP and PAP of an analysis it may receive. */
export interface Ceilings {
  maxTlp: Tlp;
  maxPap: Pap;
}

/**
 * An engine's ceilings: its settings `max_tlp` and `max_pap` when set, else the defaults of its
 * declarations. Here, beside the levels, so that listing the engines (`oas engines`, `/ui/engines`)
 * needs nothing of the withholding's own (src/marking/policy.ts).
 */
export function ceilingsOf(engine: { disclosure: Disclosure; touchesTarget: boolean }, settings: Readonly<Record<string, unknown>>): Ceilings {
  return {
    maxTlp: settings.max_tlp === undefined ? defaultMaxTlp(engine.disclosure) : parseTlp(settings.max_tlp),
    maxPap: settings.max_pap === undefined ? defaultMaxPap(engine.disclosure, engine.touchesTarget) : parsePap(settings.max_pap),
  };
}
