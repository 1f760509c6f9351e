/**
 * What the team already knows (issue 38), for every surface: the allowlist (the configuration's
 * entries and those added at run time) and the analysts' marks, read, changed and checked here
 * once; and, for each analysis as it starts, a snapshot of both (`snapshot`): the allowlist the
 * runner asks, and the mark each observable carries into its result.
 *
 * The rules (what a value covers, expiries) are src/marking/allowlist.ts's, loaded only when a
 * list has entries: an analysis where the team knows nothing yet loads no address parser.
 */
import type { AllowEntry, Allowlist } from '../marking/allowlist.js';
import type { Observable } from '../observables/types.js';
import type { ObservableMark } from '../runner/result.js';
import type { TeamList } from '../store/team-lists.js';
import { InputError } from './request.js';

/** A mark as it is kept and listed: the observable it is on, and the mark. */
export interface StoredMark extends ObservableMark {
  value: string;
}

export const MARK_VERDICTS = ['malicious', 'suspicious', 'clean', 'false_positive'] as const;

/** An entry of the setting `allowlist`. */
export interface ConfiguredEntry {
  value: string;
  reason: string;
  expires?: string | undefined;
}

/** An allowlist entry as listed: `config` ones cannot be removed at run time. */
export interface ListedEntry extends AllowEntry {
  /** Whether it applies now (false once past its expiry). */
  active: boolean;
}

/** Where the lists are, and the configuration's entries (read at each use: a reload changes them). */
export interface KnowledgeSources {
  allowlist: TeamList<AllowEntry>;
  marks: TeamList<StoredMark>;
  configured(): readonly ConfiguredEntry[];
  now?: () => number;
}

/** What one analysis knows as it starts. */
export interface KnowledgeSnapshot {
  /** The configuration's and the run-time entries; undefined when there are none. */
  allowlist: Allowlist | undefined;
  /** The mark on an observable that still applies at `now`, or undefined. */
  markOf(observable: Observable, now?: number): ObservableMark | undefined;
}

/** A request to change a list that cannot be done as asked: 400 on the API, exit 2 on the CLI. */
export class KnowledgeInputError extends InputError {}

/** No such entry or mark: 404 on the API. */
export class KnowledgeNotFoundError extends InputError {}

const MAX_REASON = 1000;

type Rules = typeof import('../marking/allowlist.js');
let rules: Promise<Rules> | undefined;
const loadRules = () => (rules ??= import('../marking/allowlist.js'));

const NOTHING: KnowledgeSnapshot = { allowlist: undefined, markOf: () => undefined };

export class TeamKnowledge {
  private readonly now: () => number;

  constructor(private readonly sources: KnowledgeSources) {
    this.now = sources.now ?? Date.now;
  }

  /** The configuration's entries first (author `config`), then those added at run time, by value. */
  async allowEntries(): Promise<ListedEntry[]> {
    const { configuredEntries } = await loadRules();
    const stored = await this.sources.allowlist.list();
    const now = this.now();
    return [...configuredEntries(this.sources.configured()), ...stored].map((entry) => ({ ...entry, active: entry.expires === null || Date.parse(entry.expires) > now }));
  }

  /** Adds (or replaces) a run-time entry; `by` is who adds it. */
  async allow(input: unknown, by: string): Promise<{ entry: AllowEntry; replaced: boolean }> {
    const { parseAllowValue, parseExpiry, AllowlistError } = await loadRules();
    const body = objectOf(input, '{ "value", "reason", "expires"? }');
    const value = text(body, 'value', 2048);
    const reason = text(body, 'reason', MAX_REASON);
    try {
      const parsed = parseAllowValue(value);
      const expires = optionalText(body, 'expires');
      if (this.sources.configured().some((entry) => safeValue(parseAllowValue, entry.value) === parsed.value)) {
        throw new KnowledgeInputError(`${parsed.value} is on the allowlist of the configuration (setting allowlist): change it there`);
      }
      const entry: AllowEntry = { value: parsed.value, reason, by, at: new Date(this.now()).toISOString(), expires: expires === undefined ? null : parseExpiry(expires, this.now()) };
      const replaced = await this.sources.allowlist.put(parsed.value, entry);
      return { entry, replaced };
    } catch (error) {
      if (error instanceof AllowlistError) throw new KnowledgeInputError(error.message);
      throw error;
    }
  }

  /** Removes a run-time entry by its value (as written or as listed); its entry. */
  async unallow(written: string): Promise<AllowEntry> {
    const { parseAllowValue } = await loadRules();
    const value = safeValue(parseAllowValue, written) ?? written.trim();
    const entry = await this.sources.allowlist.get(value);
    if (entry && (await this.sources.allowlist.remove(value))) return entry;
    if (this.sources.configured().some((e) => safeValue(parseAllowValue, e.value) === value)) {
      throw new KnowledgeInputError(`${shown(value)} is on the allowlist of the configuration (setting allowlist): remove it there`);
    }
    throw new KnowledgeNotFoundError(`${shown(value)} is not on the allowlist`);
  }

  /** Every mark, by value, with whether it applies now. */
  async marks(): Promise<(StoredMark & { active: boolean })[]> {
    const now = this.now();
    return (await this.sources.marks.list()).map((mark) => ({ ...mark, active: mark.expires === null || Date.parse(mark.expires) > now }));
  }

