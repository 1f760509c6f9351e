/**
 * One observable through its selected engines, concurrently: the pivot (IP-only "reversed IP"
 * engines run on the first address that resolving a domain/URL gave, the pivot engine's answer)
 * and the dependencies (engines that need others' results run after them; a failure of what an
 * engine depended on is that engine's error, never a "no data"). Each call is the cached call of
 * src/runner/call.ts.
 *
 * What may leave (issue 34): before each call, the engine's TLP/PAP ceilings are held against the
 * target's marking (the analysis's, or RED/RED for the team's own networks and domains). A withheld
 * engine is not called; only the cache may answer for it. A domain whose resolution is withheld
 * withholds the IP-only engines that would have run on its address; an engine whose dependencies
 * are all withheld is withheld too. Withheld is not failed: the key is null, the reason in
 * `withheld`.
 */
import type { EngineDefinition } from '../engine/contract.js';
import { missingCredentials } from '../engine/context.js';
import { hostOf, ipVersion, isPrivateIp } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import { observableMarking } from '../marking/policy.js';
import type { CallScope, EngineCaller, Outcome } from './call.js';
import type { ObservableResult } from './result.js';
import type { AnalyzeOptions, Selection, WaitEvent } from './types.js';

/**
 * Where an engine runs for an observable: a target, nowhere (null), not knowable (error), or not
 * to be known (the resolution was withheld: why).
 */
type Target = { target: Observable | null } | { error: string } | { withheld: string };

