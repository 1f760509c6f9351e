/**
 * One push of an analysis into a platform (issue 37), as every surface asks for it (`oas push`,
 * `oas analyze --push`, `POST {prefix}analyses/<id>/push`, the results page, MCP `push_results`):
 * the request checked (a known, configured target; `event_id` only for MISP, `case_id` only for
 * TheHive; a verdict threshold), the analysis read as stored (complete, its verdicts as worked out
 * when it ran), its marking checked against the target's `max_tlp` before anything is sent, the
 * observables at or above `min_verdict` (every one with `all`) selected with their reasons and
 * engines' summaries, and the target's module (loaded only now) called with an HTTP client bound
 * to the target's deadline, retries, TLS setting and secret.
 */
import type { Config } from '../config/schema.js';
import type { HttpClient, RequestOptions } from '../engine/contract.js';
import type { Catalog } from '../engine/catalog.js';
import type { HttpTransport } from '../http/client.js';
import { engineLines } from '../export/common.js';
import { storedVerdict } from '../analysis/rows.js';
import { tlpLabel, tlpRank, type Tlp } from '../marking/levels.js';
import { observableMarking, markingSettings } from '../marking/policy.js';
import type { Observable } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';
import type { AnalysisHeader, StoredResult } from '../store/analysis-store.js';
import { VERDICTS, worse, type Verdict } from '../verdict/verdict.js';
import { resultsLink } from '../automation/links.js';
import { atLeast } from '../automation/analysis-events.js';
import { targetSettings } from './settings.js';
import { PUSH_TARGETS, TARGET_LABELS, type PushAnalysis, type PushObservable, type PushOutcome, type PushTarget, type PushTargetId, type TargetSettings } from './types.js';

/** What a push reads: the analyses, the configuration and catalog in effect, the one HTTP client. */
export interface PushServices {
  config: Config;
  catalog: Catalog;
  transport: HttpTransport;
  analyses: {
    get(id: string): Promise<AnalysisHeader | undefined>;
    storedResults(header: AnalysisHeader): AsyncIterable<StoredResult[]>;
  };
  env?: NodeJS.ProcessEnv;
}

export interface PushOptions {
  target: string;
  analysisId: string;
  event_id?: string | undefined;
  case_id?: string | undefined;
  /** Push observables at least this severe (default `suspicious`). */
  min_verdict?: string | undefined;
  /** Push every observable, whatever its verdict. */
  all?: boolean | undefined;
}

/**
 * A push refused before anything was sent: a bad request (400), an unknown analysis (404), one
 * still running (409), or one whose TLP is above the target's `max_tlp` (403). One line.
 */
export class PushRefusedError extends Error {
  constructor(message: string, readonly status: 400 | 403 | 404 | 409) {
    super(message);
    this.name = 'PushRefusedError';
  }
}

/** A push and what it came to, with what the audit line and the surfaces say of it. */
export interface PushReport {
  outcome: PushOutcome;
  /** Observables selected and sent to the target. */
  selected: number;
  /** Observables left out because they are the team's own (TLP:RED) and the target's max_tlp is lower. */
  withheld: number;
}

const DEFAULT_MIN_VERDICT: Verdict = 'suspicious';
/** The longest a whole push may take (each request has the target's timeout_ms). */
const MAX_PUSH_MS = 10 * 60_000;

/**
 * The target's module, loaded when a push asks for it (nothing of it at start-up): one file per
 * target in src/push/, named for it, exporting `<id>Target` (`mispTarget` in misp.ts).
 */
async function loadTarget(id: PushTargetId): Promise<PushTarget> {
  const module = (await import(`./${id}.js`)) as Record<string, PushTarget | undefined>;
  const target = module[`${id}Target`];
  if (!target) throw new Error(`src/push/${id}.ts exports no ${id}Target`);
  return target;
}

export function parseTarget(value: string): PushTargetId {
  const id = value.trim().toLowerCase();
  if ((PUSH_TARGETS as readonly string[]).includes(id)) return id as PushTargetId;
  throw new PushRefusedError(`unknown push target "${value.slice(0, 40)}": use ${PUSH_TARGETS.join(', ')}`, 400);
}

export function parseMinVerdict(value: string | undefined): Verdict {
  if (value === undefined || value === '') return DEFAULT_MIN_VERDICT;
  const verdict = value.trim().toLowerCase();
  if ((VERDICTS as readonly string[]).includes(verdict)) return verdict as Verdict;
  throw new PushRefusedError(`min_verdict "${value.slice(0, 40)}" is no verdict: use ${[...VERDICTS].reverse().join(', ')}`, 400);
}

/**
 * Before an analysis meant to be pushed runs (`oas analyze --push`): the target is known and
 * configured; else a UsageError-like refusal (PushRefusedError, 400).
 */
export function checkPushTarget(config: Config, value: string, env: NodeJS.ProcessEnv = process.env): PushTargetId {
  const target = parseTarget(value);
  try {
    targetSettings(config, target, env);
  } catch (error) {
    throw new PushRefusedError((error as Error).message, 400);
  }
  return target;
}

