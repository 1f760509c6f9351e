/**
 * The engine runner shared by the CLI and the server: the scheduling of an analysis's
 * observables and its progress. One observable's engines, with the pivot and the dependencies, are
 * src/runner/pivot.ts; one engine call, cached and limited, is src/runner/call.ts.
 *
 * Per observable, every applicable engine runs concurrently. IP-only "reversed IP" engines run on
 * the first address that resolving a domain/URL gave (the pivot engine's answer); engines that
 * depend on others run after them. Calls are bounded overall and per engine, each has a deadline,
 * results are cached per (engine, settings that change its answers, observable), identical calls
 * in flight are shared, and an engine failure becomes a one-line entry in `errors`: it never
 * fails the analysis. A failure of what an engine depended on (the resolution of the pivot, a
 * dependency engine) is that engine's error too, never a cached "no data".
 */
import type { EngineDefinition, EngineSettings } from '../engine/contract.js';
import type { Observable } from '../observables/types.js';
import { CallerState, EngineCaller, type CallerOptions } from './call.js';
import { analyzeObservable } from './pivot.js';
import type { AnalyzeOptions, Progress, Selection, WaitEvent } from './types.js';
import type { ObservableResult } from './result.js';

export interface RunnerOptions extends CallerOptions {
  /** All registered engines (to find the pivot engine and dependencies not selected). */
  catalog: readonly EngineDefinition[];
}

/** What a new configuration may change in a runner (`withSettings`, on a reload). */
export type RunnerSettings = Pick<RunnerOptions, 'catalog' | 'engineSettings' | 'timeoutMs' | 'concurrency' | 'cacheTtlSeconds' | 'internalScope' | 'defaultMarking'>;

export class EngineRunner {
  private readonly caller: EngineCaller;
  private readonly pivot: EngineDefinition | undefined;

  constructor(private readonly options: RunnerOptions, state?: CallerState) {
    this.caller = new EngineCaller(options, state);
    this.pivot = options.catalog.find((e) => e.pivot);
  }

  /**
   * A runner of the same process with other settings (a configuration reloaded): the analyses
   * given to it run with them, while those still running on this one finish with this one's. Both
   * share the cache writes, and the limits and quotas whose values did not change (CallerState).
   */
  withSettings(settings: RunnerSettings): EngineRunner {
    return new EngineRunner({ ...this.options, ...settings }, this.caller.state);
  }

  settingsFor(engine: EngineDefinition): EngineSettings {
    return this.caller.settingsFor(engine);
  }

  async analyze(observables: readonly Observable[], selections: readonly Selection[], options: AnalyzeOptions = {}): Promise<ObservableResult[]> {
    const progress: Progress = { done: 0, total: observables.length * selections.length };
    const report = () => options.onProgress?.({ ...progress });
    report();
    const onKeyDone = (key: string) => {
      progress.done++;
      options.onProgress?.({ ...progress, finished: key });
    };
    const onWait = (waiting: string, wait: WaitEvent) => {
      options.onProgress?.({ ...progress, waiting, wait });
    };
    return Promise.all(observables.map(async (observable, index) => {
      const result = await analyzeObservable(this.caller, this.options.catalog, this.pivot, observable, selections, options, onKeyDone, onWait);
      options.onObservable?.(index, result);
      return result;
    }));
  }

  /** Resolves once every answer given so far is in the cache (before closing the storage). */
  flush(): Promise<void> {
    return this.caller.flush();
  }
}
