/**
 * For the "minimal and degenerate answers" suites (issue 26): a loopback upstream whose one route
 * answers whatever JSON a test sets, and an engine harness pointed at it, so a suite keeps only
 * its answers and what it expects of them.
 */
import type { EngineDefinition } from '../../src/engine/contract.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { harnessOnFake } from './engine.js';
import type { KeyWatch } from './key-watch.js';

export interface AnsweringUpstream<R> {
  /** The fake (set once the suite's `before` has run). */
  readonly fake: FakeHttpServer;
  /** Answers `body` (as JSON) from now on and runs the engine on the suite's observable. */
  run(body: unknown): Promise<R>;
}

/**
 * Before the suite, a fake answering `route` (e.g. `GET /lenient/*`) and a harness whose base_url
 * is `<fake>/lenient`, with the `key` as api_key when given, then `settings`; its results and
 * errors recorded by `watch` when given. After the suite, both closed.
 */
export function answeringUpstream<R = unknown>(
  engine: EngineDefinition,
  route: string,
  [value, type]: [string, ObservableType],
  options: { key?: string; settings?: Record<string, unknown>; watch?: KeyWatch } = {},
): AnsweringUpstream<R> {
  let answer: unknown = {};
  const suite = harnessOnFake(
    engine,
    () => startFakeHttp({ [route]: () => reply.json(answer) }),
    (url) => ({ base_url: `${url}/lenient`, ...(options.key === undefined ? {} : { api_key: options.key }), ...options.settings }),
    options.watch ? (harness) => options.watch!.watch(harness) : undefined,
  );
  return {
    get fake() {
      return suite.fake;
    },
    async run(body) {
      answer = body;
      return (await suite.harness.run(value, type)) as R;
    },
  };
}