/** Where no engine runs on a reversed IP. */
const NOWHERE: Promise<Target> = Promise.resolve({ target: null });

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
  if (observable.found_in) result.found_in = observable.found_in;
  for (const { key } of selections) result[key] = null;
  // On the allowlist (issue 38): no engine is sent it, each says why; its verdict is clean.
  const allowed = options.ignoreAllowlist ? undefined : options.allowlist?.match(observable);
  if (allowed) {
    result.allowlisted = { value: allowed.value, reason: allowed.reason, by: allowed.by, ...(allowed.expires ? { expires: allowed.expires } : {}) };
    const why = `allowlisted: ${allowed.reason}`;
    result.withheld = Object.fromEntries(selections.map(({ key }) => [key, why]));
    for (const { key } of selections) onKeyDone(key);
    return reorder(result, selections);
  }
  const selected = uniqueEngines(selections);
  // One scope for every call of this observable that has no dependencies (most of them).
  const scope: CallScope = { ignoreCache: options.ignoreCache ?? false, signal: options.signal, dependencies: undefined, onWait, cacheable: true, share: options.share };
  // The marking of what an engine is sent: the observable's (found once), or its address's.
  const analysisMarking = options.marking ?? caller.defaultMarking;
  const own = observableMarking(analysisMarking, observable, caller.internalScope);
  let reversedMarking: { target: Observable; marking: typeof own } | undefined;
  const markingOf = (target: Observable) => {
    if (target === observable) return own;
    if (reversedMarking?.target !== target) reversedMarking = { target, marking: observableMarking(analysisMarking, target, caller.internalScope) };
    return reversedMarking.marking;
  };
  const call = (engine: EngineDefinition, target: Observable, dependencies?: Record<string, unknown>, cacheable = true) => {
    const { marking, internal } = markingOf(target);
    const withheld = caller.withholding(engine, marking, internal);
    return caller.call(engine, target, dependencies === undefined && cacheable && withheld === undefined ? scope : { ...scope, dependencies, cacheable, withheld });
  };
  // Whether the observable is a private address, found once (for every engine that asks).
  const applies = applicability(observable);

  // The address IP-only engines run on: the URL's IP host, else the pivot engine's first answer.
  const host = hostOf(observable);
  const hostIsIp = host !== null && ipVersion(host) !== 0;
  const needsPivot = (observable.type === 'FQDN' || observable.type === 'URL') && !hostIsIp;
  const pivotSelected = selected.find((e) => e.pivot && applies(e));
  const wantsReversed = selected.some((e) => e.reversedIp && !applies(e));

  const outcomes = new Map<string, Promise<Outcome>>();
  const runDirect = (engine: EngineDefinition) => {
    let outcome = outcomes.get(engine.id);
    if (!outcome) {
      outcome = call(engine, observable);
      outcomes.set(engine.id, outcome);
    }
    return outcome;
  };

  let pivotOutcome: Promise<Outcome> | undefined;
  if (pivotSelected) pivotOutcome = runDirect(pivotSelected);
  else if (wantsReversed && needsPivot && pivot) pivotOutcome = call(pivot, observable);

  // The resolved IP, or why there is none: a failed resolution is not "no address" (the
  // engines waiting for it report the failure instead of an empty answer).
  const reversedTarget: Promise<Target> = !wantsReversed ? NOWHERE : (async () => {
    let ip: string | undefined;
    if (hostIsIp) ip = host!;
    else if (needsPivot && pivotOutcome) {
      const outcome = await pivotOutcome;
      if (!outcome.ok && outcome.withheld) return { withheld: `${host} was not resolved: ${outcome.error.replace(/^not sent: /, '')}` };
      if (!outcome.ok) return { error: `${pivot?.id ?? 'the resolution'} failed: ${outcome.error}` };
      ip = firstAddress(outcome.value);
    }
    if (!ip) return { target: null };
    return { target: { value: ip, type: ipVersion(ip) === 6 ? 'IPv6' : 'IPv4' } };
  })();

  /** An engine that runs on the reversed IP, if any: there, nowhere, or the resolution's failure. */
  let appliesToReversed: ((engine: EngineDefinition) => boolean) | undefined;
  const onReversed = async (engine: EngineDefinition): Promise<Target> => {
    const reversed = await reversedTarget;
    if (!('target' in reversed) || !reversed.target) return reversed;
    return { target: (appliesToReversed ??= applicability(reversed.target))(engine) ? reversed.target : null };
  };

  /**
   * The engine on `target` (the observable or the reversed IP), after what it depends on: those
   * are looked for once the engine's own outcome is known (`outcomeOf`), in the next microtask.
   */
  const callOn = (engine: EngineDefinition, target: Observable): Promise<Outcome> =>
    engine.dependsOn.length === 0 ? call(engine, target) : NO_ANSWER.then(() => callAfterDependencies(engine, target));

  const callAfterDependencies = async (engine: EngineDefinition, target: Observable): Promise<Outcome> => {
    const inputs = await dependenciesOf(caller, catalog, engine, selected, outcomeOf);
    if (inputs === null) {
      return { ok: false, error: `needs one of ${engine.dependsOn.join(', ')}, and none of them can run` };
    }
    const { dependencies, failures, withheld } = inputs;
    // What it works from may not be asked: it is withheld too, saying which.
    if (withheld.length > 0 && failures.length === 0 && Object.keys(dependencies).length === 0) {
      return { ok: false, withheld: true, error: `not sent: it works from ${withheld.map((w) => `${w.id}, which was withheld (${w.reason.replace(/^not sent: /, '')})`).join('; and from ')}` };
    }
    // Nothing to work from because what it depends on failed: that failure, not "no data".
    if (failures.length > 0 && Object.keys(dependencies).length === 0) return { ok: false, error: failures.join('; ') };
    const outcome = await call(engine, target, dependencies, failures.length === 0);
    // A null that may come from a missing input is not an answer either.
    if (outcome.ok && outcome.value === null && failures.length > 0) return { ok: false, error: failures.join('; ') };
    return outcome;
  };

  const outcomeOf = (engine: EngineDefinition): Promise<Outcome> => {
    const existing = outcomes.get(engine.id);
    if (existing) return existing;
    let promise: Promise<Outcome>;
    if (applies(engine)) promise = callOn(engine, observable);
    else if (!engine.reversedIp) promise = NO_ANSWER;
    else {
      promise = onReversed(engine).then((where): Outcome | Promise<Outcome> => {
        if ('withheld' in where) return { ok: false, withheld: true, error: `not sent: ${engine.label} runs on the address ${observable.value} resolves to, and ${where.withheld}` };
        if ('error' in where) return { ok: false, error: where.error };
        return where.target ? callOn(engine, where.target) : NO_ANSWER;
      });
    }
    outcomes.set(engine.id, promise);
    return promise;
  };

  const errors: Record<string, string> = {};
  const withheld: Record<string, string> = {};
  const done: Promise<void>[] = [];
  for (const { key, engine } of selections) {
    done.push(outcomeOf(engine).then((outcome) => {
      if (outcome.ok) result[key] = outcome.value ?? null;
      else if (outcome.withheld) withheld[key] = outcome.error;
      else errors[key] = outcome.error;
      onKeyDone(key);
    }));
  }
  await Promise.all(done);

  if (pivotOutcome) {
    const pivot = await pivotOutcome;
    result.reversed_success = pivot.ok && hasAnswer(pivot.value);
  }
  if (wantsReversed) {
    const reversed = await reversedTarget;
    const target = 'target' in reversed ? reversed.target : null;
    if (target && target.value !== observable.value) result.reversed_ip = target.value;
  }
  if (Object.keys(errors).length > 0) result.errors = errors;
  if (Object.keys(withheld).length > 0) result.withheld = withheld;
  return reorder(result, selections);
}

