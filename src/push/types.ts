/**
 * Pushing an analysis into the team's platforms (issue 37): MISP, OpenCTI and TheHive. This module
 * is the contract between the surfaces (`oas push`, `oas analyze --push`, the API, the results
 * page, MCP; src/push/service.ts) and the targets, one file each (src/push/misp.ts,
 * src/push/opencti.ts, src/push/thehive.ts): what a target is given (the analysis, the observables
 * at or above the threshold with their verdicts, reasons and engines' one-line summaries, its own
 * resolved settings and an HTTP client bound to its deadline and secret), and what it answers
 * (what it created or found, with counts, in one line) or throws (a PushError: one line naming the
 * target, what failed and what to check).
 *
 * A target is idempotent per analysis: pushing the same analysis twice finds what the first push
 * made (a MISP event of a fixed UUID, TheHive's alert of `sourceRef` the analysis id, OpenCTI's
 * own upserts) and adds only what is missing; it never duplicates an attribute or an observable.
 * Nothing a target answers with is reported as done unless the platform said so.
 */
import type { HttpClient } from '../engine/contract.js';
import type { Pap, Tlp } from '../marking/levels.js';
import type { ObservableType } from '../observables/types.js';
import type { Verdict } from '../verdict/verdict.js';

export const PUSH_TARGETS = ['misp', 'opencti', 'thehive'] as const;
export type PushTargetId = (typeof PUSH_TARGETS)[number];

/** The targets' names as people write them. */
export const TARGET_LABELS: Record<PushTargetId, string> = { misp: 'MISP', opencti: 'OpenCTI', thehive: 'TheHive' };

/** One observable to push: at or above the request's `min_verdict` (or every one with `--all`). */
export interface PushObservable {
  /** The observable as analysed (refanged): `evil.example`, `https://evil.example/x`, a hash. */
  value: string;
  type: ObservableType;
  verdict: Verdict;
  /** The verdict's reasons (`vt: 54/76 engines flag it`), upstream text: data, never markup. */
  reasons: string[];
  /** The one-line summary of each engine that had something to say about it, in catalog order. */
  engines: { engine: string; summary: string }[];
  /** Where it was found in a file (issue 35), when it came from one. */
  found_in?: string[];
}

/** The analysis being pushed. */
export interface PushAnalysis {
  id: string;
  /** The link back to its results: absolute with the setting `public_url`, else `/results/<id>`. */
  link: string;
  /** When it was started (ISO 8601). */
  created_at: string;
  /** Its marking (issue 34); undefined for an analysis of a version before markings. */
  tlp: Tlp | undefined;
  pap: Pap | undefined;
  /** The worst verdict among all its observables (not only the pushed ones). */
  worst: Verdict;
  /** How many observables the analysis holds in all. */
  total: number;
}

export interface PushRequest {
  analysis: PushAnalysis;
  /** The observables to push, in the analysis's order (may be empty: the target says so, nothing is created). */
  items: PushObservable[];
  /** MISP: add the attributes to this existing event instead of making one (`--event`). */
  event_id?: string | undefined;
  /** TheHive: add the observables to this case instead of making an alert (`--case`). */
  case_id?: string | undefined;
}

/** A target's settings, resolved from `push.<target>`, its environment variable and the engine's settings. */
export interface TargetSettings {
  /** The platform's base URL, without a trailing slash (`https://misp.example.org`). */
  url: string;
  /** The API key or token. A secret: never in a message, a result or a log. */
  credential: string;
  /** Where the credential was read from, for messages: `push.misp.api_key or OAS_PUSH_MISP_API_KEY`, or the engine's. */
  credentialSource: string;
  /** Where the URL was read from, for messages: `push.misp.url` or `engines.misp.base_url`. */
  urlSource: string;
  /** Verify the platform's TLS certificate (default: the setting `ssl_verify`). */
  ssl_verify: boolean;
  timeout_ms: number;
  retries: number;
  /** The highest TLP this target may receive (default RED: the team's own platforms). */
  max_tlp: Tlp;
  /** MISP: the distribution of a CLEAR or GREEN analysis's event (default 1; AMBER gives at most 1, AMBER+STRICT and RED 0). */
  distribution: number;
  /** MISP: publish the event it creates (default false). */
  publish: boolean;
  /** TheHive: the organisation to act in (header `X-Organisation`); empty: the key's default. */
  organisation: string;
}

/** What a push came to. */
export interface PushOutcome {
  target: PushTargetId;
  /** What holds the pushed observables: a MISP event, a TheHive alert or case, OpenCTI's observables. */
  kind: 'event' | 'alert' | 'case' | 'observables';
  /** The event's, alert's or case's id in the platform (empty for OpenCTI's observables). */
  id: string;
  /** Its page in the platform's own UI, when it has one. */
  link?: string | undefined;
  /** True when this push made the event or alert; false when it found the one an earlier push made, or was given one (`--event`, `--case`). */
  created: boolean;
  /** Attributes or observables this push added. */
  added: number;
  /** Those already there (an earlier push, or the platform had them): not added again. */
  existing: number;
  /** OpenCTI: indicators created or found for malicious observables. */
  indicators?: number | undefined;
  /** One line saying all of it, for the CLI, the API's answer and MCP: `MISP event 42 created: 3 attributes added (https://misp.example.org/events/view/42)`. */
  line: string;
}

/**
 * A push that failed: one line naming the target, what failed and what to check, e.g.
 * `MISP at misp.example.org: HTTP 403 Forbidden: Authentication failed (key refused: check push.misp.api_key or OAS_PUSH_MISP_API_KEY)`.
 * Never holds the credential. Anything the push had made before failing is said in the line.
 */
export class PushError extends Error {
  constructor(
    readonly target: PushTargetId,
    message: string,
    /** The HTTP status the platform answered, when it answered one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'PushError';
  }
}

/** What a target's push function gets besides the request. */
export interface PushContext {
  settings: TargetSettings;
  /** Bound to the push's deadline, retries (network errors, 429, 5xx) and secrets (the credential is redacted from every error). */
  http: HttpClient;
}

/** A target: its id and its push. One file per target in src/push/. */
export interface PushTarget {
  id: PushTargetId;
  push(request: PushRequest, context: PushContext): Promise<PushOutcome>;
}
