/**
 * oas as a Cortex server (issue 39): its analyzers, jobs and reports in Cortex's shapes (Cortex
 * 3's app/org/thp/cortex/models: Worker, Job, Report, Artifact as their JSON writes give them;
 * controllers/JobCtrl's report), without HTTP (src/server/cortex.ts serves them under /cortex).
 *
 * - Analyzers: `oas_<Service>_1_0` per engine that can run here (Service: its service alias,
 *   each word capitalised), `dataTypeList` in Cortex's data types, `maxTlp`/`maxPap` its ceilings
 *   as Cortex's numbers; and `oas_Verdict_1_0`, the default engines with oas's verdict.
 * - A job is an oas analysis (src/analysis/service.ts: cache unless `force`, quotas, fair share,
 *   the TLP/PAP rules); its id is the analysis's. What only Cortex knows of a job (its analyzer,
 *   data type, data, message, parameters, that it was deleted) is kept in its analysis's header
 *   (`cortex`), so a job reads the same after a restart and on every server of a Redis, and
 *   `_search` lists every server's (the store's newest MAX_JOBS); an analysis of an older version
 *   is still read as a job, its analyzer and data type worked out from its engines and observable.
 * - Its report: `full` the engine's result object (for Verdict: the verdict, its reasons, each
 *   engine's result, what was withheld), `summary.taxonomies` one per engine (level from the
 *   verdict's evidence, namespace `oas`, predicate the engine's label, value its one-line summary),
 *   `artifacts` the observables found in the engine's answer with their Cortex data types. A job
 *   nothing of which ran (each engine withheld by its TLP/PAP, or an engine analyzer that failed)
 *   is a `Failure` whose `errorMessage` says why.
 */
import { InputError } from '../analysis/request.js';
import { engineKeys, engineOutcome, observableRows, observableVerdict } from '../analysis/rows.js';
import type { AnalysisService } from '../analysis/service.js';
import { resultsLink } from '../automation/links.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { EngineDefinition } from '../engine/contract.js';
import { ceilingsOf, type Pap, type Tlp } from '../marking/levels.js';
import { extractObservables } from '../observables/extract.js';
import type { Observable, ObservableType } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';
import type { AnalysisHeader } from '../store/analysis-store.js';
import { inertLine } from '../text/inert.js';
import { evidenceOf, type ObservableVerdict } from '../verdict/verdict.js';
import { engineAccepts } from './misp-modules.js';

/** Cortex's data types oas reads, and what each is as oas's types. */
export const CORTEX_TYPES: Readonly<Record<string, readonly ObservableType[]>> = {
  ip: ['IPv4', 'IPv6'],
  domain: ['FQDN'],
  fqdn: ['FQDN'],
  url: ['URL'],
  hash: ['MD5', 'SHA1', 'SHA256'],
  mail: ['Email'],
};

/** oas's type as Cortex's (an artifact's dataType); undefined for one Cortex has no type for. */
export function cortexTypeOf(type: ObservableType): string | undefined {
  switch (type) {
    case 'IPv4': case 'IPv6': return 'ip';
    case 'FQDN': return 'domain';
    case 'URL': return 'url';
    case 'MD5': case 'SHA1': case 'SHA256': return 'hash';
    case 'Email': return 'mail';
    default: return undefined;
  }
}

/** TLP and PAP as Cortex's numbers (0 CLEAR/WHITE, 1 GREEN, 2 AMBER, 3 RED). */
const TLP_OF_NUMBER: readonly Tlp[] = ['CLEAR', 'GREEN', 'AMBER', 'RED'];
const PAP_OF_NUMBER: readonly Pap[] = ['CLEAR', 'GREEN', 'AMBER', 'RED'];
export const tlpNumber = (tlp: Tlp): number => (tlp === 'AMBER+STRICT' ? 2 : TLP_OF_NUMBER.indexOf(tlp));
export const papNumber = (pap: Pap): number => PAP_OF_NUMBER.indexOf(pap);

