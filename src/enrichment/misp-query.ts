/**
 * One misp-modules query (issue 39): `POST /query` as MISP sends it, answered as a misp-modules
 * module answers.
 *
 * MISP sends (app/Model/Module.php queryModuleServer, AttributesController::hoverEnrichment,
 * EventsController::__queryEnrichment and __queryOldEnrichment):
 * - to a module whose `mispattributes.format` is `misp_standard`: `{"module", "attribute": {...the
 *   attribute as MISP keeps it: uuid, type, value, category...}, "event_id", "config"?}`;
 * - to any other: `{"module", "<attribute type>": "<value>", "event_id"?, "attribute_uuid"?,
 *   "persistent"?, "config"?}`.
 * Either form is read for either module; the answer takes the form the module declares, since that
 * is the one MISP reads back. `config` is ignored (oas's own configuration holds the keys), and so
 * is `event_id`. `timeout` (seconds, as misp-modules reads it) may shorten the wait, never lengthen it.
 *
 * The observables of the attribute are analysed as any analysis is (src/analysis/service.ts): the
 * module's engines, the cache when fresh, quotas, fair share, the configuration's default TLP and
 * PAP (MISP sends none; an attribute sent with its `tlp:` and `PAP:` tags is analysed at them), the
 * allowlist and marks; recorded in the history (started by
 * `misp-modules`) and resumed after a restart like the API's. The query waits for it up to
 * `misp_modules_timeout_s`; past that, the answer says so and the analysis goes on, so that the
 * same query a moment later is answered from the cache.
 *
 * What goes wrong is misp-modules' error body, `{"error": "..."}`, one line (MISP shows it, and
 * discards an answer of any status but 200).
 */
import { randomUUID } from 'node:crypto';
import { InputError } from '../analysis/request.js';
import { observableVerdict } from '../analysis/rows.js';
import { clip } from '../export/common.js';
import type { AnalysisService } from '../analysis/service.js';
import { resultsLink } from '../automation/links.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import { papOf, papRank, tlpOf, tlpRank, type Pap, type Tlp } from '../marking/levels.js';
import type { AnalysisHeader } from '../store/analysis-store.js';
import { inertLine } from '../text/inert.js';
import { findModule, mispModules, moduleName, type MispModule } from './misp-modules.js';
import { simplifiedAnswer, standardAnswer, type AskedAttribute, type Judged } from './misp-results.js';
import { MISP_TYPES, observablesOf } from './misp-types.js';

/** What a query reads, as of now (a reload replaces them). */
export interface QueryServices {
  config: Config;
  catalog: Catalog;
  analyses: AnalysisService;
}

export interface QueryHooks {
  /** An analysis started for the query (the audit trail). */
  started?(header: AnalysisHeader, module: MispModule): void;
  /** Its results read for the answer, or not yet complete when the wait ended. */
  read?(header: AnalysisHeader, module: MispModule, complete: boolean): void;
  /** The client went away: stop waiting (the analysis goes on). */
  signal?: AbortSignal;
}

export type QueryAnswer = { error: string } | { results: unknown };

/** Who the history and the fair share name as having started these analyses. */
export const MISP_STARTED_BY = 'misp-modules';

/** The keys of a query that are the protocol's own, never an attribute type. */
const PROTOCOL_KEYS = new Set(['module', 'config', 'event_id', 'attribute_uuid', 'persistent', 'timeout', 'data', 'attribute', 'object']);

/** The attribute's fields an answer repeats, when MISP sent them as plain values. */
const REPEATED_FIELDS = ['category', 'to_ids', 'distribution', 'sharing_group_id', 'comment', 'object_relation', 'first_seen', 'last_seen', 'disable_correlation'];

const fail = (message: string): QueryAnswer => ({ error: inertLine(message) });

export async function answerQuery(body: unknown, services: QueryServices, hooks: QueryHooks = {}): Promise<QueryAnswer> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('the query must be a JSON object such as {"module": "oas", "attribute": {"type": "domain", "value": "example.com", "uuid": "..."}}');
  const query = body as Record<string, unknown>;
  const { config, catalog, analyses } = services;
  const modules = mispModules(catalog, config);
  if (typeof query.module !== 'string' || query.module === '') return fail('the query names no "module": GET /modules lists those of this oas server');
  const module = findModule(modules, query.module);
  if (!module) return fail(unknownModule(query.module, modules, services));

  const asked = askedOf(query, module);
  if (typeof asked === 'string') return fail(asked);
  const observables = observablesOf(asked.type, asked.value, module.accepts);
  if (typeof observables === 'string') return fail(observables);

  const request = { text: observables.map((o) => o.value).join('\n'), engines: module.engines, started_by: MISP_STARTED_BY, ...asked.marking };
  let header: AnalysisHeader;
  try {
    const prepared = await analyses.prepareWith(request, async () => observables);
    header = await analyses.start(request, prepared, 'server');
  } catch (error) {
    if (error instanceof InputError) return fail(`${module.name}: ${error.message}`);
    throw error;
  }
  hooks.started?.(header, module);

  const waitS = Math.min(config.misp_modules_timeout_s, positiveSeconds(query.timeout) ?? Infinity);
  const complete = await completion(analyses, header.id, waitS * 1000, hooks.signal);
  hooks.read?.(header, module, complete);
  if (!complete) {
    return fail(`oas is still analysing ${clip(asked.value, 100)} (analysis ${header.id}): it took longer than ${waitS} s (setting misp_modules_timeout_s); ask again in a moment, its engines' answers will come from the cache`);
  }
  const record = await analyses.latest(header.id);
  const items: Judged[] = [];
  record?.results.forEach((result, index) => {
    if (result) items.push({ result, judged: record.result_verdicts?.[index] ?? observableVerdict(result, catalog) });
  });
  const context = { catalog, link: config.public_url ? resultsLink(config.public_url, header.id) : undefined, analysisId: header.id };
  if (module.format === 'misp_standard') return standardAnswer(items, asked.attribute, context);
  return simplifiedAnswer(items, context);
}

