/**
 * One observable through its selected engines, concurrently: the pivot (IP-only "reversed IP"
 * engines run on the first address that resolving a domain/URL gave, the pivot engine's answer)
 * and the dependencies (engines that need others' results run after them; a failure of what an
 * engine depended on is that engine's error, never a "no data"). Each call is the cached call of
 * src/runner/call.ts.
 */
import type { EngineDefinition } from '../engine/contract.js';
import { missingCredentials } from '../engine/context.js';
import { hostOf, ipVersion, isPrivateIp } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import type { EngineCaller, Outcome } from './call.js';
import type { ObservableResult } from './result.js';
import type { AnalyzeOptions, Selection, WaitEvent } from './types.js';

/** Where an engine runs for an observable: a target, nowhere (null), or not knowable (error). */
type Target = { target: Observable | null } | { error: string };

/** The result of one observable, its keys in the selection's order. */
export async function analyzeObservable(
caller: EngineCaller,
/** All registered engines (dependencies not selected). */
catalog: readonly EngineDefinition[],
/** The engine whose answer is the resolution of a domain/URL. */
pivot: EngineDefinition | undefined,
observable: Observable,
  selections: readonly Selection[],
  options: AnalyzeOptions,
  onKeyDone: (key: string) => void,
  onWait: (reason: string, wait: WaitEvent) => void,
): Promise<ObservableResult> {
  const result: ObservableResult = { observable: observable.value, type: observable.type, reversed_success: false };
  for (const { key } of selections) result[key] = null;
  const selected = uniqueEngines(selections.map((s) => s.engine));
  const call = (engine: EngineDefinition, target: Observable, dependencies?: Record<string, unknown>, cacheable = true) =>
    caller.call(engine, target, { ignoreCache: options.ignoreCache ?? false, signal: options.signal, dependencies, onWait, cacheable, share: options.share });

  // The address IP-only engines run on: the URL's IP host, else the pivot engine's first answer.
  const host = hostOf(observable);
  const hostIsIp = host !== null && ipVersion(host) !== 0;
  const needsPivot = (observable.type === 'FQDN' || observable.type === 'URL') && !hostIsIp;
  const pivotSelected = selected.find((e) => e.pivot && appliesTo(e, observable));
  const wantsReversed = selected.some((e) => e.reversedIp && !appliesTo(e, observable));

  const outcomes = new Map<string, Promise<Outcome>>();
  const runDirect = (engine: EngineDefinition) => {
    if (!outcomes.has(engine.id)) outcomes.set(engine.id, call(engine, observable));
    return outcomes.get(engine.id)!;
  };

  let pivotOutcome: Promise<Outcome> | undefined;
  if (pivotSelected) pivotOutcome = runDirect(pivotSelected);
  else if (wantsReversed && needsPivot && pivot) pivotOutcome = call(pivot, observable);

  // The resolved IP, or why there is none: a failed resolution is not "no address" (the
  // engines waiting for it report the failure instead of an empty answer).
  const reversedTarget: Promise<Target> = (async () => {
    if (!wantsReversed) return { target: null };
    let ip: string | undefined;
    if (hostIsIp) ip = host!;
    else if (needsPivot && pivotOutcome) {
      const outcome = await pivotOutcome;
      if (!outcome.ok) return { error: `${pivot?.id ?? 'the resolution'} failed: ${outcome.error}` };
      ip = firstAddress(outcome.value);
    }
    if (!ip) return { target: null };
    return { target: { value: ip, type: ipVersion(ip) === 6 ? 'IPv6' : 'IPv4' } };
  })();

  /** Where an engine runs for this observable: the observable itself, the reversed IP, or nowhere. */
  const targetOf = async (engine: EngineDefinition): Promise<Target> => {
    if (appliesTo(engine, observable)) return { target: observable };
    if (!engine.reversedIp) return { target: null };
    const reversed = await reversedTarget;
    if ('error' in reversed) return reversed;
    return { target: reversed.target && appliesTo(engine, reversed.target) ? reversed.target : null };
  };

  const outcomeOf = async (engine: EngineDefinition): Promise<Outcome> => {
    const existing = outcomes.get(engine.id);
    if (existing) return existing;
    const promise = (async (): Promise<Outcome> => {
      const where = await targetOf(engine);
      if ('error' in where) return { ok: false, error: where.error };
      const { target } = where;
      if (!target) return { ok: true, value: null };
      if (engine.dependsOn.length === 0) return call(engine, target);
      const inputs = await dependenciesOf(caller, catalog, engine, selected, outcomeOf);
      if (inputs === null) {
        return { ok: false, error: `needs one of ${engine.dependsOn.join(', ')}, and none of them can run` };
      }
      const { dependencies, failures } = inputs;
      // Nothing to work from because what it depends on failed: that failure, not "no data".
      if (failures.length > 0 && Object.keys(dependencies).length === 0) return { ok: false, error: failures.join('; ') };
      const outcome = await call(engine, target, dependencies, failures.length === 0);
      // A null that may come from a missing input is not an answer either.
      if (outcome.ok && outcome.value === null && failures.length > 0) return { ok: false, error: failures.join('; ') };
      return outcome;
    })();
    outcomes.set(engine.id, promise);
    return promise;
  };

  const errors: Record<string, string> = {};
  await Promise.all(selections.map(async ({ key, engine }) => {
    const outcome = await outcomeOf(engine);
    if (outcome.ok) result[key] = outcome.value ?? null;
    else errors[key] = outcome.error;
    onKeyDone(key);
  }));

  if (pivotOutcome) {
    const pivot = await pivotOutcome;
    result.reversed_success = pivot.ok && hasAnswer(pivot.value);
  }
  const reversed = await reversedTarget;
  const target = 'target' in reversed ? reversed.target : null;
  if (target && target.value !== observable.value && selected.some((e) => e.reversedIp && !appliesTo(e, observable))) {
    result.reversed_ip = target.value;
  }
  if (Object.keys(errors).length > 0) result.errors = errors;
  return reorder(result, selections);
}