/** Checks the request and the analysis; throws PushRefusedError (nothing sent) or PushError (the target failed). */
export async function pushAnalysis(services: PushServices, options: PushOptions): Promise<PushReport> {
  const target = parseTarget(options.target);
  const label = TARGET_LABELS[target];
  if (options.event_id !== undefined && target !== 'misp') throw new PushRefusedError(`event_id (--event) is for MISP; ${label} takes ${target === 'thehive' ? 'case_id (--case)' : 'neither'}`, 400);
  if (options.case_id !== undefined && target !== 'thehive') throw new PushRefusedError(`case_id (--case) is for TheHive; ${label} takes ${target === 'misp' ? 'event_id (--event)' : 'neither'}`, 400);
  for (const [field, value] of [['event_id', options.event_id], ['case_id', options.case_id]] as const) {
    if (value !== undefined && !/^[A-Za-z0-9_~:.-]{1,64}$/.test(value)) throw new PushRefusedError(`${field} "${value.slice(0, 40)}" is not an id (letters, digits, - _ ~ : .)`, 400);
  }
  const min = options.all ? 'unknown' : parseMinVerdict(options.min_verdict);
  let settings: TargetSettings;
  try {
    settings = targetSettings(services.config, target, services.env ?? process.env);
  } catch (error) {
    throw new PushRefusedError((error as Error).message, 400);
  }
  const header = await services.analyses.get(options.analysisId);
  if (!header) throw new PushRefusedError(`analysis ${options.analysisId.slice(0, 64)} not found`, 404);
  if (!header.complete) throw new PushRefusedError(`analysis ${header.id} is not complete yet: push it once it is`, 409);
  const marking = markingSettings(services.config);
  const tlp: Tlp = header.tlp ?? marking.defaultMarking.tlp;
  if (tlpRank(tlp) > tlpRank(settings.max_tlp)) {
    throw new PushRefusedError(`analysis ${header.id} is ${tlpLabel(tlp)}, above what ${label} may receive (push.${target}.max_tlp is ${settings.max_tlp}): nothing sent`, 403);
  }
  const selection = await select(services, header, min, settings.max_tlp);
  const analysis: PushAnalysis = {
    id: header.id,
    link: resultsLink(services.config.public_url ?? '', header.id),
    created_at: header.created_at,
    tlp: header.tlp,
    pap: header.pap,
    worst: selection.worst,
    total: header.observables.length,
  };
  const module = await loadTarget(target);
  const http = boundClient(services.transport, settings);
  const outcome = await module.push({ analysis, items: selection.items, event_id: options.event_id, case_id: options.case_id }, { settings, http });
  return { outcome, selected: selection.items.length, withheld: selection.withheld };
}

interface Selection {
  items: PushObservable[];
  withheld: number;
  worst: Verdict;
}

/** The observables at or above `min`, in the analysis's order, and the worst verdict of all. */
async function select(services: PushServices, header: AnalysisHeader, min: Verdict, maxTlp: Tlp): Promise<Selection> {
  const { internalScope, defaultMarking } = markingSettings(services.config);
  const analysisMarking = { tlp: header.tlp ?? defaultMarking.tlp, pap: header.pap ?? defaultMarking.pap };
  const items: PushObservable[] = [];
  let withheld = 0;
  let worst: Verdict = 'unknown';
  let index = 0;
  for await (const page of services.analyses.storedResults(header)) {
    for (const row of page) {
      const observable = header.observables[index++];
      let result: ObservableResult;
      try {
        result = JSON.parse(row.value) as ObservableResult;
      } catch {
        continue;
      }
      const judged = storedVerdict(row.verdict, result, services.catalog);
      worst = worse(worst, judged.verdict);
      if (!atLeast(judged.verdict, min)) continue;
      const type = (result.type ?? observable?.type) as PushObservable['type'];
      const value = result.observable ?? observable?.value;
      if (!value || !type) continue;
      const target: Observable = { value, type };
      if (tlpRank('RED') > tlpRank(maxTlp) && observableMarking(analysisMarking, target, internalScope).internal) {
        withheld++;
        continue;
      }
      const foundIn = result.found_in ?? observable?.found_in;
      items.push({
        value,
        type,
        verdict: judged.verdict,
        reasons: judged.reasons,
        engines: engineLines(result, services.catalog).filter((line) => line.status === 'ok' && line.summary !== '').map((line) => ({ engine: line.engine, summary: line.summary })),
        ...(foundIn?.length ? { found_in: foundIn } : {}),
      });
    }
  }
  return { items, withheld, worst };
}

/**
 * The target's HTTP client: the one transport's pool and proxy, each request within the target's
 * `timeout_ms` and TLS setting, retried per its `retries`, its key redacted from every error.
 */
function boundClient(transport: HttpTransport, settings: TargetSettings): HttpClient {
  const deadline = Date.now() + MAX_PUSH_MS;
  const client = transport.client({
    signal: AbortSignal.timeout(MAX_PUSH_MS),
    deadline,
    timeoutMs: settings.timeout_ms,
    retries: settings.retries,
    secrets: [settings.credential],
    urlSetting: settings.urlSource,
  });
  return withDefaults(client, { timeoutMs: settings.timeout_ms, sslVerify: settings.ssl_verify });
}

/** A client whose requests take `defaults` unless they say otherwise. */
function withDefaults(client: HttpClient, defaults: Pick<RequestOptions, 'timeoutMs' | 'sslVerify'>): HttpClient {
  const merged = (options?: RequestOptions): RequestOptions => ({ ...defaults, ...options });
  return {
    redact: (text) => client.redact(text),
    withSecrets: (extra) => withDefaults(client.withSecrets(extra), defaults),
    request: (url, options) => client.request(url, merged(options)),
    json: (url, schema, options) => client.json(url, schema, merged(options)),
    text: (url, options) => client.text(url, merged(options)),
  };
}
