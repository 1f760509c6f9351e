/**
 * An analysis request checked and resolved: the observables its text holds and the engines it
 * selects, or an InputError the caller can act on.
 */
import { UnknownEngineError, UnknownEngineSetError, type Catalog } from '../engine/catalog.js';
import { extractObservables } from '../observables/extract.js';
import { MarkingError, parseMarking, type Marking } from '../marking/levels.js';
import type { Observable } from '../observables/types.js';
import type { AnalysisSource, FileExtraction } from '../files/types.js';
import type { CortexJobFields } from '../store/analysis-store.js';
import type { Selection } from '../runner/types.js';

/** Bad input from the caller (HTTP 400, CLI exit 2). */
export class InputError extends Error {
  override name = 'InputError';
}

/** More observables than `max_observables`: the analysis is refused whole (HTTP 413, CLI exit 2). */
export class TooManyObservablesError extends InputError {
  override name = 'TooManyObservablesError';
}

export interface AnalysisLimits {
  /** Most observables one analysis may hold (setting max_observables). */
  maxObservables?: number | undefined;
  /** The marking of a request that names none (settings default_tlp, default_pap). */
  defaultMarking?: Marking | undefined;
  /** The hosts a request's `callback_url` may name (setting callback_hosts); none: no callback_url accepted. */
  callbackHosts?: readonly string[] | undefined;
}

export interface AnalysisRequest {
  /** Text holding observables; may be empty when `files` are given. */
  text: string;
  /**
   * Files already read (issue 35: `oas analyze --file`, a multipart upload, MCP's `file_base64`):
   * their observables join the text's, after them, each with its `found_in`. Only
   * prepareAnalysisWith takes them.
   */
  files?: readonly FileExtraction[] | undefined;
  /** Engine ids or aliases, or `@name` for a set of them; undefined means the default engines. */
  engines?: readonly string[] | undefined;
  ignore_cache?: boolean | undefined;
  /** Analyse even what the allowlist covers (issue 38). */
  ignore_allowlist?: boolean | undefined;
  /**
   * Its TLP and PAP (issue 34), as written (`TLP:RED`, `red`); absent: the configuration's
   * `default_tlp` and `default_pap`. Another value is an InputError naming the allowed ones.
   */
  tlp?: string | undefined;
  pap?: string | undefined;
  /** Who starts it (a user's name; `cli` for local runs): set by the surface, never by its body. */
  started_by?: string | undefined;
  /** The watchlist it is a run of (issue 36, src/automation/): set by the watchlists, never by a body. */
  watchlist?: string | undefined;
  /** The Cortex job it is (issue 39, src/enrichment/cortex.ts): set by the Cortex API, never by a body. */
  cortex?: CortexJobFields | undefined;
  /**
   * Where its `analysis.completed` event also goes (issue 36): a URL on a host of the setting
   * `callback_hosts` (else an InputError naming the setting).
   */
  callback_url?: string | undefined;
}

export interface PreparedAnalysis {
  observables: Observable[];
  selections: Selection[];
  /** Its TLP and PAP: the request's, else the defaults. */
  marking: Marking;
  /** What the analysis keeps of its files: never their names or content. */
  source?: AnalysisSource;
  /** The request's callback_url, checked against the setting callback_hosts. */
  callback_url?: string;
}


/** Turns a request into observables and engine selections, or throws InputError. */
export function prepareAnalysis(catalog: Catalog, limits: AnalysisLimits, request: AnalysisRequest): PreparedAnalysis {
  const selections = selectionsOf(catalog, request);
  const marking = markingOf(limits, request);
  const callback = callbackOf(limits, request);
  if (request.files?.length) throw new Error('prepareAnalysis: a request with files is prepared by prepareAnalysisWith');
  return { observables: checkedObservables(limits, extractObservables(request.text), request), selections, marking, ...callback };
}

/**
 * The same, the text's observables extracted by `extract` (the server's: a worker thread for a
 * large text, src/observables/extract-pool.ts). The engines are checked first: a request that
 * names an unknown one costs no extraction.
 */
export async function prepareAnalysisWith(
  catalog: Catalog,
  limits: AnalysisLimits,
  request: AnalysisRequest,
  extract: (text: string) => Promise<Observable[]>,
): Promise<PreparedAnalysis> {
  const selections = selectionsOf(catalog, request);
  const marking = markingOf(limits, request);
  const callback = callbackOf(limits, request);
  const fromText = request.text ? await extract(request.text) : [];
  if (!request.files?.length) return { observables: checkedObservables(limits, fromText, request), selections, marking, ...callback };
  // Start-up cost: the files' code is loaded only for a request that has some.
  const { withFileObservables, sourceOf } = await import('../files/merge.js');
  return { observables: checkedObservables(limits, withFileObservables(fromText, request.files), request), selections, marking, source: sourceOf(request.files), ...callback };
}


/** The request's callback_url, when it has one on a host of callback_hosts; else an InputError naming the setting. */
function callbackOf(limits: AnalysisLimits, request: AnalysisRequest): { callback_url?: string } {
  if (request.callback_url === undefined) return {};
  const problem = callbackProblem(request.callback_url, limits.callbackHosts ?? []);
  if (problem) throw new InputError(problem);
  return { callback_url: request.callback_url.trim() };
}

/** The request's TLP and PAP, else the defaults (TLP:AMBER, PAP:GREEN unless configured). */
function markingOf(limits: AnalysisLimits, request: AnalysisRequest): Marking {
  const defaults = limits.defaultMarking ?? { tlp: 'AMBER', pap: 'GREEN' };
  try {
    const given = parseMarking(request);
    return { tlp: given.tlp ?? defaults.tlp, pap: given.pap ?? defaults.pap };
  } catch (error) {
    if (error instanceof MarkingError) throw new InputError(error.message);
    throw error;
  }
}

