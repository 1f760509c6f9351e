/** The shape of one element of an analysis result (the spec's "Analysis result"). */
import type { ObservableType } from '../observables/types.js';

export interface ObservableResult {
  observable: string;
  type: ObservableType;
  /** Where the observable was found in the file(s) it came from (issue 35); absent for a pasted text. */
  found_in?: string[];
  /**
   * The allowlist's entry that covers it (issue 38): then no engine was sent it (each is
   * `withheld` with `allowlisted: <reason>`) and its verdict is clean. Absent otherwise.
   */
  allowlisted?: { value: string; reason: string; by: string; expires?: string };
  /**
   * The analyst's mark on the observable when it was analysed (issue 38): its verdict replaces the
   * engines' (kept as `computed_verdict` beside the verdict). Absent when none applied.
   */
  mark?: ObservableMark;
  /**
   * The earlier analyses of this store that held the observable (issue 38), as the analysis began;
   * null when none did. Absent in results of older versions.
   */
  seen?: SeenBefore | null;
  /** True when the observable was resolved to at least one address or name during this analysis. */
  reversed_success: boolean;
  /** The IP that IP-only engines ran on for a domain or URL, when they did. */
  reversed_ip?: string;
  /** Engine key -> one-line reason, for each engine that failed. Absent when none failed. */
  errors?: Record<string, string>;
  /**
   * Engine key -> one line: why the engine was not sent this observable (its TLP/PAP ceiling, the
   * observable inside the team's networks or domains). Its key is null. Absent when none was.
   */
  withheld?: Record<string, string>;
  /** One key per selected engine, named as the caller named it: its result object or null. */
  [engineKey: string]: unknown;
}

/** An analyst's verdict on an observable (issue 38: `oas mark`, POST /api/marks). */
export interface ObservableMark {
  verdict: 'malicious' | 'suspicious' | 'clean' | 'false_positive';
  note: string;
  /** Who marked it: a user's name, `cli:<account>`. */
  by: string;
  /** When, ISO 8601. */
  at: string;
  /** When it stops applying, ISO 8601; null: never. */
  expires: string | null;
}

/** The earlier analyses that held an observable (issue 38). */
export interface SeenBefore {
  count: number;
  /** When the first and the last of them started, ISO 8601. */
  first: string;
  last: string;
  /** The observable's verdict in the last of them. */
  last_verdict: string;
  last_analysis_id: string;
}

export const RESERVED_KEYS = new Set(['observable', 'type', 'found_in', 'reversed_success', 'reversed_ip', 'errors', 'withheld', 'allowlisted', 'mark', 'seen']);