/** An engine that does not run here: no answer. */
const NO_ANSWER: Promise<Outcome> = Promise.resolve({ ok: true, value: null });

/** `appliesTo` for one observable, its private-address check made once. */
function applicability(observable: Observable): (engine: EngineDefinition) => boolean {
  const isIp = observable.type === 'IPv4' || observable.type === 'IPv6';
  let isPrivate: boolean | undefined;
  return (engine) => {
    if (!engine.types.includes(observable.type)) return false;
    if (isIp && !engine.acceptsPrivateIp) return !(isPrivate ??= isPrivateIp(observable.value));
    return true;
  };
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
): Promise<{ dependencies: Record<string, unknown>; failures: string[]; withheld: { id: string; reason: string }[] } | null> {
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
  const withheld: { id: string; reason: string }[] = [];
  for (const provider of providers) {
    const outcome = await outcomeOf(provider);
    if (!outcome.ok && outcome.withheld) withheld.push({ id: provider.id, reason: outcome.error });
    else if (!outcome.ok) failures.push(`${provider.id} failed: ${outcome.error}`);
    else if (outcome.value !== null) dependencies[provider.id] = outcome.value;
  }
  return { dependencies, failures, withheld };
}

/** Whether an engine accepts this observable as it is. */
export function appliesTo(engine: EngineDefinition, observable: Observable): boolean {
  if (!engine.types.includes(observable.type)) return false;
  if ((observable.type === 'IPv4' || observable.type === 'IPv6') && !engine.acceptsPrivateIp && isPrivateIp(observable.value)) return false;
  return true;
}

/** The selected engines, each once (in the order of their first selection). */
function uniqueEngines(selections: readonly Selection[]): EngineDefinition[] {
  const engines: EngineDefinition[] = [];
  for (const { engine } of selections) if (!engines.some((e) => e.id === engine.id)) engines.push(engine);
  return engines;
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

/** observable, type, found_in, reversed_success, reversed_ip, then engine keys in selection order, then errors. */
function reorder(result: ObservableResult, selections: readonly Selection[]): ObservableResult {
  const out: ObservableResult = result.found_in
    ? { observable: result.observable, type: result.type, found_in: result.found_in, reversed_success: result.reversed_success }
    : { observable: result.observable, type: result.type, reversed_success: result.reversed_success };
  if (result.reversed_ip !== undefined) out.reversed_ip = result.reversed_ip;
  for (const { key } of selections) out[key] = result[key];
  if (result.errors) out.errors = result.errors;
  if (result.withheld) out.withheld = result.withheld;
  if (result.allowlisted) out.allowlisted = result.allowlisted;
  if (result.mark) out.mark = result.mark;
  if (result.seen !== undefined) out.seen = result.seen;
  return out;
}