/**
 * Results of the engines `engine` depends on, and which of them failed (`<id> failed: <why>`).
 * Selected ones are awaited; when none is selected the first one that can run (credentials
 * present) is run internally, unreported. Null when none can run.
 */
async function dependenciesOf(
caller: EngineCaller,
catalog: readonly EngineDefinition[],
engine: EngineDefinition,
  selected: readonly EngineDefinition[],
  outcomeOf: (e: EngineDefinition) => Promise<Outcome>,
): Promise<{ dependencies: Record<string, unknown>; failures: string[] } | null> {
  let providers = engine.dependsOn
    .map((id) => selected.find((e) => e.id === id))
    .filter((e): e is EngineDefinition => e !== undefined);
  if (providers.length === 0) {
    const fallback = engine.dependsOn
      .map((id) => catalog.find((e) => e.id === id))
      .find((e) => e !== undefined && missingCredentials(e, caller.settingsFor(e)).length === 0);
    if (!fallback) return null;
    providers = [fallback];
  }
  const dependencies: Record<string, unknown> = {};
  const failures: string[] = [];
  for (const provider of providers) {
    const outcome = await outcomeOf(provider);
    if (!outcome.ok) failures.push(`${provider.id} failed: ${outcome.error}`);
    else if (outcome.value !== null) dependencies[provider.id] = outcome.value;
  }
  return { dependencies, failures };
}

/** Whether an engine accepts this observable as it is. */
export function appliesTo(engine: EngineDefinition, observable: Observable): boolean {
  if (!engine.types.includes(observable.type)) return false;
  if ((observable.type === 'IPv4' || observable.type === 'IPv6') && !engine.acceptsPrivateIp && isPrivateIp(observable.value)) return false;
  return true;
}

function uniqueEngines(engines: readonly EngineDefinition[]): EngineDefinition[] {
  return [...new Map(engines.map((e) => [e.id, e])).values()];
}

/** First IP address in a pivot answer (`{reverse_dns: [...]}` or any object holding a list). */
function firstAddress(value: unknown): string | undefined {
  for (const list of Object.values(asRecord(value))) {
    if (Array.isArray(list)) {
      const ip = list.find((item): item is string => typeof item === 'string' && ipVersion(item) !== 0);
      if (ip) return ip;
    }
  }
  return undefined;
}

function hasAnswer(value: unknown): boolean {
  return Object.values(asRecord(value)).some((v) => Array.isArray(v) && v.length > 0);
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** observable, type, reversed_success, reversed_ip, then engine keys in selection order, then errors. */
function reorder(result: ObservableResult, selections: readonly Selection[]): ObservableResult {
  const out: ObservableResult = { observable: result.observable, type: result.type, reversed_success: result.reversed_success };
  if (result.reversed_ip !== undefined) out.reversed_ip = result.reversed_ip;
  for (const { key } of selections) out[key] = result[key];
  if (result.errors) out.errors = result.errors;
  return out;
}