export const VERDICT_ANALYZER = 'oas_Verdict_1_0';
const ORGANIZATION = 'oas';
/** Jobs `_search` reads from the store at most, newest first (their analyses stay in the history whatever). */
const MAX_JOBS = 10_000;

export interface Analyzer {
  id: string;
  /** The engines it runs: one engine's id, or undefined for the default engines. */
  engine: EngineDefinition | undefined;
  description: string;
  dataTypeList: string[];
  maxTlp: number;
  maxPap: number;
}

/** `oas_<Service>_1_0`: `ipapi` is `oas_Ipapi_1_0`, `reverse_dns` `oas_Reverse_Dns_1_0`. */
export function analyzerId(engine: EngineDefinition): string {
  const words = engine.service.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1));
  return `oas_${words.join('_') || engine.id}_1_0`;
}

const typesFor = (accepts: (type: ObservableType) => boolean) => Object.entries(CORTEX_TYPES).filter(([, types]) => types.some(accepts)).map(([name]) => name);

const cache = new WeakMap<Catalog, { config: Config; analyzers: Analyzer[] }>();

/** The analyzers of this catalog and configuration (a reload replaces both). */
export function cortexAnalyzers(catalog: Catalog, config: Config): Analyzer[] {
  const known = cache.get(catalog);
  if (known?.config === config) return known.analyzers;
  const defaults = catalog.defaults();
  const analyzers: Analyzer[] = [{
    id: VERDICT_ANALYZER,
    engine: undefined,
    description: `oas: the default engines (${defaults.map((e) => e.label).join(', ')}) with oas's verdict; engines withheld by the job's TLP/PAP are listed in its report`,
    dataTypeList: typesFor((type) => defaults.some((engine) => engineAccepts(engine, type))),
    maxTlp: 3,
    maxPap: 3,
  }];
  const ids = new Set([VERDICT_ANALYZER]);
  for (const engine of catalog.engines) {
    if (!catalog.isConfigured(engine, config.engines)) continue;
    const id = analyzerId(engine);
    const dataTypeList = typesFor((type) => engineAccepts(engine, type));
    if (ids.has(id) || dataTypeList.length === 0) continue;
    ids.add(id);
    const ceilings = ceilingsOf(engine, config.engines[engine.id] ?? {});
    analyzers.push({ id, engine, description: `oas · ${engine.label}: ${engine.description}`, dataTypeList, maxTlp: tlpNumber(ceilings.maxTlp), maxPap: papNumber(ceilings.maxPap) });
  }
  cache.set(catalog, { config, analyzers });
  return analyzers;
}

/** An analyzer as Cortex's AnalyzerCtrl writes it (Worker's attributes, for a user who is not an org admin). */
export function analyzerJson(analyzer: Analyzer): Record<string, unknown> {
  return {
    id: analyzer.id, _id: analyzer.id, _type: 'worker', _routing: analyzer.id, _parent: ORGANIZATION, _version: 1,
    name: analyzer.id, version: '1.0', workerDefinitionId: analyzer.id, analyzerDefinitionId: analyzer.id,
    description: analyzer.description, author: 'oas', url: '', license: 'MIT',
    dataTypeList: analyzer.dataTypeList, baseConfig: analyzer.engine?.id ?? 'oas', type: 'analyzer',
    maxTlp: analyzer.maxTlp, maxPap: analyzer.maxPap, jobCache: null, jobTimeout: null, rate: null, rateUnit: null,
    createdBy: 'oas', createdAt: 0,
  };
}

/** What a job is beside its analysis. */
export interface JobRecord {
  id: string;
  analyzer: Analyzer;
  dataType: string;
  data: string;
  tlp: number;
  pap: number;
  message: string;
  parameters: Record<string, unknown>;
  createdAt: number;
  createdBy: string;
  deleted?: boolean;
  fromCache?: boolean;
}

