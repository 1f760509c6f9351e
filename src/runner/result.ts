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

export const RESERVED_KEYS = new Set(['observable', 'type', 'found_in', 'reversed_success', 'reversed_ip', 'errors', 'withheld', 'allowlisted']);