  /** Marks one observable (replacing its mark); `by` is who marks it. */
  async mark(input: unknown, by: string): Promise<{ mark: StoredMark; replaced: boolean }> {
    const { parseAllowValue, parseExpiry, AllowlistError } = await loadRules();
    const body = objectOf(input, '{ "value", "verdict", "note", "expires"? }');
    const written = text(body, 'value', 2048);
    const verdict = body.verdict;
    if (typeof verdict !== 'string' || !(MARK_VERDICTS as readonly string[]).includes(verdict)) {
      throw new KnowledgeInputError(`"verdict" must be one of ${MARK_VERDICTS.join(', ')}`);
    }
    const note = text(body, 'note', MAX_REASON);
    try {
      const parsed = parseAllowValue(written);
      if (parsed.kind === 'cidr' || parsed.kind === 'domain') {
        throw new KnowledgeInputError(`a mark is on one observable, not on ${parsed.kind === 'cidr' ? 'a range' : 'a domain pattern'} (${parsed.value}): the allowlist takes those`);
      }
      const expires = optionalText(body, 'expires');
      const now = this.now();
      const mark: StoredMark = {
        value: parsed.value,
        verdict: verdict as StoredMark['verdict'],
        note,
        by,
        at: new Date(now).toISOString(),
        expires: expires === undefined ? null : parseExpiry(expires, now),
      };
      const replaced = await this.sources.marks.put(parsed.value, mark);
      return { mark, replaced };
    } catch (error) {
      if (error instanceof AllowlistError) throw new KnowledgeInputError(error.message);
      throw error;
    }
  }

  /** Removes the mark on an observable (as written or as listed); the mark. */
  async unmark(written: string): Promise<StoredMark> {
    const { parseAllowValue } = await loadRules();
    const value = safeValue(parseAllowValue, written) ?? written.trim();
    const mark = await this.sources.marks.get(value);
    if (mark && (await this.sources.marks.remove(value))) return mark;
    throw new KnowledgeNotFoundError(`${shown(value)} has no mark`);
  }

  /** The marks that apply now to these observables, by value (the results page of an earlier analysis asks): the marks alone are read. */
  async currentMarks(observables: readonly Observable[]): Promise<Map<string, ObservableMark>> {
    const found = new Map<string, ObservableMark>();
    const marks = await this.sources.marks.list();
    if (marks.length === 0) return found;
    const markOf = marksOf(marks, (await loadRules()).observableKey, this.now);
    for (const observable of observables) {
      const mark = markOf(observable);
      if (mark) found.set(observable.value, mark);
    }
    return found;
  }

  /**
   * What an analysis starting now knows: both lists read once (one query each); the allowlist's
   * rules are loaded only when one has entries.
   */
  async snapshot(): Promise<KnowledgeSnapshot> {
    const configured = this.sources.configured();
    const [stored, marks] = await Promise.all([this.sources.allowlist.list(), this.sources.marks.list()]);
    if (configured.length === 0 && stored.length === 0 && marks.length === 0) return NOTHING;
    const rules = await loadRules();
    return {
      allowlist: configured.length + stored.length > 0 ? this.allowlistOf(rules, configured, stored) : undefined,
      markOf: marks.length > 0 ? marksOf(marks, rules.observableKey, this.now) : () => undefined,
    };
  }

  /** The last allowlist built, and what it was built from: built again only when the entries change, not per analysis. */
  private built: { configured: readonly ConfiguredEntry[]; stored: string; allowlist: Allowlist } | undefined;

  private allowlistOf(rules: Rules, configured: readonly ConfiguredEntry[], stored: readonly AllowEntry[]): Allowlist {
    const text = JSON.stringify(stored);
    if (this.built?.configured !== configured || this.built.stored !== text) {
      this.built = { configured, stored: text, allowlist: new rules.Allowlist([...rules.configuredEntries(configured), ...stored]) };
    }
    return this.built.allowlist;
  }
}

/** Which mark applies to an observable at `now` (given, else the clock's): by its key, unless expired. */
function marksOf(marks: readonly StoredMark[], keyOf: Rules['observableKey'], clock: () => number): KnowledgeSnapshot['markOf'] {
  const byValue = new Map(marks.map((mark) => [mark.value, mark]));
  return (observable, now = clock()) => {
    const mark = byValue.get(keyOf(observable));
    if (!mark || (mark.expires !== null && Date.parse(mark.expires) <= now)) return undefined;
    return { verdict: mark.verdict, note: mark.note, by: mark.by, at: mark.at, expires: mark.expires };
  };
}

function objectOf(input: unknown, shape: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new KnowledgeInputError(`expected a JSON object ${shape}`);
  return input as Record<string, unknown>;
}

function text(body: Record<string, unknown>, key: string, max: number): string {
  const value = body[key];
  if (typeof value !== 'string' || value.trim() === '') throw new KnowledgeInputError(`"${key}" is required: a non-empty string`);
  if (value.length > max) throw new KnowledgeInputError(`"${key}" is longer than ${max} characters`);
  return value.trim();
}

function optionalText(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new KnowledgeInputError(`"${key}" must be a duration (90s, 10m, 12h, 30d) or an ISO 8601 time`);
  return value;
}

function safeValue(parse: Rules['parseAllowValue'], written: string): string | undefined {
  try {
    return parse(written).value;
  } catch {
    return undefined;
  }
}

const shown = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}…` : value);

/** The knowledge of an analysis that knows nothing (tests, tools without a store). */
export const NO_KNOWLEDGE: KnowledgeSnapshot = NOTHING;