function selectionsOf(catalog: Catalog, request: AnalysisRequest): Selection[] {
  const names = request.engines ?? catalog.defaults().map((e) => e.id);
  if (names.length === 0) throw new InputError('no engine selected: give at least one engine');
  let selections: Selection[];
  try {
    selections = selectEngines(catalog, names);
  } catch (error) {
    if (error instanceof UnknownEngineError || error instanceof UnknownEngineSetError) throw new InputError(error.message);
    throw error;
  }
  if (selections.length === 0) throw new InputError('no engine selected: give at least one engine');
  return selections;
}

function checkedObservables(limits: AnalysisLimits, observables: Observable[], request?: AnalysisRequest): Observable[] {
  if (observables.length === 0) {
    if (request?.files?.length) throw new InputError(`no observable found in ${request.files.map((f) => f.file.name).join(', ')}${request.text ? ' or the text' : ''}: it holds no domain, IP address, URL, hash, e-mail address or browser extension id`);
    throw new InputError('no observable found in the text: give a domain, IP address, URL, hash (MD5, SHA1, SHA256), e-mail address or browser extension id');
  }
  const max = limits.maxObservables;
  if (max !== undefined && observables.length > max) {
    throw new TooManyObservablesError(`too many observables: the text holds ${observables.length}, more than max_observables (${max}); split it into smaller analyses or raise max_observables`);
  }
  return observables;
}

/**
 * Unknown engine names an error names, each with its did-you-mean (an edit distance to every name
 * of the catalog): a list of 10 000 names, mostly unknown, costs linear time to check and the
 * suggestions of these few only (issue 33: a did-you-mean per unknown name took seconds of the
 * server's only thread).
 */
export const MAX_UNKNOWN_NAMED = 5;

/**
 * The catalog's selection of `names`; past MAX_UNKNOWN_NAMED distinct unknown names, the error
 * names the first of them and says how many more there are.
 */
function selectEngines(catalog: Catalog, names: readonly string[]): Selection[] {
  // Each name once, trimmed (a list of 10 000 names may hold only a few); an unknown `@set` is
  // the catalog's error, naming every one of them.
  const distinct = new Set<string>();
  const sets: string[] = [];
  for (const raw of new Set(names)) {
    const name = raw.trim();
    if (!name || distinct.has(name)) continue;
    distinct.add(name);
    if (name.startsWith('@')) sets.push(name);
  }
  if (sets.length > 0) catalog.expandSets(sets);
  // The names as the catalog's selection keeps them (sets expanded): the selection below goes
  // over these few, not over every name of the list again.
  const keys = new Set<string>();
  const unknown = new Set<string>();
  const visit = (key: string) => {
    keys.add(key);
    if (!catalog.find(key)) unknown.add(key);
  };
  for (const name of distinct) {
    if (!name.startsWith('@')) visit(name);
    else for (const member of catalog.expandSets([name])) if (member.trim()) visit(member.trim());
  }
  if (unknown.size <= MAX_UNKNOWN_NAMED) return catalog.select([...keys]);
  const shown = [...unknown].slice(0, MAX_UNKNOWN_NAMED);
  const error = new UnknownEngineError(shown, catalog.engines.map((e) => e.id), catalog.engines);
  const named = `unknown engines: ${shown.join(', ')}`;
  const more = ` and ${unknown.size - shown.length} more`;
  throw new InputError(error.message.startsWith(named) ? named + more + error.message.slice(named.length) : `${unknown.size} unknown engines, the first ${shown.length}: ${error.message}`);
}

/*
 * An analysis request's `callback_url` (issue 36: `POST /api/analyze` and MCP's `analyze`): the
 * URL its `analysis.completed` event is also delivered to, signed. Only hosts the team listed in
 * the setting `callback_hosts` are accepted, so that a caller cannot make the server post to a
 * host of its choosing (an internal service, a metadata address); anything else is an InputError
 * (HTTP 400) naming the setting. (Here rather than in a module of its own: `oas analyze` loads
 * this one, and must not load more.)
 */

/** Longest callback_url accepted. */
export const MAX_CALLBACK_URL = 2000;

/** `name` or `name:port` of the setting, against a URL's host and port (the scheme's default when none). */
function callbackHostMatches(entry: string, url: URL): boolean {
  const bracketed = /^(\[[^\]]+\])(?::(\d+))?$/.exec(entry.trim());
  const plain = /^([^:]+)(?::(\d+))?$/.exec(entry.trim());
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : plain ? [plain[1]!, plain[2]] : [entry, undefined];
  if (host.toLowerCase() !== url.hostname.toLowerCase()) return false;
  return port === undefined || Number(port) === Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

/** Why `value` may not be a callback_url under `hosts` (setting callback_hosts), or undefined when it may. */
export function callbackProblem(value: unknown, hosts: readonly string[]): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return '"callback_url" must be a URL string such as https://soar.example.org/hooks/oas';
  if (hosts.length === 0) return '"callback_url" is not accepted here: the setting callback_hosts lists no host a callback may go to';
  if (value.length > MAX_CALLBACK_URL) return `"callback_url" is longer than ${MAX_CALLBACK_URL} characters`;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return '"callback_url" must be an absolute http:// or https:// URL';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return '"callback_url" must be an absolute http:// or https:// URL';
  if (url.username || url.password) return '"callback_url" must not hold a user name or password';
  if (!hosts.some((entry) => callbackHostMatches(entry, url))) return `"callback_url": its host ${url.host} is not one of the setting callback_hosts`;
  return undefined;
}