export interface CortexServices {
  config: Config;
  catalog: Catalog;
  analyses: AnalysisService;
}

/** A refused request: Cortex's error type (its body `{type, message}`) and status. */
export class CortexError extends Error {
  constructor(readonly status: number, readonly type: string, message: string) {
    super(inertLine(message));
  }
}

const badRequest = (message: string) => new CortexError(400, 'BadRequest', message);

/** The body of `POST /api/analyzer/<id>/run`, as TheHive and cortex4py send it. */
export interface RunBody {
  data?: unknown;
  dataType?: unknown;
  tlp?: unknown;
  pap?: unknown;
  message?: unknown;
  parameters?: unknown;
}

function level<T>(value: unknown, levels: readonly T[], name: string): T {
  if (value === undefined || value === null) return levels[2]!; // Cortex's default: 2 (AMBER)
  const n = typeof value === 'string' && /^\d$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 3) throw badRequest(`${name} must be a number from 0 to 3 (0 WHITE/CLEAR, 1 GREEN, 2 AMBER, 3 RED)`);
  return levels[n]!;
}

/** The observable of a job's `data` of Cortex type `dataType`, read as oas reads a pasted one. */
export function observableOfData(dataType: string, data: string, accepts: (type: ObservableType) => boolean): Observable {
  const types = CORTEX_TYPES[dataType];
  if (!types) throw badRequest(`oas reads no data of type "${dataType.slice(0, 50)}"; it reads ${Object.keys(CORTEX_TYPES).join(', ')}`);
  const wanted = types.filter(accepts);
  if (wanted.length === 0) throw badRequest(`this analyzer takes no ${dataType}`);
  if (data.length > 8192) throw badRequest(`the ${dataType} is longer than 8192 characters`);
  const text = data.trim();
  const found = extractObservables(text).filter((o) => wanted.includes(o.type));
  const same = found.find((o) => o.value.toLowerCase() === text.toLowerCase()) ?? found[0];
  if (!same) throw badRequest(`the ${dataType} ${JSON.stringify(text.slice(0, 200))} is no ${dataType} oas can analyse`);
  return { value: same.value, type: same.type };
}

/** Jobs of this process, oldest first; and the running of new ones. */
export class CortexJobs {
  constructor(private readonly services: () => CortexServices) {}

  analyzers(): Analyzer[] {
    const { catalog, config } = this.services();
    return cortexAnalyzers(catalog, config);
  }

  analyzer(id: string): Analyzer {
    const found = this.analyzers().find((a) => a.id === id);
    if (!found) throw new CortexError(404, 'NotFoundError', `worker ${id.slice(0, 100)} not found`);
    return found;
  }

  /** Starts the analysis of a job; `started` is told of it (the audit trail). */
  async run(analyzerId: string, body: RunBody, who: string, force: boolean): Promise<{ job: JobRecord; header: AnalysisHeader }> {
    const analyzer = this.analyzer(analyzerId);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object with data, dataType, tlp, pap');
    if (typeof body.dataType !== 'string' || body.dataType === '') throw badRequest('dataType is missing');
    if (typeof body.data !== 'string' || body.data === '') throw badRequest(body.dataType === 'file' ? 'oas analyses no files: send data of type ip, domain, fqdn, url, hash or mail' : 'data is missing');
    const tlp = level(body.tlp, TLP_OF_NUMBER, 'tlp');
    const pap = level(body.pap, PAP_OF_NUMBER, 'pap');
    const { catalog, analyses } = this.services();
    const engines = analyzer.engine ? [analyzer.engine] : catalog.defaults();
    const observable = observableOfData(body.dataType, body.data, (type) => engines.some((e) => engineAccepts(e, type)));
    const message = typeof body.message === 'string' ? body.message : '';
    const parameters = typeof body.parameters === 'object' && body.parameters !== null && !Array.isArray(body.parameters) ? body.parameters as Record<string, unknown> : {};
    const request = {
      text: observable.value,
      ...(analyzer.engine ? { engines: [analyzer.engine.id] } : {}),
      ignore_cache: force,
      tlp,
      pap,
      started_by: who,
      // Kept in the analysis's header: the job reads the same after a restart, on any server of a Redis.
      cortex: { analyzer: analyzer.id, data_type: body.dataType, data: body.data, message, parameters },
    };
    let header: AnalysisHeader;
    try {
      const prepared = await analyses.prepareWith(request, async () => [observable]);
      header = await analyses.start(request, prepared, 'server');
    } catch (error) {
      if (error instanceof InputError) throw badRequest(error.message);
      throw error;
    }
    const job: JobRecord = {
      id: header.id, analyzer, dataType: body.dataType, data: body.data, tlp: tlpNumber(tlp), pap: papNumber(pap), message, parameters,
      createdAt: Date.parse(header.created_at), createdBy: who,
    };
    return { job, header };
  }