/** The attribute a query asks about: MISP's whole attribute, or `{"<type>": value}`; else why not. */
function askedOf(query: Record<string, unknown>, module: MispModule): { type: string; value: string; attribute: AskedAttribute; marking: { tlp?: Tlp; pap?: Pap } } | string {
  const given = query.attribute;
  let type: string;
  let value: string;
  let fields: Record<string, unknown> = {};
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
    fields = given as Record<string, unknown>;
    if (typeof fields.type !== 'string' || typeof fields.value !== 'string') return 'This module requires an "attribute" field as input, which should contain at least a type, a value and an uuid.';
    type = fields.type;
    value = fields.value;
  } else {
    const types = Object.keys(query).filter((key) => !PROTOCOL_KEYS.has(key));
    const known = types.find((key) => module.input.includes(key)) ?? types.find((key) => key in MISP_TYPES) ?? types[0];
    if (known === undefined) return `the query holds no attribute: send {"module": "${module.name}", "<type>": "<value>"} or {"module": "${module.name}", "attribute": {"type", "value", "uuid"}}; ${module.name} takes ${module.input.join(', ')}`;
    type = known;
    if (typeof query[known] !== 'string') return `the value of "${clip(known, 100)}" must be a string`;
    value = query[known] as string;
  }
  if (!module.input.includes(type)) return `Unsupported attribute type: ${module.name} takes no "${clip(type, 100)}" attribute; it takes ${module.input.join(', ')}`;
  const attribute: AskedAttribute = { uuid: typeof fields.uuid === 'string' && fields.uuid !== '' ? fields.uuid : randomUUID(), type, value };
  for (const field of REPEATED_FIELDS) {
    const repeated = fields[field];
    if (typeof repeated === 'string' || typeof repeated === 'number' || typeof repeated === 'boolean' || repeated === null) attribute[field] = repeated;
  }
  return { type, value, attribute, marking: markingOfTags(fields.Tag) };
}

/**
 * The TLP and PAP of an attribute sent with its tags (`"Tag": [{"name": "tlp:red"}]`): the most
 * restrictive `tlp:` and `PAP:` tag of each, `tlp:white` being CLEAR. MISP's hover and expansion
 * send the attribute without its tags (they sit beside it in MISP's model): the configuration's
 * default_tlp and default_pap then apply, as for any analysis that names none.
 */
export function markingOfTags(tags: unknown): { tlp?: Tlp; pap?: Pap } {
  let tlp: Tlp | undefined;
  let pap: Pap | undefined;
  for (const tag of Array.isArray(tags) ? tags : []) {
    const name = typeof tag === 'object' && tag !== null ? (tag as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') continue;
    if (/^tlp:/i.test(name)) {
      const level = tlpOf(name.replace(/^tlp:white$/i, 'CLEAR'));
      if (level && (tlp === undefined || tlpRank(level) > tlpRank(tlp))) tlp = level;
    } else if (/^pap:/i.test(name)) {
      const level = papOf(name.replace(/^pap:white$/i, 'CLEAR'));
      if (level && (pap === undefined || papRank(level) > papRank(pap))) pap = level;
    }
  }
  return { ...(tlp ? { tlp } : {}), ...(pap ? { pap } : {}) };
}

/** `unknown module`, or an engine of the catalog that lacks its credentials here. */
function unknownModule(name: string, modules: readonly MispModule[], services: QueryServices): string {
  const engine = services.catalog.engines.find((e) => moduleName(`oas_${e.id}`) === name);
  if (engine) return `${name}: the engine ${engine.id}${engine.service !== engine.id ? ` (${engine.service})` : ''} is not configured on this oas server: give its credentials under engines.${engine.id} (oas engines lists what it needs)`;
  const offered = modules.map((m) => m.name).join(', ');
  return `unknown module: ${clip(name, 100)}; this oas server offers ${clip(offered, 600)}`;
}

/** Whether the analysis completed within `ms` (polled: in this process or, with Redis, the store); the Cortex API's waitreport waits with it too. */
export async function completion(analyses: AnalysisService, id: string, ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  const end = Date.now() + ms;
  let pause = 10;
  for (;;) {
    if (await analyses.isComplete(id)) return true;
    const left = end - Date.now();
    if (left <= 0 || signal?.aborted) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, 200);
  }
}

function positiveSeconds(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}
