/**
 * One engine checked with one call to its upstream (issue 40): its `check` (src/engine/contract.ts)
 * probes a status or account endpoint, or its lookup runs on a harmless value (src/doctor/harmless.ts),
 * through the shared HTTP client with the engine's settings, proxy and timeout as an analysis makes
 * it, but with no retry, no cache (the answer is kept nowhere: not in the results cache, not in the
 * engine's store) and no analysis. A second request is refused rather than made. A failure reads as
 * in an analysis (src/runner/call.ts): the engines' words and what to fix, no secret.
 */
import type { EngineContext, EngineDefinition, EngineStore, HttpClient } from '../engine/contract.js';
import { EngineError } from '../engine/contract.js';
import { createEngineContext, missingCredentials, resolveSettings, secretsOf } from '../engine/context.js';
import type { HttpTransport } from '../http/client.js';
import { describeFailure, notConfigured } from '../runner/call.js';
import { harmlessObservable } from './harmless.js';
import type { DoctorCheck } from './report.js';

export interface EngineCheckServices {
  transport: HttpTransport;
  dnsServers: readonly string[];
  dataDir: string;
  /** `engines.<id>` of the configuration. */
  engineSettings: Readonly<Record<string, Record<string, unknown>>>;
  /** `engine_timeout_ms`, which overrides every engine's own. */
  timeoutMs: number | undefined;
}

export interface EngineCheckOutcome {
  check: DoctorCheck;
  /** Requests it made: 0 or 1. */
  calls: number;
}

/** Whether the engine can run as configured (every required credential set). */
export function usable(engine: EngineDefinition, services: Pick<EngineCheckServices, 'engineSettings' | 'timeoutMs'>): boolean {
  return missingCredentials(engine, resolveSettings(engine, services.engineSettings[engine.id], services.timeoutMs)).length === 0;
}

export async function checkEngine(engine: EngineDefinition, services: EngineCheckServices): Promise<EngineCheckOutcome> {
  const result = (ok: boolean, message: string, calls = 0): EngineCheckOutcome => ({
    check: { kind: 'engine', target: engine.id, service: engine.service, ok, message },
    calls,
  });
  // One call: no retry (a 5xx or a reset is the answer).
  const settings = { ...resolveSettings(engine, services.engineSettings[engine.id], services.timeoutMs), retries: 0 };
  const missing = missingCredentials(engine, settings);
  if (missing.length > 0) return result(false, notConfigured(engine, missing));
  if (engine.check === 'none') return result(true, 'calls no upstream: nothing to check');
  const observable = harmlessObservable(engine);
  const probe = typeof engine.check === 'object' && 'probe' in engine.check ? engine.check.probe : undefined;
  if (!probe && !observable) return result(false, 'no harmless value to look up: its engine file declares no check');
  const secrets = secretsOf(engine, settings);
  const counter = { calls: 0 };
  const { ctx, race, dispose } = createEngineContext(engine, settings, {
    transport: services.transport,
    dnsServers: services.dnsServers,
    dataDir: services.dataDir,
    storeFor: () => memoryStore(),
  }, { secrets });
  const checked: EngineContext = { ...ctx, http: oneCall(ctx.http, counter) };
  try {
    const answer = await race(probe ? probe(checked) : engine.run(observable!, checked));
    const said = typeof answer === 'string' && probe ? ctx.http.redact(answer).split('\n')[0]!.slice(0, 200) : 'answered';
    return result(true, said, counter.calls);
  } catch (error) {
    return result(false, describeFailure(error, secrets, engine, settings), counter.calls);
  } finally {
    dispose();
  }
}

/** The engine's HTTP client, refusing any request after the first. */
function oneCall(http: HttpClient, counter: { calls: number }): HttpClient {
  const spend = (): void => {
    if (counter.calls >= 1) throw new EngineError('the check would make a second request: its engine file should declare a check of one call');
    counter.calls++;
  };
  return {
    redact: (text) => http.redact(text),
    withSecrets: (extra) => oneCall(http.withSecrets(extra), counter),
    request: async (url, options) => {
      spend();
      return http.request(url, options);
    },
    json: async (url, schema, options) => {
      spend();
      return http.json(url, schema, options);
    },
    text: async (url, options) => {
      spend();
      return http.text(url, options);
    },
  };
}

/** An engine store that starts empty and is dropped with the check: nothing it learns is kept. */
function memoryStore(): EngineStore {
  const values = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => values.get(key) as T | undefined,
    set: async (key, value) => {
      values.set(key, value);
    },
  };
}