  /** The job of this id, read from its analysis; 404 otherwise. */
  async get(id: string): Promise<{ job: JobRecord; header: AnalysisHeader }> {
    const notFound = new CortexError(404, 'NotFoundError', `job ${id.slice(0, 100)} not found`);
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) throw notFound;
    const header = await this.services().analyses.get(id);
    if (!header) throw notFound;
    const job = this.fromHeader(header);
    if (!job) throw notFound;
    return { job, header };
  }

  private fromHeader(header: AnalysisHeader): JobRecord | undefined {
    const observable = header.observables[0];
    const kept = header.cortex;
    const keptAnalyzer = kept ? this.analyzers().find((a) => a.id === kept.analyzer) : undefined;
    if (kept && keptAnalyzer && observable) {
      return {
        id: header.id, analyzer: keptAnalyzer, dataType: kept.data_type, data: kept.data,
        tlp: tlpNumber(header.tlp ?? 'AMBER'), pap: papNumber(header.pap ?? 'AMBER'), message: kept.message, parameters: kept.parameters,
        createdAt: Date.parse(header.created_at), createdBy: header.started_by ?? 'anonymous', ...(kept.deleted ? { deleted: true } : {}),
      };
    }
    if (header.observables.length !== 1 || !observable) return undefined;
    const analyzers = this.analyzers();
    const single = header.engines.length === 1 ? analyzers.find((a) => a.engine && header.engines[0] === a.engine.id) : undefined;
    const { catalog } = this.services();
    const defaults = catalog.defaults().map((e) => e.id).join(',');
    const analyzer = single && header.engines.join(',') !== defaults ? single : analyzers[0]!;
    return {
      id: header.id, analyzer, dataType: cortexTypeOf(observable.type) ?? 'other', data: observable.value,
      tlp: tlpNumber(header.tlp ?? 'AMBER'), pap: papNumber(header.pap ?? 'AMBER'), message: '', parameters: {},
      createdAt: Date.parse(header.created_at), createdBy: header.started_by ?? 'anonymous',
    };
  }

  /** Marks a job deleted in its analysis's header (the analysis stays in the history). */
  async delete(id: string): Promise<void> {
    await this.get(id);
    await this.services().analyses.deleteCortexJob(id);
  }

  /** The stored jobs not deleted, newest first (the store's newest MAX_JOBS), with their analyses. */
  async list(): Promise<{ job: JobRecord; header: AnalysisHeader }[]> {
    const headers = await this.services().analyses.cortexJobs(MAX_JOBS);
    return headers.flatMap((header) => {
      const job = this.fromHeader(header);
      return job ? [{ job, header }] : [];
    });
  }

  /** The job as Cortex writes it, with its report when asked (JobCtrl.getJobWithReport). */
  async json(job: JobRecord, header: AnalysisHeader, withReport: boolean): Promise<Record<string, unknown>> {
    const { analyses, catalog, config } = this.services();
    const complete = header.complete || (await analyses.isComplete(job.id)) === true;
    const record = complete ? await analyses.latest(job.id) : undefined;
    const finished = record ?? header;
    let status: string;
    let report: unknown;
    if (job.deleted) {
      status = 'Deleted';
      report = 'Deleted';
    } else if (!complete || !record) {
      status = header.progress && header.progress.done > 0 ? 'InProgress' : 'Waiting';
      report = status === 'InProgress' ? 'Running' : 'Waiting';
    } else {
      const built = buildReport(job, record.results, record.result_verdicts, catalog, config.public_url ? resultsLink(config.public_url, job.id) : undefined);
      status = built.success ? 'Success' : 'Failure';
      report = built.success
        ? { summary: { taxonomies: built.taxonomies }, full: built.full, success: true, artifacts: built.artifacts, operations: [] }
        : { errorMessage: built.errorMessage, input: JSON.stringify(inputOf(job)), success: false };
    }
    const endDate = finished.finished_at ? Date.parse(finished.finished_at) : undefined;
    const out: Record<string, unknown> = {
      id: job.id, _id: job.id, _type: 'job', _routing: job.id, _parent: null, _version: 1,
      analyzerId: job.analyzer.id, analyzerName: job.analyzer.id, analyzerDefinitionId: job.analyzer.id,
      workerId: job.analyzer.id, workerName: job.analyzer.id, workerDefinitionId: job.analyzer.id,
      organization: ORGANIZATION, type: 'analyzer', status,
      dataType: job.dataType, data: job.data, tlp: job.tlp, pap: job.pap, message: job.message, parameters: job.parameters,
      date: job.createdAt, createdAt: job.createdAt, createdBy: job.createdBy, startDate: job.createdAt,
      ...(endDate !== undefined && status !== 'Waiting' && status !== 'InProgress' ? { endDate, updatedAt: endDate, updatedBy: job.createdBy } : {}),
      input: inputOf(job),
    };
    if (status === 'Failure') out.errorMessage = (report as { errorMessage: string }).errorMessage;
    if (withReport) out.report = report;
    return out;
  }

  /** The artifacts of a job's report (GET /api/job/<id>/artifacts), as Cortex's Artifact entities. */
  async artifacts(job: JobRecord, header: AnalysisHeader): Promise<Record<string, unknown>[]> {
    const json = await this.json(job, header, true);
    const report = json.report as { artifacts?: Record<string, unknown>[] } | string;
    if (typeof report !== 'object' || !report.artifacts) return [];
    return report.artifacts.map((artifact, index) => ({ id: `${job.id}_${index}`, _id: `${job.id}_${index}`, _type: 'artifact', _parent: job.id, createdAt: json.endDate ?? job.createdAt, createdBy: job.createdBy, ...artifact }));
  }
}

/** What Cortex hands its analyzer, as Job's `input` shows it. */
function inputOf(job: JobRecord): Record<string, unknown> {
  return { data: job.data, dataType: job.dataType, tlp: job.tlp, pap: job.pap, message: job.message, parameters: job.parameters };
}

interface BuiltReport {
  success: boolean;
  errorMessage: string;
  taxonomies: { level: string; namespace: string; predicate: string; value: string }[];
  full: Record<string, unknown>;
  artifacts: { dataType: string; data: string; tlp: number; tags: string[]; message: string }[];
}

const LEVELS: Record<string, string> = { malicious: 'malicious', suspicious: 'suspicious', clean: 'safe' };
const MAX_ARTIFACTS = 200;

function buildReport(job: JobRecord, results: readonly (ObservableResult | null)[], verdicts: readonly (ObservableVerdict | undefined | null)[] | undefined, catalog: Catalog, link: string | undefined): BuiltReport {
  const result = results.find((r): r is ObservableResult => Boolean(r));
  const fail = (errorMessage: string): BuiltReport => ({ success: false, errorMessage: inertLine(errorMessage), taxonomies: [], full: {}, artifacts: [] });
  if (!result) return fail('the analysis holds no result');
  const judged = verdicts?.[results.indexOf(result)] ?? observableVerdict(result, catalog);
  const keys = engineKeys(result).filter((key) => engineOutcome(result, key, catalog).status !== 'not_applicable');
  const withheld = Object.fromEntries(keys.filter((key) => result.withheld?.[key] !== undefined).map((key) => [key, result.withheld![key]!]));
  const ran = keys.filter((key) => !(key in withheld));
  const marking = `TLP:${TLP_OF_NUMBER[job.tlp]} / PAP:${PAP_OF_NUMBER[job.pap]}`;
  if (keys.length > 0 && ran.length === 0) {
    return fail(`nothing of this job may run at ${marking}: ${Object.entries(withheld).map(([key, why]) => `${catalog.find(key)?.label ?? key}: ${why}`).join('; ')}`);
  }
  if (job.analyzer.engine) {
    const key = ran[0];
    if (key !== undefined && result.errors?.[key] !== undefined) return fail(`${job.analyzer.engine.label}: ${result.errors[key]}`);
  }
  const rows = observableRows(result, catalog, judged).filter((row) => row.status !== 'withheld' && row.engine !== '-');
  const taxonomies: BuiltReport['taxonomies'] = [];
  if (!job.analyzer.engine) taxonomies.push({ level: LEVELS[judged.verdict] ?? 'info', namespace: 'oas', predicate: 'Verdict', value: judged.verdict });
  for (const row of rows) {
    const evidence = evidenceOf(result, row.engine, catalog);
    taxonomies.push({ level: evidence ? LEVELS[evidence.level] ?? 'info' : 'info', namespace: 'oas', predicate: catalog.find(row.engine)?.label ?? row.engine, value: inertLine(row.summary).slice(0, 500) });
  }
  const artifacts: BuiltReport['artifacts'] = [];
  const seen = new Set([result.observable.toLowerCase()]);
  const add = (observable: Observable, by: string) => {
    const dataType = cortexTypeOf(observable.type);
    const key = observable.value.toLowerCase();
    if (!dataType || seen.has(key) || artifacts.length >= MAX_ARTIFACTS) return;
    seen.add(key);
    artifacts.push({ dataType, data: observable.value, tlp: job.tlp, tags: ['oas'], message: `found by ${by}` });
  };
  if (typeof result.reversed_ip === 'string' && result.reversed_ip !== '') add({ value: result.reversed_ip, type: result.reversed_ip.includes(':') ? 'IPv6' : 'IPv4' }, 'the resolution of the domain');
  for (const key of ran) {
    const label = catalog.find(key)?.label ?? key;
    for (const text of strings(result[key])) for (const observable of extractObservables(text)) add(observable, label);
  }
  let full: Record<string, unknown>;
  if (job.analyzer.engine) {
    const value = result[ran[0] ?? ''];
    full = typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { result: value ?? null };
  } else {
    full = {
      observable: result.observable, type: result.type, verdict: judged.verdict, reasons: judged.reasons,
      engines: Object.fromEntries(ran.map((key) => [key, result[key] ?? null])),
      ...(result.errors ? { errors: result.errors } : {}),
      withheld,
      ...(result.reversed_ip ? { reversed_ip: result.reversed_ip } : {}),
      ...(link ? { link } : {}),
    };
  }
  return { success: true, errorMessage: '', taxonomies, full, artifacts };
}

/** Every string inside a value (an engine's answer), at most 2 000. */
function strings(value: unknown, out: string[] = [], depth = 0): string[] {
  if (out.length >= 2000 || depth > 8) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out, depth + 1);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) strings(item, out, depth + 1);
  return out;
}

